"""What the index's documents are made from, read from the catalog store once: all of it, or only the
servers a write changed."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from tool_selector.catalog.store import CatalogStore
from tool_selector.errors import NotFoundError
from tool_selector.models import ServerProfile, ServerRecord, ToolEnrichment, ToolRecord


@dataclass(frozen=True)
class Catalog:
    """What the documents are made from, read once."""

    servers: dict[str, ServerRecord]
    tools: list[ToolRecord]  # cleared only
    enrichments: dict[str, ToolEnrichment]
    profiles: dict[str, ServerProfile]


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
        return Catalog(servers=records, tools=tools, enrichments=enrichments, profiles=profiles)
    return Catalog(
        servers={s.name: s for s in store.list_servers()},
        tools=store.list_tools(cleared_only=True),
        enrichments=store.get_enrichments(),
        profiles=store.get_profiles(),
    )
