"""The one owner of "is the index current?": it brings the search index in line with the catalog store
and is the only code that marks the index current, which it does only when every write succeeded.

The mark is the catalog hash the index was built from, kept in the catalog store under the
container's ``index_key`` (one per backend and Weaviate collection). Readers compare it with the
catalog's hash (``index_is_current``); a running process notices a new mark (services/shared/live.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from services.shared.container import Container
from tool_selector.errors import IndexDamagedError, IndexMissingError
from tool_selector.indexing import IndexSummary, index_catalog

logger = logging.getLogger(__name__)


def indexed_catalog_hash(container: Container) -> str | None:
    """The catalog hash the configured index was last brought fully in line with."""
    return container.store.get_meta(container.index_key)


def index_is_current(container: Container) -> bool:
    return indexed_catalog_hash(container) == container.store.catalog_hash()


def refresh_index(
    container: Container,
    *,
    rebuild: bool = False,
    drop: bool = False,
    only_if_stale: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Bring the index in line with the catalog (only changed documents are embedded) and mark it
    current when every write succeeded; after a partial write it stays marked stale, so the next
    refresh (or ``index build``) writes again.

    ``rebuild`` rewrites every document; ``drop`` first empties the backend (a Weaviate collection is
    dropped and made anew); ``only_if_stale`` does nothing when the index is current and not empty.
    A damaged index is dropped and made anew from the catalog, which holds everything it is made from.
    """
    store = container.store
    damaged = not drop and _damaged(container)
    if only_if_stale and not damaged and index_is_current(container) and container.backend.count() > 0:
        servers, tools = store.counts()
        return IndexSummary(
            documents=tools, unchanged=tools, servers_indexed=servers, servers_unchanged=servers
        )
    if drop or damaged:
        container.backend.drop()
    built_from = store.catalog_hash()  # taken first: a change made meanwhile leaves the index stale
    summary = index_catalog(
        store, container.backend, container.embedder, rebuild=rebuild or drop or damaged, progress=progress
    )
    if summary.errors:
        logger.warning(
            "the index is not marked current: %d document(s) failed to be written", len(summary.errors)
        )
    else:
        store.set_meta(container.index_key, built_from)
    return summary


def _damaged(container: Container) -> bool:
    try:
        container.backend.count()
    except IndexDamagedError as exc:
        logger.warning("%s Rebuilding it from the catalog.", exc.message)
        return True
    return False


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
    """``tool-selector index build``: refuses an empty catalog."""
    _require_tools(container)
    return refresh_index(container, rebuild=rebuild, progress=progress)


def rebuild_index(
    container: Container, *, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    """Empty the configured backend (a Weaviate collection is dropped and made anew) and fill it from
    the catalog store. Vectors come from the store's cache; only texts never embedded are embedded."""
    _require_tools(container)
    return refresh_index(container, drop=True, progress=progress)
