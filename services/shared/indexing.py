"""Use case: bring the search index in line with the catalog store."""

from __future__ import annotations

from collections.abc import Callable

from services.shared.container import Container
from tool_selector.errors import IndexMissingError
from tool_selector.indexing import IndexSummary, index_catalog


def _require_tools(container: Container) -> None:
    _, tools = container.store.counts()
    if tools == 0:
        raise IndexMissingError(
            "The catalog is empty, so there is nothing to index.",
            hint="Import one first: `tool-selector catalog import DIR`.",
        )


def build_index(
    container: Container, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    _require_tools(container)
    summary = index_catalog(
        container.store, container.backend, container.embedder, rebuild=rebuild, progress=progress
    )
    container.mark_index_current()
    return summary


def rebuild_index(
    container: Container, *, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    """Empty the configured backend (a Weaviate collection is dropped and made anew) and fill it from
    the catalog store. Vectors come from the store's cache; only texts never embedded are embedded."""
    _require_tools(container)
    container.backend.drop()
    return build_index(container, rebuild=True, progress=progress)
