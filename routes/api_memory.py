"""REST routes of the gateway's memory of confirmed choices (services/gateway/memory/recording.py), all
under the ``admin`` scope: what it remembers about how agents were served is the operator's to see and erase.
Forgetting and clearing are audited; nothing is sent anywhere."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from routes.api_app import ERROR_RESPONSES, need, ops
from services.access.keys import Principal
from services.api.operations import Operations
from services.write import memory

Ops = Annotated[Operations, Depends(ops)]
Admin = Annotated[Principal, Depends(need("admin"))]

router = APIRouter(prefix="/api/v1/memory", tags=["memory"], responses=ERROR_RESPONSES)


class Cleared(BaseModel):
    forgotten: int


@router.get("")
def list_memory(
    o: Ops, _: Admin, limit: Annotated[int | None, Query(ge=1, le=100_000)] = None
) -> list[memory.ChoiceView]:
    """The remembered choices, the latest confirmed first (the request's words only under keep_text)."""
    return memory.list_choices(o.container.store, limit=limit)


@router.get("/{choice_id}")
def show_memory(choice_id: int, o: Ops, _: Admin) -> memory.ChoiceView:
    """One remembered choice."""
    return memory.show_choice(o.container.store, choice_id)


@router.delete("/{choice_id}")
def forget_memory(choice_id: int, o: Ops, who: Admin) -> memory.ChoiceView:
    """Forget one remembered choice (audited as memory.forget)."""
    return o.write(
        "forgetting a remembered choice",
        lambda: memory.forget_choice(o.container.store, o.container.writer, choice_id, actor=who.actor),
        who,
    )


@router.delete("")
def clear_memory(o: Ops, who: Admin) -> Cleared:
    """Forget every remembered choice (audited as memory.clear)."""
    return o.write(
        "clearing the memory",
        lambda: Cleared(forgotten=memory.clear_choices(o.container.writer, actor=who.actor)),
        who,
    )
