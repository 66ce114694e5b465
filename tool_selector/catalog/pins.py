"""Pins and the quarantine in the catalog database (SQL for the catalog package only).

``Gate`` vets tool definitions inside the writer's transaction: a definition equal to its pin passes;
one without a pin is pinned or held according to the write's ``TrustMode``; one that differs from its
pin is held; whatever the scanner quarantines is held whatever the mode, and so is a tool that copies
or claims the job of a tool of another configured server (``ShadowCheck``, trust/likeness.py, against
``known_tools``: the sync's servers). Each new hold is one ``tool.quarantine`` audit record; approvals
and rejections (writer.py) are one record each.

A tool is *held* (kept out of the index, of the gateway's tool lists and of calls) while its stored
definition has no matching pin, or while a pending entry names it (a change seen live at activation).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tool_selector.catalog.admin import AuditRecord, write_audit
from tool_selector.core.json_limits import may_be_too_deep, shown_definition, withheld
from tool_selector.core.models import ToolSpec
from tool_selector.trust.definition import changed_fields, entry_id, same_but_name
from tool_selector.trust.findings import Finding
from tool_selector.trust.intent import ReadsIntent, tool_pieces
from tool_selector.trust.likeness import Known, ShadowCheck, server_key
from tool_selector.trust.models import EntryState, FoundBy, Pin, QuarantineEntry, TrustMode, VetSummary
from tool_selector.trust.scanner import ScanContext, ScanResult, tool_findings, verdict_of

HELD_SQL = (
    "SELECT t.id FROM tools t LEFT JOIN tool_pins p ON p.tool_id = t.id "
    "WHERE p.pin_hash IS NULL OR p.pin_hash != t.definition_hash "
    "UNION SELECT tool_id FROM quarantine WHERE state = 'pending' AND subject = 'tool'"
)


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


HELD_IN_SERVER_SQL = (
    "SELECT t.id FROM tools t LEFT JOIN tool_pins p ON p.tool_id = t.id "
    "WHERE t.server = ? AND (p.pin_hash IS NULL OR p.pin_hash != t.definition_hash) "
    "UNION SELECT tool_id FROM quarantine WHERE state = 'pending' AND subject = 'tool' AND server = ?"
)


def known_tools(db: sqlite3.Connection) -> list[Known]:
    """The tools of the configured servers (those the sync discovers), as the shadowing check compares
    with them: all but those whose stored definition waits in the quarantine or was rejected (held text
    is no original anyone approved). Read once per write, before its first hold."""
    rows = db.execute(
        "SELECT t.id, t.server, t.name, t.description, t.definition_hash FROM tools t "
        "JOIN servers s ON s.name = t.server WHERE s.creation_method = 'discovered' ORDER BY t.server, t.name"
    ).fetchall()
    if not rows:
        return []
    held = {
        r[0]
        for r in db.execute(
            "SELECT q.tool_id FROM quarantine q JOIN tools t ON t.id = q.tool_id WHERE q.subject = 'tool' "
            "AND q.state IN ('pending', 'rejected') AND q.new_hash = t.definition_hash"
        )
    }
    tools_of: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        tools_of.setdefault(row["server"], []).append((row["name"], row["definition_hash"]))
    keys = {server: server_key(pairs) for server, pairs in tools_of.items()}
    return [
        Known(row["server"], row["name"], row["description"], keys[row["server"]])
        for row in rows
        if row["id"] not in held
    ]


def stored_key(db: sqlite3.Connection, server: str) -> str:
    """``server_key`` of the tools stored for ``server``."""
    rows = db.execute("SELECT name, definition_hash FROM tools WHERE server=?", (server,))
    return server_key((r[0], r[1]) for r in rows)


def held_tool_ids(db: sqlite3.Connection, server: str | None = None) -> set[str]:
    """The held tools of the catalog, or of one server (what a write to it needs: not every tool)."""
    if server is None:
        return {r[0] for r in db.execute(HELD_SQL)}
    return {r[0] for r in db.execute(HELD_IN_SERVER_SQL, (server, server))}


def unpinned(db: sqlite3.Connection, tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The tools whose definition differs from their pin, or that have none (what a write will vet)."""
    pinned: dict[str, str] = {}
    for server in {t.server for t in tools}:
        pinned.update(
            (r[0], r[1])
            for r in db.execute("SELECT tool_id, pin_hash FROM tool_pins WHERE server=?", (server,))
        )
    return [t for t in tools if pinned.get(t.id) != t.definition_hash()]


