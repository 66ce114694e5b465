"""Trust for the text a server shows agents: its description and the text of its metadata.

The rules of tool definitions (catalog/pins.py), applied to a server's *shown text*: its description
and its metadata (keywords, categories, tags, summary, steering, any other key), less ``transport`` and
``server_info`` (a transport name, the server's own name and version) and less the keys its operator's
configuration owns (``steering`` and ``keywords`` of a configured server: written on the machine).

``ServerGate.vet`` runs inside the writer's transaction. Text equal to the server's pin passes. Text the
scanner quarantines is held whatever the write's mode; under ``pin`` text is pinned; under ``tofu`` it
is pinned when the server has no pin yet; anything else is held. Held text is **not stored on the
server**: the row keeps its pinned text (none, for a server never approved), so no read path can show
it, and a quarantine entry of subject ``server`` (``tool_id`` is the server's name) keeps the proposal
until someone with the ``approve`` scope approves it (it is then written and pinned) or rejects it.
Each new hold is one ``server.quarantine`` audit record.

The gateway vets a configured server's live text the same way when it starts the server (``found_by``
``activation``, through ``CatalogWriter.vet_live``): what an agent reads of a server (its description,
its ``instructions`` as steering) is always the approved text, never what the live session said.

A pin made before a shown key was pinned (``instructions``: ``NEW_KEYS``) lacks it; the first text that
differs from the pin only by carrying that key completes the pin under the rule of a first use (``tofu``
and ``pin`` pin it unless the scanner quarantines it; ``hold`` holds it), so an upgrade does not hold
every configured server at its next sync.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tool_selector.catalog.pins import Hold, record_hold
from tool_selector.core.hashing import sha256_of
from tool_selector.trust.models import FoundBy, TrustMode
from tool_selector.trust.scanner import ScanContext, ScanResult, server_findings, verdict_of

UNGATED = ("transport", "server_info")
OPERATOR_KEYS = ("steering", "keywords")  # of a configured server: from servers.json
NEW_KEYS = ("instructions",)  # shown keys that pins made by earlier versions do not have
SUBJECT = "server"


@dataclass(frozen=True)
class ServerText:
    """A server's description and metadata split into what agents read (gated) and the rest."""

    description: str
    shown: dict[str, Any]  # the gated metadata keys
    rest: dict[str, Any]  # transport, server_info and the operator's keys
    rest_keys: frozenset[str] = frozenset()  # the keys that are never gated for this server

    @classmethod
    def of(
        cls, description: str, metadata: Mapping[str, Any], operator_keys: Collection[str] = ()
    ) -> ServerText:
        kept = frozenset(UNGATED) | frozenset(operator_keys)
        shown = {k: v for k, v in metadata.items() if k not in kept}
        rest = {k: v for k, v in metadata.items() if k in kept}
        return cls(description, shown, rest, kept)

    def gated(self) -> dict[str, Any]:
        return {"description": self.description, "metadata": self.shown}

    def reads_nothing(self) -> bool:
        """No text an agent could read: no description, and every shown key empty."""
        return not self.description.strip() and not any(
            v not in ("", None, [], {}) for v in self.shown.values()
        )

    def digest(self) -> str:
        return sha256_of(self.gated())

    def metadata(self) -> dict[str, Any]:
        return {**self.shown, **self.rest}

    def with_shown(self, gated: Mapping[str, Any] | None) -> ServerText:
        """This text's own rest, with the shown part of ``gated`` (a pin's; None: nothing shown)."""
        if gated is None:
            return ServerText("", {}, self.rest, self.rest_keys)
        shown = dict(gated.get("metadata") or {})
        return ServerText(str(gated.get("description", "")), shown, self.rest, self.rest_keys)


@dataclass(frozen=True)
class ServerPin:
    server: str
    pin_hash: str
    text: dict[str, Any]
    how: str
    approved_by: str


def server_pin(db: sqlite3.Connection, server: str) -> ServerPin | None:
    row = db.execute("SELECT * FROM server_pins WHERE server=?", (server,)).fetchone()
    if row is None:
        return None
    return ServerPin(row["server"], row["pin_hash"], json.loads(row["text"]), row["how"], row["approved_by"])


def put_server_pin(
    db: sqlite3.Connection, server: str, text: ServerText, *, how: str, actor: str, at: str
) -> None:
    db.execute(
        "INSERT OR REPLACE INTO server_pins(server, pin_hash, text, how, approved_by, approved_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (server, text.digest(), json.dumps(text.gated(), sort_keys=True), how, actor, at),
    )


def settle_server(db: sqlite3.Connection, server: str, actor: str, at: str) -> None:
    """The server's text matches its pin: its pending entries are superseded."""
    db.execute(
        "UPDATE quarantine SET state='superseded', decided_by=?, decided_at=? "
        "WHERE subject=? AND tool_id=? AND state='pending'",
        (actor, at, SUBJECT, server),
    )


def scan_server(server: str, text: ServerText, context: ScanContext | None = None) -> ScanResult:
    return verdict_of(server_findings(server, text.description, text.shown, context=context))


def completes_pin(pin: ServerPin, text: ServerText) -> bool:
    """``text`` is ``pin``'s text with keys a pin of an earlier version could not have (``NEW_KEYS``)."""
    pinned = dict(pin.text.get("metadata") or {})
    added = [k for k in NEW_KEYS if k in text.shown and k not in pinned]
    if not added or str(pin.text.get("description", "")) != text.description:
        return False
    return {k: v for k, v in text.shown.items() if k not in added} == pinned


