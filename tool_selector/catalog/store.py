"""The catalog store: servers, tools, hashes, provenance and cached vectors in one SQLite file.

Every write runs in one transaction (WAL journal), so a crash or a kill leaves either the old or the
new state, never half of a batch. The search index can always be rebuilt from this file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from pydantic import BaseModel

from tool_selector.errors import InvalidInputError, NotFoundError, StoreError
from tool_selector.hashing import server_hash, sha256_of
from tool_selector.models import (
    CreationMethod,
    DiscoveryStatus,
    GatewaySessionStats,
    ServerProfile,
    ServerRecord,
    ServerSpec,
    ToolEnrichment,
    ToolRecord,
    ToolSpec,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 4  # 2 profiles, enrichments, discovery; 3 gateway_sessions; 4 provenance, keys, audit, jobs

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS servers (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    creation_method TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tools (
    id TEXT PRIMARY KEY,
    server TEXT NOT NULL REFERENCES servers(name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    annotations TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    creation_method TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (server, name)
);
CREATE INDEX IF NOT EXISTS tools_by_server ON tools(server);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);
CREATE TABLE IF NOT EXISTS profiles (
    server TEXT PRIMARY KEY REFERENCES servers(name) ON DELETE CASCADE,
    profile_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS enrichments (
    tool_id TEXT PRIMARY KEY REFERENCES tools(id) ON DELETE CASCADE,
    enrichment_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS discovery (
    server TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gateway_sessions (
    id TEXT PRIMARY KEY,
    last_seen_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at TEXT,
    last_used_at TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before_hash TEXT,
    after_hash TEXT,
    details TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    data TEXT NOT NULL
);
"""

# columns added after version 1: (table, column, declaration); added by ALTER TABLE when missing
_ADDED_COLUMNS = (
    ("servers", "created_by", "TEXT NOT NULL DEFAULT ''"),
    ("servers", "modified_by", "TEXT NOT NULL DEFAULT ''"),
    ("tools", "created_by", "TEXT NOT NULL DEFAULT ''"),
    ("tools", "modified_by", "TEXT NOT NULL DEFAULT ''"),
)