def pins_of(db: sqlite3.Connection, server: str) -> dict[str, Pin]:
    rows = db.execute("SELECT * FROM tool_pins WHERE server=?", (server,)).fetchall()
    return {r["name"]: _pin(r) for r in rows}


def put_pin(db: sqlite3.Connection, spec: ToolSpec, *, how: str, actor: str, at: str) -> None:
    db.execute(
        "INSERT OR REPLACE INTO tool_pins(tool_id, server, name, pin_hash, definition, how, approved_by, "
        "approved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (spec.id, spec.server, spec.name, spec.definition_hash(), _dump(spec.definition()), how, actor, at),
    )


def forget_tool(db: sqlite3.Connection, tool_id: str) -> None:
    db.execute("DELETE FROM tool_pins WHERE tool_id=?", (tool_id,))
    db.execute("DELETE FROM quarantine WHERE tool_id=?", (tool_id,))


def get_entry(db: sqlite3.Connection, entry: str) -> QuarantineEntry | None:
    row = db.execute("SELECT * FROM quarantine WHERE id=?", (entry,)).fetchone()
    return None if row is None else _entry(row)


def list_entries(
    db: sqlite3.Connection, *, states: Sequence[EntryState] = ("pending",), server: str | None = None
) -> list[QuarantineEntry]:
    marks = ",".join("?" * len(states))
    sql = f"SELECT * FROM quarantine WHERE state IN ({marks})"
    args: list[Any] = list(states)
    if server is not None:
        sql += " AND server=?"
        args.append(server)
    return [_entry(r) for r in db.execute(sql + " ORDER BY found_at DESC, id", args)]


def decide(db: sqlite3.Connection, entry: str, state: EntryState, actor: str, at: str) -> None:
    db.execute(
        "UPDATE quarantine SET state=?, decided_by=?, decided_at=? WHERE id=?", (state, actor, at, entry)
    )


def supersede(db: sqlite3.Connection, tool_id: str, actor: str, at: str) -> None:
    """Settle the tool's pending entries: its pin now decides (it was approved, or matches again)."""
    db.execute(
        "UPDATE quarantine SET state='superseded', decided_by=?, decided_at=? "
        "WHERE tool_id=? AND state='pending'",
        (actor, at, tool_id),
    )


# a definition stored before the depth limit (core/json_limits.py) reads with that field withheld
REPAIR_PINNED = "Delete the tool and register or import it again within the limit."
REPAIR_HELD = "Reject this entry: it cannot be approved; its source must send a definition within the limit."


def _definition(text: str, repair: str) -> Any:
    if not may_be_too_deep(text):
        return json.loads(text)
    try:
        return shown_definition(json.loads(text), repair)
    except RecursionError:  # deeper than the JSON parser goes: nothing of it can be shown
        return {"name": "", "description": "", "input_schema": withheld("definition", repair)}


def _pin(row: sqlite3.Row) -> Pin:
    data = dict(row)
    data["definition"] = _definition(data["definition"], REPAIR_PINNED)
    return Pin.model_validate(data)


def _entry(row: sqlite3.Row) -> QuarantineEntry:
    data = dict(row)
    for key in ("old_definition", "new_definition"):
        data[key] = _definition(data[key], REPAIR_HELD) if data[key] is not None else None
    data["reasons"] = json.loads(data["reasons"]) if data["reasons"] is not None else None
    return QuarantineEntry.model_validate(data)


