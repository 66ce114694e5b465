"""Deterministic registration: create, update and delete single servers and tools, each with its audit
record in the same transaction (so a mutation is never stored without its record, nor the reverse).

A server's content hash is the hash of its tools' hashes (as for discovered servers), so changing a
tool changes its server's hash, and the next sync re-profiles that server only.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

from tool_selector.catalog.admin import AuditRecord, write_audit
from tool_selector.catalog.store import CatalogStore
from tool_selector.errors import ConflictError, NotFoundError
from tool_selector.hashing import server_hash, sha256_of
from tool_selector.models import CreationMethod, ServerRecord, ServerSpec, ToolRecord, ToolSpec


def record_hash(record: ServerRecord | ToolRecord | None) -> str | None:
    """What the audit log stores as before/after: a hash of the record's content (not its timestamps)."""
    if record is None:
        return None
    if isinstance(record, ServerRecord):
        return sha256_of([record.name, record.description, record.metadata, record.content_hash])
    return sha256_of([record.id, record.content_hash, record.annotations])


def _now() -> datetime:
    return datetime.now(UTC)


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _rehash_server(db: sqlite3.Connection, name: str, now: str, actor: str) -> None:
    hashes = [r["content_hash"] for r in db.execute("SELECT content_hash FROM tools WHERE server=?", (name,))]
    db.execute(
        "UPDATE servers SET content_hash=?, updated_at=?, modified_by=? WHERE name=?",
        (server_hash(hashes), now, actor, name),
    )


def _audit(
    db: sqlite3.Connection,
    actor: str,
    action: str,
    target: str,
    before: ServerRecord | ToolRecord | None,
    after: ServerRecord | ToolRecord | None,
    at: datetime,
    **details: Any,
) -> None:
    write_audit(
        db,
        AuditRecord(
            at=at,
            actor=actor,
            action=action,
            target=target,
            before_hash=record_hash(before),
            after_hash=record_hash(after),
            details=details,
        ),
    )


def create_server(
    store: CatalogStore, spec: ServerSpec, *, method: CreationMethod, actor: str
) -> ServerRecord:
    at = _now()
    now = at.isoformat(timespec="microseconds")
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM servers WHERE name=?", (spec.name,)).fetchone() is not None:
            raise ConflictError(
                f"A server named {spec.name!r} already exists.",
                hint="Use matching_mode auto to get it back, or PATCH it.",
                name=spec.name,
            )
        db.execute(
            "INSERT INTO servers(name, description, metadata, content_hash, creation_method, created_at, "
            "updated_at, created_by, modified_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                spec.name,
                spec.description,
                _dump(spec.metadata),
                server_hash([]),
                method.value,
                now,
                now,
                actor,
                actor,
            ),
        )
        after = store.get_server(spec.name)
        _audit(db, actor, "server.create", f"server:{spec.name}", None, after, at, method=method.value)
    return after


def update_server(
    store: CatalogStore,
    name: str,
    *,
    description: str | None,
    metadata: dict[str, Any] | None,
    actor: str,
) -> tuple[ServerRecord, bool]:
    """Apply the given fields; returns the record and whether anything changed."""
    at = _now()
    with store.transaction() as db:
        before = store.get_server(name)
        new_description = before.description if description is None else description
        new_metadata = before.metadata if metadata is None else metadata
        if (new_description, new_metadata) == (before.description, before.metadata):
            return before, False
        db.execute(
            "UPDATE servers SET description=?, metadata=?, updated_at=?, modified_by=? WHERE name=?",
            (new_description, _dump(new_metadata), at.isoformat(timespec="microseconds"), actor, name),
        )
        after = store.get_server(name)
        _audit(db, actor, "server.update", f"server:{name}", before, after, at)
    return after, True


