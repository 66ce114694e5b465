"""Use cases: the quarantine of held tool definitions (list, show, approve, reject) and the check of
what a server says live when the gateway starts it (``vet_live_server``: its tools, description and
instructions against their pins; what an agent may see of it is built from the approved text only).

A definition is held when it differs from its approved one (pinned by the hash of name, description,
input and output schema and annotations), when it arrives under an approval policy, or when the
scanner quarantines it. A held tool is out of the index and of the gateway's tool lists, and calls
to it are refused with ``QuarantinedError``, until a person with the ``approve`` scope approves it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from mcp import types
from pydantic import BaseModel, Field

from services.root.container import Container
from services.write.discovery import accepted_tools, server_spec
from services.write.indexing import refresh_index
from services.write.policy import configured_mode
from services.write.registry import refresh
from services.write.writing import writes
from tool_selector.catalog.store import CatalogStore
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
    store: CatalogStore, *, everything: bool = False, server: str | None = None
) -> list[QuarantineEntry]:
    states: Sequence[EntryState] = (
        ("pending", "rejected", "approved", "superseded") if everything else ("pending",)
    )
    return store.quarantine_entries(states=states, server=server)


def show_entry(store: CatalogStore, entry_id: str) -> QuarantineDetail:
    entry = store.quarantine_entry(entry_id)
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


INSTRUCTIONS_HELD = (
    "The server's instructions changed since they were approved and wait for an operator's approval, so "
    "they are not shown."
)


@dataclass(frozen=True)
class LiveCheck:
    """What the gateway may show of a server it starts, after the gate: the tools an agent may see (the
    approved fields only: name, description, input and output schema, annotations), each held tool
    with the message an agent reads, the approved ``instructions`` (never the live session's), a note
    when the live ones wait for approval, and whether the server's held tools changed (``reindex``)."""

    tools: list[types.Tool]
    held: dict[str, str] = field(default_factory=dict)
    instructions: str = ""
    note: str = ""
    reindex: bool = False


def shown_tool(spec: ToolSpec) -> types.Tool:
    """The MCP tool an agent is shown for an approved definition: its pinned fields and nothing else."""
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations.model_validate(spec.annotations) if spec.annotations else None,
    )


def vet_live_server(
    container: Container,
    server: str,
    config: ServerConfig | None,
    tools: Sequence[types.Tool],
    init: types.InitializeResult | None = None,
) -> LiveCheck:
    """Compare what ``server`` says live (its tools; with ``init``, its description and instructions)
    with the pins, pinning on first use under the server's trust policy; each hold found here gets its
    entry and audit record (``found_by`` activation)."""
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
    text = server_spec(server, config, init) if init is not None and config is not None else None
    vetted = container.writer.vet_live(server, specs, trust=mode, actor=ACTIVATION_ACTOR, text=text)
    if vetted.summary.held:
        logger.warning("%s: %d tool(s) held at activation: %s", server, len(vetted.summary.held), vetted.held)
    pending = container.store.quarantine_entries(states=("pending", "rejected"), server=server)
    entries = {e.name: e for e in sorted(pending, key=lambda e: e.found_at) if e.subject == "tool"}
    messages = dict(invalid)
    for name in vetted.held:
        entry = entries.get(name)
        messages[name] = (
            held_message(entry) if entry is not None else f"The tool {name!r} is held in quarantine."
        )
    instructions = vetted.metadata.get("instructions")
    return LiveCheck(
        tools=[shown_tool(s) for s in specs if s.name not in messages],
        held=messages,
        instructions=instructions if isinstance(instructions, str) else "",
        note=INSTRUCTIONS_HELD if vetted.text_held else "",
        reindex=vetted.held_changed,
    )


def refresh_after_vet(container: Container, *, wait_s: float = 0) -> bool:
    """Bring the index in line with what an activation held or settled (a held tool taken out, a tool
    back to its approved definition put back), unless another write holds the lock for longer than
    ``wait_s``. False when it did not run: the caller tries again once that write is over."""
    try:
        with container.writing("index refresh after an activation changed what is held", wait_s=wait_s):
            refresh_index(container, only_if_stale=True)
    except LockedError:
        return False
    return True


def refuse_held(server: str, tool: str, message: str) -> QuarantinedError:
    return QuarantinedError(
        message,
        hint="Use another tool, or tell the user an operator must review this tool's change first.",
        server=server,
        tool=tool,
    )
