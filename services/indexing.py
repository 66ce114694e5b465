"""Use case: bring the search index in line with the catalog store."""

from __future__ import annotations

from collections.abc import Callable

from services.container import Container
from tool_selector.errors import IndexMissingError
from tool_selector.indexing import IndexSummary, index_catalog


def build_index(
    container: Container, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    _, tools = container.store.counts()
    if tools == 0:
        raise IndexMissingError(
            "The catalog is empty, so there is nothing to index.",
            hint="Import one first: `tool-selector catalog import DIR`.",
        )
    summary = index_catalog(
        container.store, container.backend, container.embedder, rebuild=rebuild, progress=progress
    )
    container.store.set_meta("index_catalog_hash", container.store.catalog_hash())
    return summary
