"""REST routes of the quarantine: held tool definitions, listed with a read key and decided with a key
that has the ``approve`` scope. Each decision is one audit record; an approval re-indexes the tool."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from routes.api_app import ERROR_RESPONSES, need, ops
from services.access.keys import Principal
from services.api.operations import Operations
from services.write import quarantine
from tool_selector.trust.models import QuarantineEntry

Ops = Annotated[Operations, Depends(ops)]
Reader = Annotated[Principal, Depends(need("read"))]
Approver = Annotated[Principal, Depends(need("approve"))]

router = APIRouter(prefix="/api/v1/quarantine", tags=["quarantine"], responses=ERROR_RESPONSES)


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str = Field(default="", max_length=500, description="why, for the audit log")


@router.get("")
def list_quarantine(
    o: Ops,
    _: Reader,
    everything: Annotated[bool, Query(alias="all", description="also decided and settled entries")] = False,
    server: Annotated[str | None, Query(max_length=300)] = None,
) -> list[QuarantineEntry]:
    """The held tools: what changed, who found it, and the scanner's reasons."""
    return quarantine.list_entries(o.container.store, everything=everything, server=server)


@router.get("/{entry_id}")
def show_quarantine(entry_id: str, o: Ops, _: Reader) -> quarantine.QuarantineDetail:
    """One held definition beside the approved one, as a unified diff (invisible characters escaped)."""
    return quarantine.show_entry(o.container.store, entry_id)


@router.post("/{entry_id}/approve")
def approve(entry_id: str, o: Ops, who: Approver, body: Decision | None = None) -> quarantine.Decided:
    """Pin the held definition; the tool is indexed and callable again."""
    note = body.note if body is not None else ""
    return o.write(
        "quarantine approval",
        lambda: quarantine.approve_entry(o.container, entry_id, actor=who.actor, note=note),
        who,
    )


@router.post("/{entry_id}/reject")
def reject(entry_id: str, o: Ops, who: Approver, body: Decision | None = None) -> quarantine.Decided:
    """Refuse the held definition; the tool stays held while its server serves it."""
    note = body.note if body is not None else ""
    return o.write(
        "quarantine rejection",
        lambda: quarantine.reject_entry(o.container, entry_id, actor=who.actor, note=note),
        who,
    )