class ImportSummary(BaseModel):
    servers_added: int = 0
    servers_changed: int = 0
    servers_unchanged: int = 0
    servers_removed: int = 0
    tools_added: int = 0
    tools_changed: int = 0
    tools_unchanged: int = 0
    tools_removed: int = 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class CatalogStore:
    """SQLite-backed catalog. Use as a context manager or call ``close()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(path), timeout=30.0, isolation_level=None, check_same_thread=False
            )  # one connection per thread (services/shared/container.py); closed from any thread
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            if self._stored_version() != SCHEMA_VERSION:
                # only then take the write lock: opening a current file must not wait behind a writer
                self._db.executescript(_SCHEMA)  # idempotent DDL; executescript commits on its own
                with self._transaction():
                    self._add_columns()
                    self._check_schema_version()
        except sqlite3.DatabaseError as exc:
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

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; inside an open transaction it joins it (the outer one commits or
        rolls back everything, which makes a batch of single writes all-or-nothing)."""
        if self._db.in_transaction:
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")

    @property
    def db(self) -> sqlite3.Connection:
        """The connection, for the registry and admin tables (catalog/registry.py, catalog/admin.py)."""
        return self._db

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE ... COMMIT, rolled back on any exception)."""
        return self._transaction()

    def _stored_version(self) -> int | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:  # a new file: no meta table yet
            return None
        return None if row is None else int(row["value"])

    def _add_columns(self) -> None:
        for table, column, declaration in _ADDED_COLUMNS:
            present = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in present:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

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

    # -- writes ---------------------------------------------------------------------------------

    def import_catalog(
        self,
        servers: Sequence[ServerSpec],
        tools: Sequence[ToolSpec],
        *,
        creation_method: CreationMethod,
        prune: bool = False,
        actor: str = "",
    ) -> ImportSummary:
        """Insert or update servers and their tools in one transaction.

        A server listed here gets exactly the tools given for it: its tools not listed are removed.
        With ``prune``, servers not listed at all are removed too. Unchanged rows keep their timestamps.
        """
        twice = sorted(n for n, c in Counter(s.name for s in servers).items() if c > 1)
        twice_tools = sorted(i for i, c in Counter(t.id for t in tools).items() if c > 1)
        if twice or twice_tools:
            raise InvalidInputError(
                f"This import lists {'servers ' + ', '.join(map(repr, twice)) if twice else ''}"
                f"{' and ' if twice and twice_tools else ''}"
                f"{'tools ' + ', '.join(map(repr, twice_tools[:10])) if twice_tools else ''} more than once.",
                hint="List each server and each tool once; nothing was stored.",
            )
        by_server: dict[str, list[ToolSpec]] = {s.name: [] for s in servers}
        for tool in tools:
            if tool.server not in by_server:
                raise NotFoundError(
                    f"Tool {tool.id!r} belongs to server {tool.server!r}, which is not in this import.",
                    hint="Add the server to the servers list or fix the tool's server name.",
                )
            by_server[tool.server].append(tool)
        summary = ImportSummary()
        now = _now()
        with self._transaction() as db:
            for server in servers:
                self._upsert_server(db, server, by_server[server.name], creation_method, now, summary, actor)
            if prune:
                listed = set(by_server)
                for row in db.execute("SELECT name FROM servers").fetchall():
                    if row["name"] not in listed:
                        summary.tools_removed += self._delete_server(db, row["name"])
                        summary.servers_removed += 1
        return summary

    def _upsert_server(
        self,
        db: sqlite3.Connection,
        server: ServerSpec,
        tools: list[ToolSpec],
        method: CreationMethod,
        now: str,
        summary: ImportSummary,
        actor: str,
    ) -> None:
        new_hash = server_hash(t.compute_hash() for t in tools)
        row = db.execute(
            "SELECT content_hash, description, metadata FROM servers WHERE name=?", (server.name,)
        ).fetchone()
        metadata = json.dumps(server.metadata, sort_keys=True, ensure_ascii=False)
        if row is None:
            db.execute(
                "INSERT INTO servers(name, description, metadata, content_hash, creation_method, created_at, "
                "updated_at, created_by, modified_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (server.name, server.description, metadata, new_hash, method.value, now, now, actor, actor),
            )
            summary.servers_added += 1
        elif (row["content_hash"], row["description"], row["metadata"]) != (
            new_hash,
            server.description,
            metadata,
        ):
            db.execute(
                "UPDATE servers SET description=?, metadata=?, content_hash=?, updated_at=?, modified_by=? "
                "WHERE name=?",
                (server.description, metadata, new_hash, now, actor, server.name),
            )
            summary.servers_changed += 1
        else:
            summary.servers_unchanged += 1
        existing = {
            r["id"]: r["content_hash"]
            for r in db.execute("SELECT id, content_hash FROM tools WHERE server=?", (server.name,))
        }
        seen: set[str] = set()
        for tool in tools:
            seen.add(tool.id)
            values = (
                tool.description,
                json.dumps(tool.input_schema, sort_keys=True, ensure_ascii=False),
                json.dumps(tool.annotations, sort_keys=True, ensure_ascii=False),
                tool.compute_hash(),
            )
            if tool.id not in existing:
                db.execute(
                    "INSERT INTO tools(id, server, name, description, input_schema, annotations, "
                    "content_hash, creation_method, created_at, updated_at, created_by, modified_by) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tool.id, tool.server, tool.name, *values, method.value, now, now, actor, actor),
                )
                summary.tools_added += 1
            elif existing[tool.id] != values[3]:
                db.execute(
                    "UPDATE tools SET description=?, input_schema=?, annotations=?, content_hash=?, "
                    "updated_at=?, modified_by=? WHERE id=?",
                    (*values, now, actor, tool.id),
                )
                summary.tools_changed += 1
            else:
                summary.tools_unchanged += 1
        for gone in set(existing) - seen:
            db.execute("DELETE FROM tools WHERE id=?", (gone,))
            summary.tools_removed += 1

    def _delete_server(self, db: sqlite3.Connection, name: str) -> int:
        removed = db.execute("DELETE FROM tools WHERE server=?", (name,)).rowcount
        db.execute("DELETE FROM servers WHERE name=?", (name,))
        db.execute("DELETE FROM discovery WHERE server=?", (name,))
        return int(removed)

    def delete_server(self, name: str) -> int:
        """Remove a server and all its tools; returns how many tools went with it."""
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM servers WHERE name=?", (name,)).fetchone() is None:
                raise NotFoundError(f"No server named {name!r} in the catalog.", hint="See `catalog list`.")
            return self._delete_server(db, name)

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

    def list_tools(self, server: str | None = None) -> list[ToolRecord]:
        if server is None:
            rows = self._db.execute("SELECT * FROM tools ORDER BY server, name").fetchall()
        else:
            rows = self._db.execute("SELECT * FROM tools WHERE server=? ORDER BY name", (server,)).fetchall()
        return [_tool_record(r) for r in rows]

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
        content hash, and every stored enrichment's hash."""
        rows = self._db.execute("SELECT name, description, metadata, content_hash FROM servers ORDER BY name")
        servers = [[r["name"], r["description"], r["metadata"], r["content_hash"]] for r in rows]
        enriched = self._db.execute("SELECT tool_id, enrichment_hash FROM enrichments ORDER BY tool_id")
        return sha256_of([servers, [[r["tool_id"], r["enrichment_hash"]] for r in enriched]])

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
            present = {r["id"] for r in db.execute("SELECT id FROM tools")}
            db.executemany(
                "INSERT OR REPLACE INTO enrichments(tool_id, enrichment_hash, data) VALUES (?, ?, ?)",
                [
                    (e.tool_id, e.enrichment_hash, e.model_dump_json())
                    for e in enrichments
                    if e.tool_id in present
                ],
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

    def get_gateway_sessions(self, limit: int = 50) -> list[GatewaySessionStats]:
        """The most recently seen gateway sessions first."""
        rows = self._db.execute(
            "SELECT data FROM gateway_sessions ORDER BY last_seen_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [GatewaySessionStats.model_validate_json(r["data"]) for r in rows]

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


def _server_record(row: sqlite3.Row) -> ServerRecord:
    data: dict[str, Any] = dict(row)
    data["metadata"] = json.loads(data["metadata"])
    return ServerRecord.model_validate(data)


def _tool_record(row: sqlite3.Row) -> ToolRecord:
    data: dict[str, Any] = dict(row)
    data.pop("id")
    data["input_schema"] = json.loads(data["input_schema"])
    data["annotations"] = json.loads(data["annotations"])
    return ToolRecord.model_validate(data)