def _completes_upgrade_pin(pin: Pin, tool: ToolSpec) -> bool:
    """A pin made when upgrading a catalog from before output schemas were stored has none; the first
    definition that differs from it only by having one completes it rather than being held."""
    old = pin.definition
    return (
        pin.how == "upgrade"
        and old.get("output_schema") is None
        and tool.output_schema is not None
        and changed_fields(old, tool.definition()) == ["output_schema"]
    )


@dataclass(frozen=True)
class Hold:
    """One held definition to record: a tool's (``subject`` tool) or a server's shown text (``server``,
    catalog/server_pins.py, whose ``tool_id`` is the server's name)."""

    subject: str
    tool_id: str
    server: str
    name: str
    kind: str
    old_hash: str | None
    old_definition: Any
    new_hash: str
    new_definition: Any
    reasons: list[str]


def record_hold(db: sqlite3.Connection, held: Hold, *, found_by: FoundBy, actor: str, at: datetime) -> bool:
    """One pending quarantine entry and one ``<subject>.quarantine`` audit record; nothing when the same
    definition is pending already or was rejected (it is never held twice). True when recorded."""
    key = entry_id(held.tool_id if held.subject == "tool" else f"server\0{held.tool_id}", held.new_hash)
    row = db.execute("SELECT state FROM quarantine WHERE id=?", (key,)).fetchone()
    if row is not None and row["state"] in ("pending", "rejected"):
        return False
    db.execute(
        "INSERT OR REPLACE INTO quarantine(id, tool_id, server, name, kind, state, old_hash, "
        "old_definition, new_hash, new_definition, reasons, found_by, found_at, subject) "
        "VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            held.tool_id,
            held.server,
            held.name,
            held.kind,
            held.old_hash,
            None if held.old_definition is None else _dump(held.old_definition),
            held.new_hash,
            _dump(held.new_definition),
            _dump(held.reasons),
            found_by,
            at.isoformat(),
            held.subject,
        ),
    )
    details = {"entry": key, "kind": held.kind, "found_by": found_by, "reasons": held.reasons}
    record = AuditRecord(
        at=at,
        actor=actor,
        action=f"{held.subject}.quarantine",
        target=f"{held.subject}:{held.tool_id}",
        before_hash=held.old_hash,
        after_hash=held.new_hash,
        details=details,
    )
    write_audit(db, record)
    return True