class ServerGate:
    """Vets server text for one write, inside its transaction; see the module docstring."""

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        mode: TrustMode,
        actor: str,
        found_by: FoundBy,
        at: datetime,
        context: ScanContext | None = None,
    ) -> None:
        self.db, self.mode, self.actor, self.found_by, self.at = db, mode, actor, found_by, at
        self.context = context
        self.held: list[str] = []  # held anew by this write
        self.withheld: list[str] = []  # whose proposed text was not stored (held now or before)
        self.flagged: list[str] = []

    def vet(
        self,
        server: str,
        description: str,
        metadata: Mapping[str, Any],
        *,
        operator_keys: Collection[str] = (),
    ) -> tuple[str, dict[str, Any]]:
        """What to store for ``server``: the proposed description and metadata when they pass, else the
        pinned shown text with the proposal's other keys (and the proposal held)."""
        text = ServerText.of(description, metadata, operator_keys)
        at = self.at.isoformat()
        pin = server_pin(self.db, server)
        if pin is not None and pin.pin_hash == text.digest():
            settle_server(self.db, server, self.actor, at)
            return description, dict(metadata)
        if pin is None and text.reads_nothing():
            # nothing to vet, but pinned as it is: text that appears later is a change, held under tofu
            put_server_pin(self.db, server, text, how="empty", actor=self.actor, at=at)
            return description, dict(metadata)
        scan = scan_server(server, text, self.context)
        if scan.verdict == "flagged":
            self.flagged.append(server)
        completing = pin is not None and completes_pin(pin, text)
        trusted = self.mode == "pin" or (self.mode == "tofu" and (pin is None or completing))
        if trusted and not scan.held:
            how = "upgrade" if completing else {"pin": "approved", "tofu": "first use"}.get(self.mode, "")
            put_server_pin(self.db, server, text, how=how, actor=self.actor, at=at)
            settle_server(self.db, server, self.actor, at)
            return description, dict(metadata)
        self.withheld.append(server)
        reasons = self._reasons(pin, completing)
        reasons += [f"scanner: {r}" for r in scan.reasons] if scan.verdict != "clean" else []
        kind = "changed" if pin is not None else ("flagged" if scan.held else "new")
        self._hold(server, text, pin, kind, reasons)
        kept = text.with_shown(pin.text if pin is not None else None)
        return kept.description, kept.metadata()

    def _reasons(self, pin: ServerPin | None, completing: bool) -> list[str]:
        if completing:
            return [f"its {', '.join(NEW_KEYS)} are pinned for the first time and wait for approval"]
        if pin is not None:
            return ["the server's description, instructions or metadata changed since it was approved"]
        if self.mode == "hold":
            return [f"approval is required for server text that arrives by {self.found_by}"]
        return []

    def _hold(
        self, server: str, text: ServerText, pin: ServerPin | None, kind: str, reasons: list[str]
    ) -> None:
        held = Hold(
            subject=SUBJECT,
            tool_id=server,
            server=server,
            name="",
            kind=kind,
            old_hash=pin.pin_hash if pin else None,
            old_definition=pin.text if pin else None,
            new_hash=text.digest(),
            new_definition={**text.gated(), "operator_keys": sorted(text.rest_keys)},
            reasons=reasons,
        )
        if record_hold(self.db, held, found_by=self.found_by, actor=self.actor, at=self.at):
            self.held.append(server)


def pin_existing_servers(db: sqlite3.Connection, at: str) -> None:
    """Upgrading to version 7: every server's shown text is pinned as it is (``upgrade``); a discovered
    server's operator keys are left out, as its sync leaves them out."""
    for row in db.execute("SELECT name, description, metadata, creation_method FROM servers").fetchall():
        owned = OPERATOR_KEYS if row["creation_method"] == "discovered" else ()
        text = ServerText.of(row["description"], json.loads(row["metadata"]), owned)
        put_server_pin(db, row["name"], text, how="upgrade", actor="upgrade", at=at)


def apply_approved(
    db: sqlite3.Connection, server: str, proposal: Mapping[str, Any], actor: str, at: str
) -> bool:
    """Write an approved proposal's shown text onto the server (its other metadata keys stay as they
    are now) and pin it; settles the server's other pending entries. False: the server has no row (gone,
    or configured and started by the gateway before its first sync): the proposal is pinned all the
    same, so the text the gateway saw is approved."""
    row = db.execute("SELECT metadata FROM servers WHERE name=?", (server,)).fetchone()
    owned = frozenset(UNGATED) | frozenset(proposal.get("operator_keys") or ())
    if row is None:
        text = ServerText(
            str(proposal.get("description", "")), dict(proposal.get("metadata") or {}), {}, owned
        )
        put_server_pin(db, server, text, how="approved", actor=actor, at=at)
        settle_server(db, server, actor, at)
        return False
    current = json.loads(row["metadata"])
    text = ServerText(
        str(proposal.get("description", "")),
        dict(proposal.get("metadata") or {}),
        {k: v for k, v in current.items() if k in owned},
        owned,
    )
    db.execute(
        "UPDATE servers SET description=?, metadata=?, updated_at=?, modified_by=? WHERE name=?",
        (
            text.description,
            json.dumps(text.metadata(), sort_keys=True, ensure_ascii=False),
            at,
            actor,
            server,
        ),
    )
    put_server_pin(db, server, text, how="approved", actor=actor, at=at)
    settle_server(db, server, actor, at)
    return True
