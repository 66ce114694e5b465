"""Approving and rejecting held tool definitions, vetting what a server serves live (activation), and
the shadowing check's reading of the configured servers' tools before and inside a write.

Part of ``CatalogWriter`` (writer.py): each decision is one transaction with one audit record
(``tool.approve`` / ``tool.reject``); a live change found at activation is one ``tool.quarantine``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tool_selector.catalog.admin import AuditRecord, write_audit
from tool_selector.catalog.changes import scan_context
from tool_selector.catalog.pins import Gate, decide, get_entry, known_tools, put_pin, supersede, unpinned
from tool_selector.catalog.rows import insert_tool, rehash_server, update_tool_row
from tool_selector.catalog.server_pins import apply_approved
from tool_selector.core.errors import ConflictError, NotFoundError
from tool_selector.core.models import CreationMethod, ToolSpec
from tool_selector.trust.likeness import Known, ShadowCheck, server_key
from tool_selector.trust.models import EntryState, QuarantineEntry, TrustMode, VetSummary

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore


class Approvals:
    """The approval half of the catalog writer; see the module docstring."""

    _store: CatalogStore
    _shadows: ShadowCheck | None

    def vet_live(
        self, server: str, tools: Sequence[ToolSpec], *, trust: TrustMode, actor: str
    ) -> tuple[set[str], VetSummary]:
        """Compare the tools a server lists live with their pins; returns the names held (changed, new on
        an approved server, or quarantined by the scanner) and what was pinned or held. The stored tools
        are not touched: the sync brings them in line."""
        at = datetime.now(UTC)
        self._warm({server: tools}, complete=True)
        with self._store.database.transaction() as db:
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
        return held, gate.summary

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
            if entry.subject == "server":  # a server's shown text (server_pins.py)
                decide(db, entry.id, "approved", actor, now)
                apply_approved(db, entry.server, entry.new_definition, actor, now)
                self._decision_record(db, entry, "server.approve", actor, at, note)
                return self._reread(db, entry.id)
            spec = ToolSpec(server=entry.server, **entry.new_definition)
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