class Gate:
    """Vets definitions for one write, inside its transaction; see the module docstring."""

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        mode: TrustMode,
        actor: str,
        found_by: FoundBy,
        at: datetime,
        context: ScanContext,
        shadows: ShadowCheck | None = None,
        known: Sequence[Known] = (),
        intent: ReadsIntent | None = None,
    ) -> None:
        self.db, self.mode, self.actor, self.found_by, self.at = db, mode, actor, found_by, at
        self.context = context
        self.shadows, self.known, self.intent = shadows, known, intent
        self.summary = VetSummary()

    def vet(self, server: str, tools: Sequence[ToolSpec], *, complete: bool) -> set[str]:
        """Vet ``tools`` of ``server`` (``complete``: they are all its tools, so a pinned tool missing
        from them may have been renamed); returns the names held."""
        pins = pins_of(self.db, server)
        first_use = not pins
        missing = [p for n, p in pins.items() if complete and n not in {t.name for t in tools}]
        held: set[str] = set()
        own = ""  # the server's tools as one hash, for the shadowing check (a twin is not compared)
        if self.shadows is not None and self.known:
            own = (
                server_key((t.name, t.definition_hash()) for t in tools)
                if complete
                else stored_key(self.db, server)
            )
        scans = self._scan(
            server,
            [t for t in tools if (p := pins.get(t.name)) is None or p.pin_hash != t.definition_hash()],
            own,
        )
        for tool in tools:
            digest = tool.definition_hash()
            pin = pins.get(tool.name)
            if pin is not None and pin.pin_hash == digest:
                self._settle(tool.id)
                continue
            if pin is not None and _completes_upgrade_pin(pin, tool):
                put_pin(self.db, tool, how="upgrade", actor=pin.approved_by, at=pin.approved_at.isoformat())
                self._settle(tool.id)
                continue
            scan = scans[tool.name]
            if scan.verdict == "flagged":
                self.summary.flagged.append(tool.id)
            trusted = self.mode == "pin" or (self.mode == "tofu" and pin is None and first_use)
            if trusted and not scan.held:
                how = {"pin": "approved", "tofu": "first use"}.get(self.mode, self.mode)
                put_pin(self.db, tool, how=how, actor=self.actor, at=self.at.isoformat())
                self._settle(tool.id)
                self.summary.pinned += 1
                continue
            reasons = self._reasons(tool, pin, missing, first_use)
            reasons += [f"scanner: {r}" for r in scan.reasons] if scan.verdict != "clean" else []
            kind = "changed" if pin is not None else ("flagged" if scan.held else "new")
            self.hold(tool, pin, kind, reasons)
            held.add(tool.name)
        return held

    def _scan(self, server: str, tools: Sequence[ToolSpec], own: str) -> dict[str, ScanResult]:
        """The scanner's verdict on each tool, with the shadowing check against the configured servers'
        tools (``own``: the server's ``server_key``) and the rule across a server (``trust/batch.py``): a
        server caught serving poison is not trusted with the other tools it brings in the same write."""
        findings = {
            t.name: tool_findings(
                t.server,
                t.name,
                t.description,
                t.input_schema,
                t.output_schema,
                t.annotations,
                context=self.context,
            )
            for t in tools
        }
        if self.shadows is not None and self.known:
            for name, finding in self.shadows.judge(server, tools, self.known, own_key=own).items():
                findings[name].append(finding)
        if self.intent is not None:
            for t in tools:
                findings[t.name] += self.intent.findings(tool_pieces(t))
        verdicts = {name: verdict_of(found) for name, found in findings.items()}
        culprits = [name for name, verdict in verdicts.items() if verdict.held]
        for name, verdict in list(verdicts.items()):
            others = [c for c in culprits if c != name]
            if others and not verdict.held:
                reason = f"its server {server!r} is quarantined for tool {others[0]!r}"
                verdicts[name] = verdict_of([*findings[name], Finding("server", "flag", reason)])
        return verdicts

    def _reasons(self, tool: ToolSpec, pin: Pin | None, missing: list[Pin], first_use: bool) -> list[str]:
        new = tool.definition()
        if pin is not None:
            return [f"{', '.join(changed_fields(pin.definition, new))} changed since it was approved"]
        renamed = [p.name for p in missing if same_but_name(p.definition, new)]
        if renamed:
            return [f"renamed: the approved tool {renamed[0]!r} now appears under the name {tool.name!r}"]
        if not first_use:
            return ["a new tool on a server whose tools were approved"]
        if self.mode == "hold":
            return [f"approval is required for tools that arrive by {self.found_by}"]
        return []

    def hold(self, tool: ToolSpec, pin: Pin | None, kind: str, reasons: list[str]) -> None:
        """Record ``tool``'s definition as held (one entry and one audit record per new hold)."""
        held = Hold(
            subject="tool",
            tool_id=tool.id,
            server=tool.server,
            name=tool.name,
            kind=kind,
            old_hash=pin.pin_hash if pin else None,
            old_definition=pin.definition if pin else None,
            new_hash=tool.definition_hash(),
            new_definition=tool.definition(),
            reasons=reasons,
        )
        if record_hold(self.db, held, found_by=self.found_by, actor=self.actor, at=self.at):
            self.summary.held.append(tool.id)

    def _settle(self, tool_id: str) -> None:
        """The tool matches its pin again: pending entries for it are superseded."""
        supersede(self.db, tool_id, self.actor, self.at.isoformat())
