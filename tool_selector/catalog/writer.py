"""The only code that changes servers and tools, whichever adapter asks (CLI, REST, MCP sync).

Every mutating method takes the actor and writes its audit record in the same transaction as the
change, so a change is never stored without its record, nor the reverse. A server's content hash is
the hash of its tools' hashes, so changing a tool changes its server's hash and the next sync
re-profiles that server only.

Held tool definitions are decided here too: approving or rejecting one is one transaction with one
audit record (``tool.approve`` / ``tool.reject``); a live change found at activation is one
``tool.quarantine`` (a tool's) or ``server.quarantine`` (the server's own text: description,
instructions). The shadowing check reads the configured servers' tools before and inside a write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from tool_selector.catalog import memory as rows
from tool_selector.catalog.admin import AuditRecord, write_audit
from tool_selector.catalog.changes import scan_context
from tool_selector.catalog.pins import (
    Gate,
    decide,
    forget_tool,
    get_entry,
    held_tool_ids,
    known_tools,
    put_pin,
    supersede,
    unpinned,
)
from tool_selector.catalog.rows import (
    ImportSummary,
    delete_server_rows,
    dump,
    grouped,
    insert_server,
    insert_tool,
    rehash_server,
    update_tool_row,
)
from tool_selector.catalog.server_pins import OPERATOR_KEYS, ServerGate, apply_approved
from tool_selector.catalog.store import CatalogStore
from tool_selector.core.errors import ConflictError, InvalidInputError, NotFoundError
from tool_selector.core.hashing import server_hash, sha256_of
from tool_selector.core.json_limits import MAX_JSON_DEPTH, withheld_fields
from tool_selector.core.models import CreationMethod, ServerRecord, ServerSpec, ToolRecord, ToolSpec
from tool_selector.trust.intent import ReadsIntent, tool_pieces
from tool_selector.trust.likeness import Known, ShadowCheck, server_key
from tool_selector.trust.models import EntryState, FoundBy, QuarantineEntry, TrustMode, VetSummary

AUDIT_NAMES_LIMIT = 100  # server names listed in one import's audit record


def record_hash(record: ServerRecord | ToolRecord | None) -> str | None:
    """What the audit log stores as before/after: a hash of the record's content (not its timestamps)."""
    if record is None:
        return None
    if isinstance(record, ServerRecord):
        return sha256_of([record.name, record.description, record.metadata, record.content_hash])
    return sha256_of([record.id, record.content_hash, record.annotations])


FOUND_BY: dict[CreationMethod, FoundBy] = {
    CreationMethod.DISCOVERED: "sync",
    CreationMethod.IMPORTED: "import",
    CreationMethod.MANUAL_API: "registration",
    CreationMethod.MCP_TOOL: "registration",
    CreationMethod.CLI: "cli",
    CreationMethod.MANUAL: "cli",
}


def _stamp() -> tuple[datetime, str]:
    at = datetime.now(UTC)
    return at, at.isoformat(timespec="microseconds")


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


