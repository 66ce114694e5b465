"""Use cases: the quarantine of held tool definitions (list, show, approve, reject) and the check of
what a server lists live when the gateway starts it.

A definition is held when it differs from its approved one (pinned by the hash of name, description,
input and output schema and annotations), when it arrives under an approval policy, or when the
scanner quarantines it. A held tool is out of the index and of the gateway's tool lists, and calls
to it are refused with ``QuarantinedError``, until a person with the ``approve`` scope approves it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mcp import types
from pydantic import BaseModel, Field

from services.shared.container import Container
from services.shared.indexing import refresh_index
from services.shared.policy import configured_mode
from services.shared.writing import writes
from services.write.discovery import accepted_tools
from services.write.registry import refresh
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import LockedError, QuarantinedError
from tool_selector.core.models import ToolSpec
from tool_selector.core.names import MAX_NAME_CHARS
from tool_selector.trust.definition import definition_diff, escaped
from tool_selector.trust.models import EntryState, QuarantineEntry

logger = logging.getLogger(__name__)

ACTIVATION_ACTOR = "gateway"


class QuarantineDetail(BaseModel):
    """One entry with a readable diff of the approved and the held definition."""

    entry: QuarantineEntry
    diff: str = Field(description="unified diff of the approved (old) and held (new) definition as JSON")
    next: str


class Decided(BaseModel):
    entry: QuarantineEntry
    index: dict[str, int] = Field(default_factory=dict, description="what the index refresh did")


def list_entries(
    container: Container, *, everything: bool = False, server: str | None = None
) -> list[QuarantineEntry]:
    states: Sequence[EntryState] = (
        ("pending", "rejected", "approved", "superseded") if everything else ("pending",)
    )
    return container.store.quarantine_entries(states=states, server=server)


def show_entry(container: Container, entry_id: str) -> QuarantineDetail:
    entry = container.store.quarantine_entry(entry_id)
    diff = escaped(definition_diff(entry.old_definition, entry.new_definition))
    if entry.state == "pending":
        step = f"`tool-selector quarantine approve {entry.id}` or `quarantine reject {entry.id}`"
    else:
        step = f"decided: {entry.state} by {entry.decided_by}"
    return QuarantineDetail(entry=entry, diff=diff, next=step)


@writes("quarantine approval")
def approve_entry(container: Container, entry_id: str, *, actor: str, note: str = "") -> Decided:
    """Pin the held definition and bring the index in line (the tool becomes searchable and callable)."""
    entry = container.writer.approve(entry_id, actor=actor, note=note)
    indexed = refresh(container, servers={entry.server})
    return Decided(entry=entry, index={"written": indexed.written, "removed": indexed.removed})


@writes("quarantine rejection")
def reject_entry(container: Container, entry_id: str, *, actor: str, note: str = "") -> Decided:
    """Refuse the held definition: the tool stays held while its server serves it."""
    return Decided(entry=container.writer.reject(entry_id, actor=actor, note=note))


def held_message(entry: QuarantineEntry) -> str:
    """What an agent reads when it reaches for a held tool: what changed and who can approve, never the
    held text itself (nor the scanner's quotes of it)."""
    own = [r for r in entry.reasons if not r.startswith("scanner:")]
    if len(own) < len(entry.reasons):
        own.append("the scanner found signs of prompt injection in it")
    why = "; ".join(own[:3]) or "its definition was never approved"
    return (
        f"The tool {entry.name!r} of {entry.server!r} is held in quarantine ({entry.kind}: {why}). It cannot "
        f"be listed or called until an operator approves it (`tool-selector quarantine show {entry.id}`, "
        f"then `quarantine approve {entry.id}`, or POST /api/v1/quarantine/{entry.id}/approve with a key "
        "that has the 'approve' scope)."
    )


def vet_live_tools(
    container: Container, server: str, config: ServerConfig | None, tools: Sequence[types.Tool]
) -> tuple[dict[str, str], list[str]]:
    """Compare the tools ``server`` lists live with their pins (pinning on first use under the server's
    trust policy). Returns each held tool's name with the message an agent reads, and the tool ids
    held anew by this check (each got its entry and audit record)."""
    found = accepted_tools(server, tools)  # the sync's rules: naming, look-alike names, JSON limits
    specs: list[ToolSpec] = found.kept
    kept = {spec.name for spec in specs}
    why = {out.tool: out.reason for out in found.left_out}
    invalid: dict[str, str] = {
        tool.name: (
            f"The tool {tool.name[:80]!r} of {server!r} has a definition tool-selector cannot accept "
            f"({why.get(tool.name[:MAX_NAME_CHARS], 'it breaks the catalog rules')}), so it is not offered. "
            "Tell the operator."
        )
        for tool in tools
        if tool.name.strip() not in kept
    }
    mode = configured_mode(container.settings, config)
    held, vetted = container.writer.vet_live(server, specs, trust=mode, actor=ACTIVATION_ACTOR)
    if vetted.held:
        logger.warning("%s: %d tool(s) held at activation: %s", server, len(vetted.held), vetted.held)
    pending = container.store.quarantine_entries(states=("pending", "rejected"), server=server)
    entries = {e.name: e for e in sorted(pending, key=lambda e: e.found_at)}  # the latest wins
    messages = dict(invalid)
    for name in held:
        entry = entries.get(name)
        messages[name] = (
            held_message(entry) if entry is not None else f"The tool {name!r} is held in quarantine."
        )
    return messages, vetted.held


def refresh_after_hold(container: Container) -> None:
    """Take tools held at activation out of the index now, unless another write is under way: it does
    not wait for it (an activation must not), and the index stays marked stale until the next write."""
    try:
        with container.writing("index refresh after tools were held at activation", wait_s=0):
            refresh_index(container, only_if_stale=True)
    except LockedError:
        logger.info("another write is under way; the index is brought in line with the held tools next")


def refuse_held(server: str, tool: str, message: str) -> QuarantinedError:
    return QuarantinedError(
        message,
        hint="Use another tool, or tell the user an operator must review this tool's change first.",
        server=server,
        tool=tool,
    )
