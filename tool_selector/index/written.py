"""What a write asks of the search backend (tool_selector/index/build.py): the ids it holds for a few
servers, and one write for a refresh's tool and server documents, so that a write costs what it changed
and not the size of the index."""

from __future__ import annotations

from collections.abc import Collection

from tool_selector.core.models import ToolDocument
from tool_selector.core.names import server_of
from tool_selector.search.backend import ScopedIds, SearchBackend, Target


def indexed_ids(
    backend: SearchBackend, servers: Collection[str] | None, target: Target = "tools"
) -> dict[str, str]:
    """The ids the backend holds with their text hashes: all of them, or those of ``servers``'
    documents (a tool document's id is ``<server>::<name>``, a server document's the server's name)."""
    if servers is None:
        return backend.ids(target=target)
    if isinstance(backend, ScopedIds):
        return backend.ids_of_servers(servers, target=target)
    scope = set(servers)
    held = backend.ids(target=target)
    return {i: h for i, h in held.items() if (server_of(i) if target == "tools" else i) in scope}


def upsert_documents(
    backend: SearchBackend, tools: list[ToolDocument], servers: list[ToolDocument]
) -> tuple[dict[str, str], dict[str, str]]:
    """Write tool and server documents in one call (the embedded index: one delta), or in two when a
    server's name is also a tool's id (``a::b``, the server, and tool ``b`` of ``a``); the errors of each."""
    tool_ids = {d.id for d in tools}
    if not tool_ids.isdisjoint(d.id for d in servers):
        return (
            dict(backend.upsert(tools).errors) if tools else {},
            dict(backend.upsert(servers).errors) if servers else {},
        )
    errors = backend.upsert([*tools, *servers]).errors
    tool_errors = {i: e for i, e in errors.items() if i in tool_ids}
    return tool_errors, {i: e for i, e in errors.items() if i not in tool_ids}