class CatalogWriter:
    """Writes servers, tools, pins and their audit records through one store's connection.

    Every write of a tool definition is vetted (catalog/pins.py) under the write's ``trust`` mode, and
    with ``shadows`` against the configured servers' tools (trust/likeness.py; the composition root
    gives it, with the model and the catalog's vector cache); it approves and rejects held definitions,
    and vets what a server serves live at activation."""

    def __init__(
        self, store: CatalogStore, *, shadows: ShadowCheck | None = None, intent: ReadsIntent | None = None
    ) -> None:
        self._store = store
        self._shadows = shadows
        self._intent = intent

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction around several writes: all of them are stored, or none."""
        with self._store.database.transaction():
            yield

    def record(
        self,
        actor: str,
        action: str,
        target: str,
        *,
        before_hash: str | None = None,
        after_hash: str | None = None,
        **details: Any,
    ) -> None:
        """An audit record for a change made outside the database (the server configuration file)."""
        with self._store.database.transaction() as db:
            self._audit(db, actor, action, target, before_hash, after_hash, datetime.now(UTC), details)

    # -- the gateway's memory of confirmed choices (catalog/memory.py) ---------------------------

    def forget_choice(self, actor: str, choice_id: int, *, power: str, tool: str) -> int:
        """Forget one remembered choice, audited as ``memory.forget`` in the same transaction."""
        with self._store.database.transaction() as db:
            gone = rows.forget(self._store.database, [choice_id])
            now = datetime.now(UTC)
            self._audit(
                db,
                actor,
                "memory.forget",
                f"choice {choice_id}",
                None,
                None,
                now,
                {"power": power, "tool": tool},
            )
        return gone

    def clear_choices(self, actor: str) -> int:
        """Forget every remembered choice, audited as ``memory.clear`` in the same transaction."""
        with self._store.database.transaction() as db:
            gone = rows.clear(self._store.database)
            now = datetime.now(UTC)
            self._audit(db, actor, "memory.clear", "choices", None, None, now, {"forgotten": gone})
        return gone

    # -- many servers at once --------------------------------------------------------------------

    def import_catalog(
        self,
        servers: Sequence[ServerSpec],
        tools: Sequence[ToolSpec],
        *,
        creation_method: CreationMethod,
        actor: str,
        source: str = "",
        prune: bool = False,
        trust: TrustMode | Mapping[str, TrustMode] = "tofu",
        keep: Collection[str] = (),
    ) -> ImportSummary:
        """Insert or update servers and their tools in one transaction, with one audit record when
        anything changed (``catalog.import``, target ``catalog:<source>``), and vet every definition
        under ``trust`` (held ones get their own ``tool.quarantine`` records).

        A server listed here gets exactly the tools given for it: its tools not listed are removed.
        With ``prune``, servers not listed at all are removed too, but for those in ``keep`` (the ones the
        operator's configuration owns). Unchanged rows keep their timestamps.
        """
        by_server = grouped(servers, tools)
        summary = ImportSummary()
        names: dict[str, list[str]] = {"added": [], "changed": [], "removed": []}
        at, now = _stamp()
        owned = OPERATOR_KEYS if creation_method == CreationMethod.DISCOVERED else ()
        self._warm(by_server, complete=True)
        with self._store.database.transaction() as db:
            before = self._store.catalog_hash()
            modes = {s.name: trust if isinstance(trust, str) else trust.get(s.name, "hold") for s in servers}
            for server in servers:
                mode = modes[server.name]
                texts = ServerGate(db, mode=mode, actor=actor, found_by=FOUND_BY[creation_method], at=at)
                description, metadata = texts.vet(
                    server.name, server.description, server.metadata, operator_keys=owned
                )
                summary.servers_held += texts.held
                stored = server.model_copy(update={"description": description, "metadata": metadata})
                outcome = self._upsert_server(
                    db, stored, by_server[server.name], creation_method, now, summary, actor
                )
                if outcome in names:
                    names[outcome].append(server.name)
            context, vetted, known = scan_context(db), VetSummary(), self._known(db)
            for server in servers:
                mode = modes[server.name]
                gate = Gate(
                    db,
                    mode=mode,
                    actor=actor,
                    found_by=FOUND_BY[creation_method],
                    at=at,
                    context=context,
                    shadows=self._shadows,
                    intent=self._intent,
                    known=known,
                )
                gate.vet(server.name, by_server[server.name], complete=True)
                vetted.add(gate.summary)
            summary.tools_pinned, summary.held, summary.flagged = vetted.pinned, vetted.held, vetted.flagged
            if prune:
                for row in db.execute("SELECT name FROM servers").fetchall():
                    if row["name"] not in by_server and row["name"] not in keep:
                        summary.tools_removed += len(delete_server_rows(db, row["name"]))
                        summary.servers_removed += 1
                        names["removed"].append(row["name"])
            if summary.changed or summary.tools_pinned:
                details: dict[str, Any] = {"method": creation_method.value, **summary.model_dump()}
                details["held"], details["flagged"] = summary.held[:AUDIT_NAMES_LIMIT], summary.flagged[:50]
                details.update({f"servers_{k}_names": v[:AUDIT_NAMES_LIMIT] for k, v in names.items() if v})
                after = self._store.catalog_hash()
                self._audit(db, actor, "catalog.import", f"catalog:{source}", before, after, at, details)
        return summary

    # -- one server ------------------------------------------------------------------------------

    def create_server(
        self, spec: ServerSpec, *, method: CreationMethod, actor: str, trust: TrustMode = "tofu"
    ) -> ServerRecord:
        """Insert one server, its text vetted under ``trust`` (held text is not stored: server_pins.py)."""
        at, now = _stamp()
        with self._store.database.transaction() as db:
            if db.execute("SELECT 1 FROM servers WHERE name=?", (spec.name,)).fetchone() is not None:
                raise ConflictError(
                    f"A server named {spec.name!r} already exists.",
                    hint="Use matching_mode auto to get it back, or PATCH it.",
                    name=spec.name,
                )
            texts = ServerGate(db, mode=trust, actor=actor, found_by=FOUND_BY[method], at=at)
            description, metadata = texts.vet(spec.name, spec.description, spec.metadata)
            spec = spec.model_copy(update={"description": description, "metadata": metadata})
            insert_server(db, spec, server_hash([]), method, now, actor)
            after = self._store.get_server(spec.name)
            self._audit_records(
                db, actor, "server.create", f"server:{spec.name}", None, after, at, method=method.value
            )
        return after

    def update_server(
        self,
        name: str,
        *,
        description: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
        trust: TrustMode = "tofu",
        found_by: FoundBy = "registration",
    ) -> tuple[ServerRecord, bool]:
        """Apply the given fields, vetted under ``trust`` (held text is not stored: server_pins.py);
        returns the record and whether anything stored changed."""
        at, now = _stamp()
        with self._store.database.transaction() as db:
            before = self._store.get_server(name)
            new_description = before.description if description is None else description
            new_metadata = before.metadata if metadata is None else metadata
            texts = ServerGate(db, mode=trust, actor=actor, found_by=found_by, at=at)
            new_description, new_metadata = texts.vet(name, new_description, new_metadata)
            if (new_description, new_metadata) == (before.description, before.metadata):
                return before, False
            db.execute(
                "UPDATE servers SET description=?, metadata=?, updated_at=?, modified_by=? WHERE name=?",
                (new_description, dump(new_metadata), now, actor, name),
            )
            after = self._store.get_server(name)
            self._audit_records(db, actor, "server.update", f"server:{name}", before, after, at)
        return after, True

    def delete_server(self, name: str, *, cascade: bool, actor: str, **details: Any) -> list[str]:
        """Delete a server. With tools left, ``cascade`` must be true and they are deleted with it;
        returns the ids of the tools deleted. ``details`` go into the audit record."""
        at, _ = _stamp()
        with self._store.database.transaction() as db:
            before = self._store.get_server(name)  # NotFoundError
            tools = [
                r["id"] for r in db.execute("SELECT id FROM tools WHERE server=? ORDER BY name", (name,))
            ]
            if tools and not cascade:
                raise ConflictError(
                    f"Server {name!r} still has {len(tools)} tool(s); deleting it would delete them too.",
                    hint="Repeat with ?cascade=true to delete it with its tools, or delete the tools first.",
                    tools=tools[:50],
                )
            delete_server_rows(db, name)
            self._audit_records(
                db, actor, "server.delete", f"server:{name}", before, None, at, tools_deleted=tools, **details
            )
        return tools

    # -- one tool --------------------------------------------------------------------------------

    def create_tool(
        self, spec: ToolSpec, *, method: CreationMethod, actor: str, trust: TrustMode = "tofu"
    ) -> ToolRecord:
        """Insert one tool and vet its definition under ``trust``."""
        at, now = _stamp()
        self._warm({spec.server: [spec]}, complete=False)
        with self._store.database.transaction() as db:
            self._store.get_server(spec.server)  # NotFoundError when the server is not registered
            if db.execute("SELECT 1 FROM tools WHERE id=?", (spec.id,)).fetchone() is not None:
                raise ConflictError(
                    f"Tool {spec.id!r} already exists.",
                    hint="PATCH /api/v1/tools/{id} to change it, or pick another name.",
                    tool_id=spec.id,
                )
            insert_tool(db, spec, method, now, actor)
            rehash_server(db, spec.server, now, actor)
            after = self._store.get_tool(spec.id)
            self._audit_records(
                db, actor, "tool.create", f"tool:{spec.id}", None, after, at, method=method.value
            )
            gate = Gate(
                db,
                mode=trust,
                actor=actor,
                found_by=FOUND_BY[method],
                at=at,
                context=scan_context(db),
                shadows=self._shadows,
                intent=self._intent,
                known=self._known(db),
            )
            gate.vet(spec.server, [spec], complete=False)
        return after

    def update_tool(
        self,
        tool_id: str,
        *,
        description: str | None,
        input_schema: dict[str, Any] | None,
        annotations: dict[str, Any] | None,
        actor: str,
        output_schema: dict[str, Any] | None = None,
        trust: TrustMode = "tofu",
        found_by: FoundBy = "registration",
    ) -> tuple[ToolRecord, bool]:
        """Apply the given fields (None keeps a field) and vet the new definition under ``trust``."""
        at, now = _stamp()
        with self._store.database.transaction() as db:
            before = self._store.get_tool(tool_id)
            try:
                spec = ToolSpec(
                    server=before.server,
                    name=before.name,
                    description=before.description if description is None else description,
                    input_schema=before.input_schema if input_schema is None else input_schema,
                    annotations=before.annotations if annotations is None else annotations,
                    output_schema=before.output_schema if output_schema is None else output_schema,
                )
            except ValidationError as exc:  # what it keeps was stored before a rule of every door
                raise InvalidInputError(
                    f"The tool {tool_id!r} cannot be changed as asked: {exc.errors()[0]['msg']}.",
                    hint="Give that field anew within the rule, or delete the tool and add it again.",
                    tool_id=tool_id,
                ) from exc
            if spec.definition_hash() == before.definition_hash():
                return before, False
            update_tool_row(db, spec, now, actor)
            rehash_server(db, spec.server, now, actor)
            after = self._store.get_tool(tool_id)
            self._audit_records(db, actor, "tool.update", f"tool:{tool_id}", before, after, at)
            gate = Gate(
                db,
                mode=trust,
                actor=actor,
                found_by=found_by,
                at=at,
                context=scan_context(db),
                shadows=self._shadows,
                intent=self._intent,
                known=self._known(db),
            )
            gate.vet(spec.server, [spec], complete=False)
        return after, True

    def delete_tool(self, tool_id: str, *, actor: str) -> ToolRecord:
        at, now = _stamp()
        with self._store.database.transaction() as db:
            before = self._store.get_tool(tool_id)
            db.execute("DELETE FROM tools WHERE id=?", (tool_id,))
            forget_tool(db, tool_id)
            rehash_server(db, before.server, now, actor)
            self._audit_records(db, actor, "tool.delete", f"tool:{tool_id}", before, None, at)
        return before

    # -- held definitions: what a server serves live, approving and rejecting -------------------

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
                intent=self._intent,
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

    # -- the shadowing check's reading of the configured servers' tools -------------------------

    def _known(self, db: sqlite3.Connection) -> list[Known]:
        """The configured servers' tools the shadowing check compares with (none without the check)."""
        return known_tools(db) if self._shadows is not None else []

    def _warm(self, by_server: Mapping[str, Sequence[ToolSpec]], *, complete: bool) -> None:
        """Embed, before a write's transaction, what its shadowing check will read (the tools that differ
        from their pins, and the configured tools), so that the transaction never waits on the model.
        What changes meanwhile is read again inside it; this only fills the vector cache."""
        db = self._store.database.connection
        if self._intent is not None:  # its readings are kept: the gate inside the transaction reuses them
            self._intent.read_all(
                [tool_pieces(t) for tools in by_server.values() for t in unpinned(db, tools)]
            )
        if self._shadows is None:
            return
        known = known_tools(db)
        if not known:
            return
        for server, tools in by_server.items():
            own = server_key((t.name, t.definition_hash()) for t in tools) if complete else ""
            fresh = unpinned(db, tools)
            if fresh:
                self._shadows.judge(server, fresh, known, own_key=own)

    # -- rows ------------------------------------------------------------------------------------

    def _upsert_server(
        self,
        db: sqlite3.Connection,
        server: ServerSpec,
        tools: list[ToolSpec],
        method: CreationMethod,
        now: str,
        summary: ImportSummary,
        actor: str,
    ) -> str:
        """Insert or update one server and exactly its given tools; returns added, changed or unchanged."""
        new_hash = server_hash(t.compute_hash() for t in tools)
        row = db.execute(
            "SELECT content_hash, description, metadata FROM servers WHERE name=?", (server.name,)
        ).fetchone()
        outcome = "unchanged"
        if row is None:
            insert_server(db, server, new_hash, method, now, actor)
            summary.servers_added += 1
            outcome = "added"
        elif (row["content_hash"], row["description"], row["metadata"]) != (
            new_hash,
            server.description,
            dump(server.metadata),
        ):
            db.execute(
                "UPDATE servers SET description=?, metadata=?, content_hash=?, updated_at=?, modified_by=? "
                "WHERE name=?",
                (server.description, dump(server.metadata), new_hash, now, actor, server.name),
            )
            summary.servers_changed += 1
            outcome = "changed"
        else:
            summary.servers_unchanged += 1
        existing = {
            r["id"]: r["definition_hash"]
            for r in db.execute("SELECT id, definition_hash FROM tools WHERE server=?", (server.name,))
        }
        for tool in tools:
            if tool.id not in existing:
                insert_tool(db, tool, method, now, actor)
                summary.tools_added += 1
            elif existing[tool.id] != tool.definition_hash():
                update_tool_row(db, tool, now, actor)
                summary.tools_changed += 1
            else:
                summary.tools_unchanged += 1
        for gone in set(existing) - {t.id for t in tools}:
            db.execute("DELETE FROM tools WHERE id=?", (gone,))
            summary.tools_removed += 1
        return outcome

    # -- audit -----------------------------------------------------------------------------------

    def _audit_records(
        self,
        db: sqlite3.Connection,
        actor: str,
        action: str,
        target: str,
        before: ServerRecord | ToolRecord | None,
        after: ServerRecord | ToolRecord | None,
        at: datetime,
        **details: Any,
    ) -> None:
        self._audit(db, actor, action, target, record_hash(before), record_hash(after), at, details)

    @staticmethod
    def _audit(
        db: sqlite3.Connection,
        actor: str,
        action: str,
        target: str,
        before_hash: str | None,
        after_hash: str | None,
        at: datetime,
        details: dict[str, Any],
    ) -> None:
        if not actor:
            raise InvalidInputError(
                f"A catalog change ({action} {target}) was made without naming who made it.",
                hint="Pass the actor (cli:<user>, key:<id>, sync) to the catalog writer.",
            )
        write_audit(
            db,
            AuditRecord(
                at=at,
                actor=actor,
                action=action,
                target=target,
                before_hash=before_hash,
                after_hash=after_hash,
                details=details,
            ),
        )
