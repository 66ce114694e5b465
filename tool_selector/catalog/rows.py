"""The SQL rows of servers and tools, for the catalog writer (writer.py) only."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from tool_selector.core.errors import InvalidInputError, NotFoundError
from tool_selector.core.hashing import server_hash
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec


class ImportSummary(BaseModel):
    servers_added: int = 0
    servers_changed: int = 0
    servers_unchanged: int = 0
    servers_removed: int = 0
    tools_added: int = 0
    tools_changed: int = 0
    tools_unchanged: int = 0
    tools_removed: int = 0
    tools_pinned: int = Field(
        default=0, description="definitions approved by this import (first use or --approve)"
    )
    held: list[str] = Field(default_factory=list, description="tool ids held for approval by this import")
    flagged: list[str] = Field(
        default_factory=list, description="tool ids the scanner flagged but let through"
    )
    servers_skipped: list[str] = Field(
        default_factory=list, description="listed servers left alone: the operator's configuration owns them"
    )
    servers_held: list[str] = Field(
        default_factory=list,
        description="servers whose description or metadata this import proposed and that wait for approval",
    )

    @property
    def changed(self) -> bool:
        return bool(
            self.servers_added
            or self.servers_changed
            or self.servers_removed
            or self.tools_added
            or self.tools_changed
            or self.tools_removed
        )


def dump(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def insert_server(
    db: sqlite3.Connection,
    spec: ServerSpec,
    content_hash: str,
    method: CreationMethod,
    now: str,
    actor: str,
) -> None:
    db.execute(
        "INSERT INTO servers(name, description, metadata, content_hash, creation_method, created_at, "
        "updated_at, created_by, modified_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            spec.name,
            spec.description,
            dump(spec.metadata),
            content_hash,
            method.value,
            now,
            now,
            actor,
            actor,
        ),
    )


def insert_tool(db: sqlite3.Connection, spec: ToolSpec, method: CreationMethod, now: str, actor: str) -> None:
    db.execute(
        "INSERT INTO tools(id, server, name, description, input_schema, annotations, content_hash, "
        "creation_method, created_at, updated_at, created_by, modified_by, output_schema, definition_hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            spec.id,
            spec.server,
            spec.name,
            spec.description,
            dump(spec.input_schema),
            dump(spec.annotations),
            spec.compute_hash(),
            method.value,
            now,
            now,
            actor,
            actor,
            json.dumps(spec.output_schema, sort_keys=True, ensure_ascii=False),
            spec.definition_hash(),
        ),
    )


def update_tool_row(db: sqlite3.Connection, spec: ToolSpec, now: str, actor: str) -> None:
    db.execute(
        "UPDATE tools SET description=?, input_schema=?, annotations=?, content_hash=?, updated_at=?, "
        "modified_by=?, output_schema=?, definition_hash=? WHERE id=?",
        (
            spec.description,
            dump(spec.input_schema),
            dump(spec.annotations),
            spec.compute_hash(),
            now,
            actor,
            json.dumps(spec.output_schema, sort_keys=True, ensure_ascii=False),
            spec.definition_hash(),
            spec.id,
        ),
    )


def delete_server_rows(db: sqlite3.Connection, name: str) -> list[str]:
    tools = [r["id"] for r in db.execute("SELECT id FROM tools WHERE server=?", (name,))]
    db.execute("DELETE FROM tools WHERE server=?", (name,))
    db.execute("DELETE FROM servers WHERE name=?", (name,))
    db.execute("DELETE FROM discovery WHERE server=?", (name,))
    db.execute("DELETE FROM tool_pins WHERE server=?", (name,))
    db.execute("DELETE FROM quarantine WHERE server=?", (name,))
    db.execute("DELETE FROM server_pins WHERE server=?", (name,))
    return tools


def rehash_server(db: sqlite3.Connection, name: str, now: str, actor: str) -> None:
    hashes = [r["content_hash"] for r in db.execute("SELECT content_hash FROM tools WHERE server=?", (name,))]
    db.execute(
        "UPDATE servers SET content_hash=?, updated_at=?, modified_by=? WHERE name=?",
        (server_hash(hashes), now, actor, name),
    )


def grouped(servers: Sequence[ServerSpec], tools: Sequence[ToolSpec]) -> dict[str, list[ToolSpec]]:
    """The tools of each listed server; refuses names listed twice and tools of unlisted servers."""
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
    return by_server
