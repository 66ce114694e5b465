"""The catalog view: one in-memory snapshot of the catalog that answers each ``catalog_query`` type."""

from __future__ import annotations

import difflib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from services.gateway.catalog_query.entries import ServerEntry, ToolEntry, server_entry
from services.gateway.catalog_query.filters import DEFAULT_LIMIT, parse_filters
from services.gateway.catalog_query.matching import matching_servers, matching_tools
from services.gateway.catalog_query.messages import (
    has_tool_message,
    no_tool_message,
    profile_message,
    servers_message,
    tools_message,
    unknown_server,
)
from tool_selector.catalog.store import CatalogStore
from tool_selector.core.models import DiscoveryStatus, ToolRecord
from tool_selector.trust.shown import server_purpose

logger = logging.getLogger(__name__)

LIST_DESCRIPTION_CHARS = 400  # servers and tools lists: the start of the original description
TOOL_DESCRIPTION_CHARS = 1000  # check_tool: the best tools' original descriptions
MAX_PAIRS_SHOWN = 10
CHECK_TOOLS_SHOWN = 5


class CatalogView:
    """An in-memory snapshot of the catalog that answers ``catalog_query`` without database reads."""

    def __init__(
        self,
        entries: Sequence[ServerEntry],
        *,
        catalog_hash: str,
        discovery: Mapping[str, DiscoveryStatus],
    ) -> None:
        self.catalog_hash = catalog_hash
        self.servers: dict[str, ServerEntry] = {e.record.name: e for e in entries}
        self._all_tools = [t for e in entries for t in e.tools]
        self.tool_count = len(self._all_tools)
        self._discovery = dict(discovery)
        folded: dict[str, list[str]] = {}
        for name in self.servers:
            folded.setdefault(name.strip().casefold(), []).append(name)
        self._folded = {k: v[0] for k, v in folded.items() if len(v) == 1}

    @classmethod
    def load(cls, store: CatalogStore) -> CatalogView:
        """Read the whole catalog once; retried when a sync wrote in the middle of the reads."""
        started = time.perf_counter()
        for _ in range(3):
            before = store.catalog_hash()
            view = cls._read(store, before)
            if store.catalog_hash() == before:
                break
            logger.info("the catalog changed while the view was read; reading it again")
        logger.info(
            "catalog view: %d servers, %d tools in %.0f ms",
            len(view.servers),
            view.tool_count,
            (time.perf_counter() - started) * 1000,
        )
        return view

    @classmethod
    def _read(cls, store: CatalogStore, catalog_hash: str) -> CatalogView:
        tools: dict[str, list[ToolRecord]] = {}
        for tool in store.list_tools(cleared_only=True):  # held tools are not shown to agents
            tools.setdefault(tool.server, []).append(tool)
        profiles, enrichments, discovery = (
            store.get_profiles(),
            store.get_enrichments(),
            store.get_discovery(),
        )
        entries = [
            server_entry(s, tools.get(s.name, []), profiles.get(s.name), discovery.get(s.name), enrichments)
            for s in store.list_servers()
        ]
        return cls(entries, catalog_hash=catalog_hash, discovery=discovery)

    def is_current(self, store: CatalogStore) -> bool:
        """Whether the store still holds what this view was built from (hash and discovery states)."""
        return store.catalog_hash() == self.catalog_hash and store.get_discovery() == self._discovery

    def query(self, query_type: str, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer one query; the result is JSON-ready. Raises InvalidInputError or NotFoundError."""
        kind, parsed = parse_filters(query_type, filters)
        handler = {
            "servers": self._query_servers,
            "tools": self._query_tools,
            "check_tool": self._check_tool,
            "profile": self._profile,
        }[kind]
        return {"query_type": kind, "filters": parsed, **handler(parsed)}

    def _query_servers(self, f: Mapping[str, Any]) -> dict[str, Any]:
        hits = matching_servers(f, self.servers.values())
        items = [_server_item(e) for _, e in hits[: f.get("limit", DEFAULT_LIMIT)]]
        return _listing(items, len(hits), f, servers_message(len(hits), len(items), len(self.servers)))

    def _query_tools(self, f: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.server(f["server"]) if "server" in f else None
        pool = entry.tools if entry else self._all_tools
        hits = matching_tools(f, pool)
        matched = bool(f.get("action") or f.get("entity"))
        items = [
            _tool_item(t, where if matched else None) for _, where, t in hits[: f.get("limit", DEFAULT_LIMIT)]
        ]
        message = tools_message(len(hits), len(items), entry.record.name if entry else None)
        return _listing(items, len(hits), f, message)

    def _check_tool(self, f: Mapping[str, Any]) -> dict[str, Any]:
        """has_tool when a tool's action_entities or name say so; a tool whose description alone
        mentions it is listed as a maybe, with servers that clearly have one."""
        entry = self.server(f["server"])
        name = entry.record.name
        hits = matching_tools(f, entry.tools)[:CHECK_TOOLS_SHOWN]
        what = " ".join(x.strip() for x in (f["action"], f.get("entity", "")) if x)
        strong = [t.name for _, where, t in hits if where != "description"]
        elsewhere = [] if strong else self._elsewhere(f, name)
        if strong:
            message = has_tool_message(name, strong)
        else:
            message = no_tool_message(name, what, f, elsewhere, hits[0][2].name if hits else None)
        return {
            "server": name,
            "action": f["action"],
            "entity": f.get("entity"),
            "has_tool": bool(strong),
            "tools": [
                {"name": t.name, "description": _clip(t.description, TOOL_DESCRIPTION_CHARS), "match": where}
                for _, where, t in hits
            ],
            "other_servers": elsewhere,
            "message": message,
        }

    def _elsewhere(self, f: Mapping[str, Any], skip: str) -> list[dict[str, Any]]:
        """Up to 3 other servers with a tool that matches by action_entities or name."""
        best: dict[str, tuple[float, str]] = {}
        for score, where, tool in matching_tools(f, self._all_tools):
            if tool.server != skip and where != "description" and tool.server not in best:
                best[tool.server] = (score, tool.name)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0].casefold()))[:3]
        return [{"server": s, "tool": t} for s, (_, t) in ranked]

    def _profile(self, f: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.server(f["server"])
        name = entry.record.name
        return {
            "server": name,
            "description": _purpose(entry),
            "domain": entry.domain,
            "keywords": entry.keywords(),
            "tool_count": len(entry.tools),
            "tools": [t.name for t in entry.tools],
            "discovery": entry.discovery.model_dump(mode="json") if entry.discovery else None,
            "profile": entry.profile.model_dump(mode="json") if entry.profile else None,
            "profile_missing": entry.profile is None,
            "profile_current": entry.profile_current,
            "message": profile_message(name, entry.profile is not None, entry.profile_current),
        }

    def server(self, name: str) -> ServerEntry:
        """The server of this exact name (or the only one equal to it ignoring case)."""
        entry = self.servers.get(name) or self.servers.get(self._folded.get(name.strip().casefold(), ""))
        if entry is None:
            raise unknown_server(name, self.closest_names(name))
        return entry

    def closest_names(self, name: str, n: int = 5) -> list[str]:
        folded = name.strip().casefold()
        inside = sorted((s for s in self.servers if folded in s.casefold()), key=len)
        similar = difflib.get_close_matches(folded, list(self._folded), n=n, cutoff=0.5)
        return list(dict.fromkeys([*inside, *(self._folded[s] for s in similar)]))[:n]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _purpose(entry: ServerEntry) -> str:
    """The server's one-line purpose, never its instructions (tool_selector/trust/shown.py)."""
    return server_purpose(entry.record.description, entry.record.metadata, [t.name for t in entry.tools])


def _server_item(entry: ServerEntry) -> dict[str, Any]:
    return {
        "name": entry.record.name,
        "description": _clip(_purpose(entry), LIST_DESCRIPTION_CHARS),
        "domain": entry.domain,
        "tool_count": len(entry.tools),
        "keywords": entry.keywords(),
        "discovery": entry.discovery.state if entry.discovery else None,
    }


def _tool_item(tool: ToolEntry, match: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "server": tool.server,
        "name": tool.name,
        "description": _clip(tool.description, LIST_DESCRIPTION_CHARS),
        "action_entities": list(tool.action_entities[:MAX_PAIRS_SHOWN]),
        "input_properties": list(tool.properties),
        "required": list(tool.required),
    }
    if match is not None:
        item["match"] = match
    return item


def _listing(items: list[dict[str, Any]], total: int, f: Mapping[str, Any], message: str) -> dict[str, Any]:
    return {
        "total": total,
        "returned": len(items),
        "limit": f.get("limit", DEFAULT_LIMIT),
        "items": items,
        "message": message,
    }
