"""Approving and rejecting held tool definitions, vetting what a server serves live (activation), and
the shadowing check's reading of the configured servers' tools before and inside a write.

Part of ``CatalogWriter`` (writer.py): each decision is one transaction with one audit record
(``tool.approve`` / ``tool.reject``); a live change found at activation is one ``tool.quarantine`` (a
tool's) or ``server.quarantine`` (the server's own text: description, instructions).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tool_selector.catalog.admin import AuditRecord, write_audit
from tool_selector.catalog.changes import scan_context
from tool_selector.catalog.pins import (
    Gate,
    decide,
    get_entry,
    held_tool_ids,
    known_tools,
    put_pin,
    supersede,
    unpinned,
)
from tool_selector.catalog.rows import insert_tool, rehash_server, update_tool_row
from tool_selector.catalog.server_pins import OPERATOR_KEYS, ServerGate, apply_approved
from tool_selector.core.errors import ConflictError, InvalidInputError, NotFoundError
from tool_selector.core.json_limits import MAX_JSON_DEPTH, withheld_fields
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec
from tool_selector.trust.likeness import Known, ShadowCheck, server_key
from tool_selector.trust.models import EntryState, QuarantineEntry, TrustMode, VetSummary

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore


def _over_limits(entry: QuarantineEntry, what: str, fields: list[str]) -> InvalidInputError:
    return InvalidInputError(
        f"Quarantine entry {entry.id} ({entry.tool_id}) holds a definition held before the limits of "
        f"every door ({what}), so it cannot be approved.",
        hint=f"Reject it (`tool-selector quarantine reject {entry.id}`); the tool's source must send a "
        "definition within the limits (docs/operator-guide.md, 'Limits').",
        entry=entry.id,
        fields=fields,
    )


@dataclass(frozen=True)
class LiveVet:
    """What ``vet_live`` found: the tools held (changed, new on an approved server, or quarantined by
    the scanner), what was pinned or held anew, whether the server's held tools changed (held anew, or
    back to their approved definition: the index must follow), and the server's text an agent may read
    (the approved description and metadata; ``text_held``: the live text differs and waits)."""

    held: set[str]
    summary: VetSummary
    held_changed: bool
    description: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    text_held: bool = False


class Approvals:
    """The approval half of the catalog writer; see the module docstring."""

    _store: CatalogStore
    _shadows: ShadowCheck | None

    def vet_live(
        self,
        server: str,
        tools: Sequence[ToolSpec],
        *,
        trust: TrustMode,
        actor: str,
        text: ServerSpec | None = None,
    ) -> LiveVet:
        """Compare the tools a server lists live, and its own ``text`` (description, instructions), with
        their pins, in one transaction (``found_by`` activation). The stored rows are not touched: the
        sync brings them in line."""
        at = datetime.now(UTC)
        self._warm({server: tools}, complete=True)
        with self._store.database.transaction() as db:
            before = held_tool_ids(db, server)
            gate = Gate(
                db,
                mode=trust,
                actor=actor,
                found_by="activation",
                at=at,
                context=scan_context(db, tools),
                shadows=self._shadows,
                known=self._known(db),
            )
            held = gate.vet(server, tools, complete=True)
            changed = held_tool_ids(db, server) != before
            if text is None:
                return LiveVet(held, gate.summary, changed)
            texts = ServerGate(db, mode=trust, actor=actor, found_by="activation", at=at)
            description, metadata = texts.vet(
                server, text.description, text.metadata, operator_keys=OPERATOR_KEYS
            )
        return LiveVet(held, gate.summary, changed, description, metadata, bool(texts.withheld))

    def _known(self, db: sqlite3.Connection) -> list[Known]:
        """The configured servers' tools the shadowing check compares with (none without the check)."""
        return known_tools(db) if self._shadows is not None else []

    def _warm(self, by_server: Mapping[str, Sequence[ToolSpec]], *, complete: bool) -> None:
        """Embed, before a write's transaction, what its shadowing check will read (the tools that differ
        from their pins, and the configured tools), so that the transaction never waits on the model.
        What changes meanwhile is read again inside it; this only fills the vector cache."""
        if self._shadows is None:
            return
        db = self._store.database.connection
        known = known_tools(db)
        if not known:
            return
        for server, tools in by_server.items():
            own = server_key((t.name, t.definition_hash()) for t in tools) if complete else ""
            fresh = unpinned(db, tools)
            if fresh:
                self._shadows.judge(server, fresh, known, own_key=own)

    def approve(self, entry_id: str, *, actor: str, note: str = "") -> QuarantineEntry:
        """Pin the held definition, bring the stored tool in line with it, and settle the entry."""
        at = datetime.now(UTC)
        now = at.isoformat(timespec="microseconds")
        with self._store.database.transaction() as db:
            entry = self._open_entry(db, entry_id, "approve")
            too_deep = withheld_fields(entry.new_definition)
            if too_deep:
                raise _over_limits(
                    entry, f"{', '.join(too_deep)} nested deeper than {MAX_JSON_DEPTH} levels", too_deep
                )
            if entry.subject == "server":  # a server's shown text (server_pins.py)
                decide(db, entry.id, "approved", actor, now)
                apply_approved(db, entry.server, entry.new_definition, actor, now)
                self._decision_record(db, entry, "server.approve", actor, at, note)
                return self._reread(db, entry.id)
            try:
                spec = ToolSpec(server=entry.server, **entry.new_definition)
            except ValidationError as exc:  # held before the JSON limits (core/json_limits.py)
                fields = [str(e["loc"][0]) for e in exc.errors() if e["loc"]]
                raise _over_limits(entry, str(exc.errors()[0]["msg"]), fields) from exc
            put_pin(db, spec, how="approved", actor=actor, at=now)
            row = db.execute("SELECT definition_hash FROM tools WHERE id=?", (entry.tool_id,)).fetchone()
            server = db.execute(
                "SELECT creation_method FROM servers WHERE name=?", (entry.server,)
            ).fetchone()
            if row is not None and row["definition_hash"] != entry.new_hash:
                update_tool_row(db, spec, now, actor)
                rehash_server(db, entry.server, now, actor)
            elif row is None and server is not None:  # a new or renamed tool seen live at activation
                insert_tool(db, spec, CreationMethod(server["creation_method"]), now, actor)
                rehash_server(db, entry.server, now, actor)
            decide(db, entry.id, "approved", actor, now)
            supersede(db, entry.tool_id, actor, now)  # other held definitions of it: the pin now decides
            self._decision_record(db, entry, "tool.approve", actor, at, note)
            return self._reread(db, entry.id)

    def reject(self, entry_id: str, *, actor: str, note: str = "") -> QuarantineEntry:
        """Refuse the held definition: the tool stays held while its server serves it."""
        at = datetime.now(UTC)
        with self._store.database.transaction() as db:
            entry = self._open_entry(db, entry_id, "reject")
            decide(db, entry.id, "rejected", actor, at.isoformat(timespec="microseconds"))
            self._decision_record(db, entry, f"{entry.subject}.reject", actor, at, note)
            return self._reread(db, entry.id)

    @staticmethod
    def _open_entry(db: sqlite3.Connection, entry_id: str, verb: str) -> QuarantineEntry:
        entry = get_entry(db, entry_id.strip())
        if entry is None:
            raise NotFoundError(
                f"No quarantine entry {entry_id!r}.",
                hint="`tool-selector quarantine list` shows the held tools and their ids.",
                entry=entry_id,
            )
        done: dict[EntryState, str] = {
            "approved": "was approved already",
            "superseded": "is settled: the tool went back to its approved definition, "
            "or a later one was decided",
        }
        if entry.state in done or (verb == "reject" and entry.state == "rejected"):
            raise ConflictError(
                f"Quarantine entry {entry.id} ({entry.tool_id}) "
                f"{done.get(entry.state, 'was rejected already')}; there is nothing to {verb}.",
                hint="`tool-selector quarantine list` shows what is still held.",
                entry=entry.id,
                state=entry.state,
            )
        return entry

    @staticmethod
    def _reread(db: sqlite3.Connection, entry_id: str) -> QuarantineEntry:
        entry = get_entry(db, entry_id)
        assert entry is not None
        return entry

    @staticmethod
    def _decision_record(
        db: sqlite3.Connection, entry: QuarantineEntry, action: str, actor: str, at: datetime, note: str
    ) -> None:
        details = {"entry": entry.id, "kind": entry.kind, "found_by": entry.found_by}
        if note:
            details["note"] = note[:500]
        write_audit(
            db,
            AuditRecord(
                at=at,
                actor=actor,
                action=action,
                target=f"{entry.subject}:{entry.tool_id}",
                before_hash=entry.old_hash,
                after_hash=entry.new_hash,
                details=details,
            ),
        )
