"""The catalog store: servers, tools, hashes, provenance and cached vectors in one SQLite file.

Every write runs in one transaction (WAL journal), so a crash or a kill leaves either the old or the
new state, never half of a batch. The search index can always be rebuilt from this file.

The catalog package is the only code with SQL. This module reads, and writes what is derived (vectors,
profiles, enrichments, discovery states, meta); servers and tools change only through
``CatalogWriter`` (writer.py), which audits each change in its transaction; keys and jobs live in
admin.py. The connection never leaves the package.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from tool_selector.catalog import changes, database, pins, server_pins
from tool_selector.catalog import memory as rows
from tool_selector.catalog.schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION
from tool_selector.core.errors import CatalogDamagedError, NotFoundError, StoreError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.json_limits import read_json
from tool_selector.core.models import (
    DiscoveryStatus,
    GatewaySessionStats,
    ServerProfile,
    ServerRecord,
    ToolEnrichment,
    ToolRecord,
)
from tool_selector.trust.models import EntryState, Pin, QuarantineEntry

logger = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class CatalogStore:
    """SQLite-backed catalog. Use as a context manager or call ``close()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            database.prepare(path)  # makes a missing file; refuses one that cannot be a catalog
            self._db = sqlite3.connect(
                str(path), timeout=30.0, isolation_level=None, check_same_thread=False
            )  # one connection per thread (services/root/container.py); closed from any thread
            self._db.row_factory = sqlite3.Row
            self.database = database.Database(self._db, path, changes.transaction_ended)
            database.check_ours(self._db, path, self._stored_version())  # before anything writes to it
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            stored = self._stored_version()
            if stored != SCHEMA_VERSION:
                # only then take the write lock: opening a current file must not wait behind a writer
                self._db.executescript(SCHEMA)  # idempotent DDL; executescript commits on its own
                with self._transaction():
                    database.mark(self._db)
                    self._add_columns()
                    rows.upgrade(self._db)  # before 9: each choice gets its principal (local)
                    self._check_schema_version()
                    if stored is not None:
                        self._pin_existing(stored)
        except (sqlite3.DatabaseError, CatalogDamagedError) as exc:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            if isinstance(exc, CatalogDamagedError):
                raise
            if not isinstance(exc, sqlite3.OperationalError):  # malformed, or not a database at all
                raise database.damaged(path, f"is damaged ({exc})") from exc
            raise StoreError(
                f"Cannot open the catalog database {path}: {exc}.",
                hint="Check the file is a tool-selector catalog and the folder is writable.",
                path=str(path),
            ) from exc

    # -- plumbing -------------------------------------------------------------------------------

    def __enter__(self) -> CatalogStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.database.transaction()  # this module's own writes; siblings use store.database

    def _stored_version(self) -> int | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:  # a new file: no meta table yet
            return None
        return None if row is None else int(row["value"])

    def _add_columns(self) -> None:
        for table, column, declaration in ADDED_COLUMNS:
            present = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in present:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def _pin_existing(self, stored: int) -> None:
        """Upgrading from before version 5 (trust) or 7 (server pins): every tool (its definition hash)
        and server (its shown text) already stored is pinned as it is, by ``upgrade``, so an existing
        catalog keeps working and later changes are held."""
        at = _now()
        if stored < 7:
            server_pins.pin_existing_servers(self._db, at)
        for row in self._db.execute("SELECT * FROM tools").fetchall() if stored < 5 else ():
            tool = _tool_record(row)
            digest = tool.definition_hash()
            self._db.execute("UPDATE tools SET definition_hash=? WHERE id=?", (digest, tool.id))
            self._db.execute(
                "INSERT OR IGNORE INTO tool_pins(tool_id, server, name, pin_hash, definition, how, "
                "approved_by, approved_at) VALUES (?, ?, ?, ?, ?, 'upgrade', 'upgrade', ?)",
                (tool.id, tool.server, tool.name, digest, json.dumps(tool.definition(), sort_keys=True), at),
            )

    def _check_schema_version(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(row["value"]) < SCHEMA_VERSION:  # the new tables were created above
            self._db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        elif int(row["value"]) > SCHEMA_VERSION:
            raise StoreError(
                f"The catalog database {self.path} has schema version {row['value']}, newer than this "
                f"tool-selector ({SCHEMA_VERSION}).",
                hint="Upgrade tool-selector or point TOOL_SELECTOR_DATA_DIR at another folder.",
            )

    # -- reads ----------------------------------------------------------------------------------

    def list_servers(self) -> list[ServerRecord]:
        rows = self._db.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM tools t WHERE t.server = s.name) AS tool_count "
            "FROM servers s ORDER BY s.name"
        ).fetchall()
        return [_server_record(r) for r in rows]

    def get_server(self, name: str) -> ServerRecord:
        row = self._db.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM tools t WHERE t.server = s.name) AS tool_count "
            "FROM servers s WHERE s.name=?",
            (name,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"No server named {name!r} in the catalog.", hint="See `catalog list`.")
        return _server_record(row)

    def list_tools(self, server: str | None = None, *, cleared_only: bool = False) -> list[ToolRecord]:
        """The stored tools; ``cleared_only`` leaves out the held ones (what the index, enrichment and
        agents may see)."""
        if server is None:
            rows = self._db.execute("SELECT * FROM tools ORDER BY server, name").fetchall()
        else:
            rows = self._db.execute("SELECT * FROM tools WHERE server=? ORDER BY name", (server,)).fetchall()
        held = pins.held_tool_ids(self._db, server) if cleared_only else set()
        return [_tool_record(r) for r in rows if r["id"] not in held]

    def tool_names(self) -> list[tuple[str, str]]:
        """Every stored tool as (server, name): what a new tool's name is compared with."""
        return [(str(r[0]), str(r[1])) for r in self._db.execute("SELECT server, name FROM tools")]

    def get_tool(self, tool_id: str) -> ToolRecord:
        row = self._db.execute("SELECT * FROM tools WHERE id=?", (tool_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"No tool with id {tool_id!r} in the catalog.")
        return _tool_record(row)

    def counts(self) -> tuple[int, int]:
        servers = self._db.execute("SELECT COUNT(*) FROM servers").fetchone()[0]
        tools = self._db.execute("SELECT COUNT(*) FROM tools").fetchone()[0]
        return int(servers), int(tools)

    def catalog_hash(self) -> str:
        """A hash over what the index is built from: every server's name, description, metadata and
        content hash, every stored enrichment's hash, which tools are held, and what of each server
        profile a server document reads (its hash, domain, keywords and capabilities)."""
        rows = self._db.execute("SELECT name, description, metadata, content_hash FROM servers ORDER BY name")
        servers = [[r["name"], r["description"], r["metadata"], r["content_hash"]] for r in rows]
        enriched = self._db.execute("SELECT tool_id, enrichment_hash FROM enrichments ORDER BY tool_id")
        held = sorted(pins.held_tool_ids(self._db))
        profiles = self._db.execute(
            "SELECT server, profile_hash, json_extract(data, '$.domain'), "
            "json_extract(data, '$.semantic_keywords'), json_extract(data, '$.primary_capabilities') "
            "FROM profiles ORDER BY server"
        )
        return sha256_of(
            [
                servers,
                [[r["tool_id"], r["enrichment_hash"]] for r in enriched],
                held,
                [list(r) for r in profiles],
            ]
        )

    # -- trust: pins and the quarantine (catalog/pins.py) ----------------------------------------

    def held_tool_ids(self, server: str | None = None) -> set[str]:
        """Tools kept from the index and from agents: no matching pin, or a pending quarantine entry
        (of ``server`` only, when given: what one write needs to know)."""
        return pins.held_tool_ids(self._db, server)

    def pins(self, server: str) -> dict[str, Pin]:
        return pins.pins_of(self._db, server)

    def quarantine_entries(
        self, *, states: Sequence[EntryState] = ("pending",), server: str | None = None
    ) -> list[QuarantineEntry]:
        return pins.list_entries(self._db, states=states, server=server)

    def quarantine_entry(self, entry_id: str) -> QuarantineEntry:
        entry = pins.get_entry(self._db, entry_id.strip())
        if entry is None:
            raise NotFoundError(
                f"No quarantine entry {entry_id!r}.",
                hint="`tool-selector quarantine list --all` shows every entry and its id.",
                entry=entry_id,
            )
        return entry

    # -- vector cache ---------------------------------------------------------------------------

    def get_vectors(self, model: str, text_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(text_hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT text_hash, data FROM vectors WHERE model=? AND text_hash IN ({marks})",
                (model, *chunk),
            ):
                found[row["text_hash"]] = np.frombuffer(row["data"], dtype=np.float32).copy()
        return found

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors(model, text_hash, dim, data) VALUES (?, ?, ?, ?)",
                [
                    (model, h, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
                    for h, v in vectors.items()
                ],
            )

    # -- profiles, enrichments, discovery ------------------------------------------------------

    def put_profiles(self, profiles: Sequence[ServerProfile]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO profiles(server, profile_hash, data) VALUES (?, ?, ?)",
                [(p.server_name, p.profile_hash, p.model_dump_json()) for p in profiles],
            )

    def get_profiles(self) -> dict[str, ServerProfile]:
        rows = self._db.execute("SELECT data FROM profiles").fetchall()
        profiles = (ServerProfile.model_validate_json(r["data"]) for r in rows)
        return {p.server_name: p for p in profiles}

    def get_profile(self, server: str) -> ServerProfile | None:
        row = self._db.execute("SELECT data FROM profiles WHERE server=?", (server,)).fetchone()
        return None if row is None else ServerProfile.model_validate_json(row["data"])

    def put_enrichments(self, enrichments: Sequence[ToolEnrichment]) -> None:
        """Store enrichments in one transaction; a tool that left the catalog meanwhile is skipped."""
        with self._transaction() as db:
            # only these tools are looked up (reading every tool id made a sync of n servers O(n x N))
            db.executemany(
                "INSERT OR REPLACE INTO enrichments(tool_id, enrichment_hash, data) "
                "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM tools WHERE id = ?)",
                [(e.tool_id, e.enrichment_hash, e.model_dump_json(), e.tool_id) for e in enrichments],
            )

    def enrichment_hashes(self) -> dict[str, str]:
        rows = self._db.execute("SELECT tool_id, enrichment_hash FROM enrichments").fetchall()
        return {r["tool_id"]: r["enrichment_hash"] for r in rows}

    def get_enrichments(self) -> dict[str, ToolEnrichment]:
        rows = self._db.execute("SELECT data FROM enrichments").fetchall()
        items = (ToolEnrichment.model_validate_json(r["data"]) for r in rows)
        return {e.tool_id: e for e in items}

    def get_enrichment(self, tool_id: str) -> ToolEnrichment | None:
        row = self._db.execute("SELECT data FROM enrichments WHERE tool_id=?", (tool_id,)).fetchone()
        return None if row is None else ToolEnrichment.model_validate_json(row["data"])

    def clear_enrichments(self) -> int:
        """Forget every profile and enrichment (the next sync makes them again)."""
        with self._transaction() as db:
            db.execute("DELETE FROM profiles")
            return int(db.execute("DELETE FROM enrichments").rowcount)

    def put_discovery(self, statuses: Sequence[DiscoveryStatus]) -> None:
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO discovery(server, state, data) VALUES (?, ?, ?)",
                [(s.server, s.state, s.model_dump_json()) for s in statuses],
            )

    def get_discovery(self) -> dict[str, DiscoveryStatus]:
        rows = self._db.execute("SELECT data FROM discovery").fetchall()
        items = (DiscoveryStatus.model_validate_json(r["data"]) for r in rows)
        return {s.server: s for s in items}

    def delete_discovery(self, names: Sequence[str]) -> None:
        with self._transaction() as db:
            db.executemany("DELETE FROM discovery WHERE server=?", [(n,) for n in names])

    def put_gateway_session(self, stats: GatewaySessionStats) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO gateway_sessions(id, last_seen_at, data) VALUES (?, ?, ?)",
                (stats.session_id, stats.last_seen_at.isoformat(), stats.model_dump_json()),
            )

    def get_gateway_sessions(self, limit: int = 50) -> list[GatewaySessionStats]:  # latest first
        rows = self._db.execute(
            "SELECT data FROM gateway_sessions ORDER BY last_seen_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [GatewaySessionStats.model_validate_json(r["data"]) for r in rows]

    # -- the change log (schema.py: catalog_changes, filled by triggers) --------------------------

    def change_seq(self) -> int:
        """The last change's number (0 before any); pruned changes keep their numbers used."""
        return changes.change_seq(self._db)

    def servers_changed_since(self, seq: int) -> set[str] | None:
        """The servers changed after change ``seq``; None when the log was pruned past it (redo all)."""
        return changes.servers_changed_since(self._db, seq)

    def prune_changes(self, keep_after: int) -> None:
        """Forget the changes up to ``keep_after`` (every index has caught up with them)."""
        with self._transaction() as db:
            db.execute("DELETE FROM catalog_changes WHERE seq <= ?", (keep_after,))
            db.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('catalog_changes_pruned_to', ?)",
                (str(keep_after),),
            )

    def meta_items(self, suffix: str) -> list[tuple[str, str]]:  # the entries whose key ends so
        rows = self._db.execute("SELECT key, value FROM meta").fetchall()
        return [(str(r["key"]), str(r["value"])) for r in rows if str(r["key"]).endswith(suffix)]

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


# a JSON value stored before the depth limit (core/json_limits.py) reads as withheld, saying what to do
REPAIR_SERVER = "Give the server metadata within the limit (PATCH it, or import it again)."
REPAIR_TOOL = (
    "Delete the tool (DELETE /api/v1/tools/{id}) and register or import it again within the limit; a "
    "configured server's tool is left out by the next sync."
)


def _server_record(row: sqlite3.Row) -> ServerRecord:
    data: dict[str, Any] = dict(row)
    data["metadata"] = read_json(data["metadata"], "metadata", REPAIR_SERVER)
    return ServerRecord.model_validate(data)


def _tool_record(row: sqlite3.Row) -> ToolRecord:
    data: dict[str, Any] = dict(row)
    data.pop("id")
    for key in ("input_schema", "annotations"):
        data[key] = read_json(data[key], key, REPAIR_TOOL)
    data["output_schema"] = read_json(data.get("output_schema") or "null", "output_schema", REPAIR_TOOL)
    data.pop("definition_hash", None)
    return ToolRecord.model_validate(data)
