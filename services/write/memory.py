"""``tool-selector memory`` and the REST routes under ``admin``: what the gateway remembers of the
choices agents confirmed (services/gateway/memory/recording.py), and forgetting it. Forgetting and
clearing are audited; nothing here leaves the machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from tool_selector.catalog import memory as rows
from tool_selector.catalog.store import CatalogStore
from tool_selector.core.errors import NotFoundError

if TYPE_CHECKING:
    from tool_selector.catalog.writer import CatalogWriter


class ChoiceView(BaseModel):
    id: int
    principal: str  # whose: "local" (the person over stdio) or "key:<id>" (an API key over HTTP)
    power: str
    tool: str
    confirmed: int
    refuted: int
    created_at: str
    confirmed_at: str
    request: str | None = None  # only under memory.keep_text
    request_hash: str
    model: str
    damaged: str | None = None  # what is wrong with a damaged row: the gateway does not use it
    repair: str | None = None  # the command that removes a damaged row


def _view(choice: rows.Choice) -> ChoiceView:
    return ChoiceView(
        id=choice.id,
        principal=choice.principal,
        power=choice.power,
        tool=choice.tool,
        confirmed=choice.confirmed,
        refuted=choice.refuted,
        created_at=choice.created_at,
        confirmed_at=choice.confirmed_at,
        request=choice.request,
        request_hash=choice.request_hash,
        model=choice.model,
        damaged=choice.problem,
        repair=choice.repair,
    )


def list_choices(store: CatalogStore, *, limit: int | None = None) -> list[ChoiceView]:
    return [_view(c) for c in rows.list_choices(store.database, limit=limit)]


def show_choice(store: CatalogStore, choice_id: int) -> ChoiceView:
    found = rows.get_choice(store.database, choice_id)
    if found is None:
        shown = str(choice_id) if len(str(choice_id)) <= 24 else str(choice_id)[:20] + "…"
        beyond = not 1 <= choice_id <= rows.MAX_ID
        raise NotFoundError(
            f"No remembered choice has the id {shown}"
            + (f": ids are whole numbers from 1 to {rows.MAX_ID}." if beyond else "."),
            hint="`tool-selector memory list` shows them.",
        )
    return _view(found)


def forget_choice(store: CatalogStore, writer: CatalogWriter, choice_id: int, *, actor: str) -> ChoiceView:
    """Forget one remembered choice (audited as ``memory.forget``)."""
    shown = show_choice(store, choice_id)
    writer.forget_choice(actor, choice_id, power=shown.power, tool=shown.tool)
    return shown


def clear_choices(writer: CatalogWriter, *, actor: str) -> int:
    """Forget every remembered choice (audited as ``memory.clear``); how many there were."""
    return writer.clear_choices(actor)
