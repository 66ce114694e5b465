"""What the index's documents are made from, read from the catalog store once: all of it, or only the
servers a write changed. A server or tool whose stored name breaks the naming rule
(tool_selector/core/names.py;
only an older version let one in) is left out, and named with what to do: a tool id that reads two ways
never reaches the index, and nothing stored is lost."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from tool_selector.catalog.store import CatalogStore
from tool_selector.core.errors import NotFoundError
from tool_selector.core.models import ServerProfile, ServerRecord, ToolEnrichment, ToolRecord
from tool_selector.core.names import name_problem

RENAME = (
    "it stays in the catalog but out of the index: delete it and add it again under a name that keeps the "
    "naming rule (docs/operator-guide.md, 'Names of servers and tools')"
)


@dataclass(frozen=True)
class Catalog:
    """What the documents are made from, read once."""

    servers: dict[str, ServerRecord]
    tools: list[ToolRecord]  # cleared only
    enrichments: dict[str, ToolEnrichment]
    profiles: dict[str, ServerProfile]
    left_out: dict[str, str] = field(default_factory=dict)  # tool id or "server:<name>" -> why, what to do


def read_catalog(store: CatalogStore, servers: Collection[str] | None = None) -> Catalog:
    """The whole catalog, or only what ``servers`` (the names a write changed) are made from."""
    if servers is not None:
        records: dict[str, ServerRecord] = {}
        tools: list[ToolRecord] = []
        enrichments: dict[str, ToolEnrichment] = {}
        profiles: dict[str, ServerProfile] = {}
        for name in sorted(set(servers)):
            try:
                records[name] = store.get_server(name)
            except NotFoundError:
                continue  # deleted: its documents go
            own = store.list_tools(name, cleared_only=True)
            tools.extend(own)
            for tool in own:
                enrichment = store.get_enrichment(tool.id)
                if enrichment is not None:
                    enrichments[tool.id] = enrichment
            profile = store.get_profile(name)
            if profile is not None:
                profiles[name] = profile
        return _within_the_rule(
            Catalog(servers=records, tools=tools, enrichments=enrichments, profiles=profiles)
        )
    return _within_the_rule(
        Catalog(
            servers={s.name: s for s in store.list_servers()},
            tools=store.list_tools(cleared_only=True),
            enrichments=store.get_enrichments(),
            profiles=store.get_profiles(),
        )
    )


def _within_the_rule(catalog: Catalog) -> Catalog:
    """``catalog`` without the servers and tools whose names break the rule, which ``left_out`` names."""
    left_out: dict[str, str] = {}
    servers = dict(catalog.servers)
    for name in catalog.servers:
        problem = name_problem(name, "server")
        if problem is not None:
            del servers[name]
            left_out[f"server:{name}"] = f"the server name {problem}; with its tools, {RENAME}"
    tools: list[ToolRecord] = []
    for tool in (t for t in catalog.tools if t.server in servers):
        problem = name_problem(tool.name, "tool")
        if problem is None:
            tools.append(tool)
        else:
            left_out[tool.id] = f"the tool name {problem}; {RENAME}"
    if not left_out:
        return catalog
    return Catalog(servers, tools, catalog.enrichments, catalog.profiles, left_out)
