"""Paged browsing of the catalog's tools for the operator console (``GET /api/v1/tools``).

One SQL query per page, so a page costs the same at 2k tools and at 100k: a text filter (name,
description or server, case-insensitive, as typed: no wildcards), a server, and a state (an
enrichment state, or ``held``). Each row says whether the tool's enrichment matches its current
definition and whether the tool is held for approval (tool_selector/catalog/pins.py's rule).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from tool_selector.catalog.store import CatalogStore

EnrichmentState = Literal["current", "stale", "missing"]
ApprovalState = Literal["approved", "held"]
BrowseState = Literal["current", "stale", "missing", "held"]
DESCRIPTION_SHOWN = 300  # characters of a description in a list row


class ToolRow(BaseModel):
    id: str
    server: str
    name: str
    description: str
    content_hash: str
    enrichment: EnrichmentState
    approval: ApprovalState


_ROWS = """
SELECT t.id, t.server, t.name, substr(t.description, 1, ?) AS description, t.content_hash,
    CASE WHEN e.tool_id IS NULL THEN 'missing'
         WHEN json_extract(e.data, '$.tool_hash') = t.content_hash THEN 'current'
         ELSE 'stale' END AS enrichment,
    CASE WHEN p.pin_hash IS NULL OR p.pin_hash != t.definition_hash
              OR t.id IN (SELECT tool_id FROM quarantine WHERE state = 'pending')
         THEN 'held' ELSE 'approved' END AS approval
FROM tools t
LEFT JOIN enrichments e ON e.tool_id = t.id
LEFT JOIN tool_pins p ON p.tool_id = t.id
"""


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def browse_tools(
    store: CatalogStore,
    *,
    text: str | None = None,
    server: str | None = None,
    state: BrowseState | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[int, list[ToolRow]]:
    """How many tools match, and the page of them ordered by server and name."""
    where: list[str] = []
    params: list[object] = []
    if text:
        where.append(
            "(t.name LIKE ? ESCAPE '\\' OR t.description LIKE ? ESCAPE '\\' OR t.server LIKE ? ESCAPE '\\')"
        )
        params += [_like(text)] * 3
    if server:
        where.append("t.server = ?")
        params.append(server)
    inner = _ROWS + (" WHERE " + " AND ".join(where) if where else "")
    outer = "SELECT * FROM (" + inner + ")"
    if state == "held":
        outer += " WHERE approval = 'held'"
    elif state is not None:
        outer += " WHERE enrichment = ?"
        params.append(state)
    db = store.database.connection
    head = [DESCRIPTION_SHOWN]
    total = int(db.execute("SELECT COUNT(*) FROM (" + outer + ")", (*head, *params)).fetchone()[0])
    rows = db.execute(outer + " ORDER BY server, name LIMIT ? OFFSET ?", (*head, *params, limit, offset))
    return total, [ToolRow.model_validate(dict(row)) for row in rows.fetchall()]


class ServerRow(BaseModel):
    """A server as the console's list shows it: the description cut to its start."""

    name: str
    description: str
    creation_method: str
    updated_at: str
    tool_count: int
    held: int


_SERVERS = """
SELECT s.name, substr(s.description, 1, ?) AS description, s.creation_method, s.updated_at,
    COUNT(t.id) AS tool_count,
    COALESCE(SUM(CASE WHEN p.pin_hash IS NULL OR p.pin_hash != t.definition_hash
                           OR t.id IN (SELECT tool_id FROM quarantine WHERE state = 'pending')
                      THEN 1 ELSE 0 END), 0) AS held
FROM servers s
LEFT JOIN tools t ON t.server = s.name
LEFT JOIN tool_pins p ON p.tool_id = t.id
GROUP BY s.name
ORDER BY s.name
"""


def browse_servers(store: CatalogStore, *, description_chars: int = DESCRIPTION_SHOWN) -> list[ServerRow]:
    """Every server with its tool count and held tools, in one query (no metadata, no full text)."""
    rows = store.database.execute(_SERVERS, (description_chars,)).fetchall()
    return [ServerRow.model_validate(dict(row)) for row in rows]