def delete_server(store: CatalogStore, name: str, *, cascade: bool, actor: str) -> list[str]:
    """Delete a server. With tools left, ``cascade`` must be true and they are deleted with it;
    returns the ids of the tools deleted."""
    at = _now()
    with store.transaction() as db:
        before = store.get_server(name)
        tools = [r["id"] for r in db.execute("SELECT id FROM tools WHERE server=? ORDER BY name", (name,))]
        if tools and not cascade:
            raise ConflictError(
                f"Server {name!r} still has {len(tools)} tool(s); deleting it would delete them too.",
                hint="Repeat with ?cascade=true to delete it with its tools, or delete the tools first.",
                tools=tools[:50],
            )
        db.execute("DELETE FROM tools WHERE server=?", (name,))
        db.execute("DELETE FROM servers WHERE name=?", (name,))
        db.execute("DELETE FROM discovery WHERE server=?", (name,))
        _audit(db, actor, "server.delete", f"server:{name}", before, None, at, tools_deleted=tools)
    return tools


def create_tool(store: CatalogStore, spec: ToolSpec, *, method: CreationMethod, actor: str) -> ToolRecord:
    at = _now()
    now = at.isoformat(timespec="microseconds")
    with store.transaction() as db:
        store.get_server(spec.server)  # NotFoundError when the server is not registered
        if db.execute("SELECT 1 FROM tools WHERE id=?", (spec.id,)).fetchone() is not None:
            raise ConflictError(
                f"Tool {spec.id!r} already exists.",
                hint="PATCH /api/v1/tools/{id} to change it, or pick another name.",
                tool_id=spec.id,
            )
        db.execute(
            "INSERT INTO tools(id, server, name, description, input_schema, annotations, content_hash, "
            "creation_method, created_at, updated_at, created_by, modified_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                spec.id,
                spec.server,
                spec.name,
                spec.description,
                _dump(spec.input_schema),
                _dump(spec.annotations),
                spec.compute_hash(),
                method.value,
                now,
                now,
                actor,
                actor,
            ),
        )
        _rehash_server(db, spec.server, now, actor)
        after = store.get_tool(spec.id)
        _audit(db, actor, "tool.create", f"tool:{spec.id}", None, after, at, method=method.value)
    return after


def update_tool(
    store: CatalogStore,
    tool_id: str,
    *,
    description: str | None,
    input_schema: dict[str, Any] | None,
    annotations: dict[str, Any] | None,
    actor: str,
) -> tuple[ToolRecord, bool]:
    at = _now()
    now = at.isoformat(timespec="microseconds")
    with store.transaction() as db:
        before = require_tool(store, tool_id)
        spec = ToolSpec(
            server=before.server,
            name=before.name,
            description=before.description if description is None else description,
            input_schema=before.input_schema if input_schema is None else input_schema,
            annotations=before.annotations if annotations is None else annotations,
        )
        if (spec.compute_hash(), spec.annotations) == (before.content_hash, before.annotations):
            return before, False
        db.execute(
            "UPDATE tools SET description=?, input_schema=?, annotations=?, content_hash=?, updated_at=?, "
            "modified_by=? WHERE id=?",
            (
                spec.description,
                _dump(spec.input_schema),
                _dump(spec.annotations),
                spec.compute_hash(),
                now,
                actor,
                tool_id,
            ),
        )
        _rehash_server(db, spec.server, now, actor)
        after = store.get_tool(tool_id)
        _audit(db, actor, "tool.update", f"tool:{tool_id}", before, after, at)
    return after, True


def delete_tool(store: CatalogStore, tool_id: str, *, actor: str) -> ToolRecord:
    at = _now()
    with store.transaction() as db:
        before = require_tool(store, tool_id)
        db.execute("DELETE FROM tools WHERE id=?", (tool_id,))
        _rehash_server(db, before.server, at.isoformat(timespec="microseconds"), actor)
        _audit(db, actor, "tool.delete", f"tool:{tool_id}", before, None, at)
    return before


def require_server(store: CatalogStore, name: str) -> ServerRecord:
    try:
        return store.get_server(name)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No server named {name!r} in the catalog.",
            hint="Register it first (POST /api/v1/servers); `tool-selector catalog list` shows the names.",
            name=name,
        ) from exc


def require_tool(store: CatalogStore, tool_id: str) -> ToolRecord:
    try:
        return store.get_tool(tool_id)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No tool with id {tool_id!r} in the catalog.",
            hint="Tool ids read 'server::tool'; GET /api/v1/tools/search?q=... finds them, "
            "POST /api/v1/tools registers one.",
            tool_id=tool_id,
        ) from exc
