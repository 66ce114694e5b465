"""The one owner of "is the index current?": it brings the search index in line with the catalog store
and is the only code that marks the index current, which it does only when every write succeeded.

The mark (tool_selector/index/mark.py) is the number of the last catalog change the index was
brought in line with (the store's change log, filled by triggers: tool_selector/catalog/schema.py),
kept in the catalog store under the container's ``index_key`` + ``#seq`` (one per backend and Weaviate
collection). The index is current when no change came after its mark; a refresh redoes only the servers
changed after it, so a write costs what it changed. A running process notices a new mark
(services/resolve/read_path.py). An index without a mark (never marked, or written by a 0.1 pre-release
that marked a catalog hash instead) is
stale: the next refresh brings all of it in line and marks it.

Every refresh holds the data folder's writer lock and starts by loading what another process wrote
meanwhile (``backend.refresh()``), so it writes its documents on top of the newest index generation,
never on an older copy that would drop another writer's documents.

An index made anew (``index rebuild``, or the repair of a damaged one) replaces the old one in one
step when the backend can stage it (the embedded one: ``Replaceable``): it is built aside, in memory,
and made current only once whole, so a kill, a full disk or an error half-way leaves the old index
current. Another backend (Weaviate) is emptied, then filled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from services.root.container import Container
from services.write.writing import writes
from tool_selector.core.errors import IndexDamagedError, IndexMissingError
from tool_selector.index.build import IndexSummary, index_catalog
from tool_selector.index.bulk import build_rows
from tool_selector.index.mark import SEQ_MARK, indexed_seq
from tool_selector.search.backend import Replaceable, RowWriter, SearchBackend

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore

logger = logging.getLogger(__name__)


@writes("index refresh")
def refresh_index(
    container: Container,
    *,
    rebuild: bool = False,
    drop: bool = False,
    only_if_stale: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Bring the index in line with the catalog (only the documents of servers changed since the
    index's mark are rebuilt, and only changed documents are embedded) and mark it current when every
    write succeeded; after a partial write it stays marked stale, so the next refresh (or
    ``index build``) writes again.

    ``rebuild`` rewrites every document; ``drop`` makes the index anew (``_replace``: the embedded one
    is built aside and made current once whole; a Weaviate collection is dropped and made anew);
    ``only_if_stale`` does nothing when the index is current and not empty. A damaged index is made
    anew the same way from the catalog, which holds everything it is made from.
    """
    store = container.store
    container.backend.refresh()  # another process may have written a newer generation
    damaged = not drop and _damaged(container.backend)
    built_from = store.change_seq()  # taken first: a change made meanwhile leaves the index stale
    seq = indexed_seq(container)
    if only_if_stale and not damaged and seq == built_from and container.backend.count() > 0:
        servers, tools = store.counts()  # nothing changed since the mark: nothing to compare either
        return IndexSummary(
            documents=tools, unchanged=tools, servers_indexed=servers, servers_unchanged=servers
        )
    if drop or damaged:
        return _replace(container, damaged=damaged, progress=progress)
    full = rebuild or container.backend.count() == 0
    scope = None if full or seq is None else store.servers_changed_since(seq)
    summary = index_catalog(
        store,
        container.backend,
        container.embedder,
        rebuild=rebuild,
        servers_changed=scope,
        progress=progress,
    )
    _mark(store, container.index_key, summary, built_from)
    return summary


def _replace(
    container: Container, *, damaged: bool, progress: Callable[[int, int], None] | None
) -> IndexSummary:
    """The index made anew from the catalog. A ``Replaceable`` backend is filled in a staged copy (in
    bulk when it takes rows) and published only when whole: a build with failed documents leaves a
    sound old index current (a damaged one is replaced anyway, and not marked current). Any other is
    emptied, then filled."""
    backend, store, embedder = container.backend, container.store, container.embedder
    built_from = store.change_seq()  # taken first: a change made meanwhile leaves the index stale
    if not isinstance(backend, Replaceable):
        backend.drop()
        dropped = index_catalog(store, backend, embedder, rebuild=True, progress=progress)
        _mark(store, container.index_key, dropped, built_from)
        return dropped
    staged = backend.staged()
    summary = None
    if isinstance(staged, RowWriter) and staged.dim == embedder.dim:
        summary = build_rows(store, staged, embedder, progress)
    if summary is None:  # a server named like a tool id (``a::b``): written apart
        summary = index_catalog(store, staged, embedder, rebuild=True, progress=progress)
    if summary.errors and not damaged:
        logger.warning("the new index was not made current (documents failed): the previous one stays")
        summary.written = summary.servers_written = 0  # none of it reached the index
        return summary
    backend.publish(staged)
    _mark(store, container.index_key, summary, built_from)
    return summary


def _mark(store: CatalogStore, index_key: str, summary: IndexSummary, built_from: int) -> None:
    """Mark the index of ``index_key`` (the container's: one per backend and Weaviate collection) current
    as of ``built_from`` when every write succeeded; else leave it stale."""
    if summary.errors:
        logger.warning(
            "the index is not marked current: %d document(s) failed to be written", len(summary.errors)
        )
    else:
        store.set_meta(index_key + SEQ_MARK, str(built_from))
        _prune(store)


PRUNE_LAG = 100_000  # changes kept past what every index caught up with: readers update by them


def _prune(store: CatalogStore) -> None:
    """Forget the changes every index of this data folder caught up with, but the last ``PRUNE_LAG``:
    a running process (an API worker, the gateway) reads from them which servers changed since the
    index it serves, instead of reading every tool again."""
    marks = [int(v) for k, v in store.meta_items(SEQ_MARK) if v.isdigit()]
    if marks and min(marks) > PRUNE_LAG:
        store.prune_changes(min(marks) - PRUNE_LAG)


def _damaged(backend: SearchBackend) -> bool:
    try:
        backend.count()
    except IndexDamagedError as exc:
        logger.warning("%s Rebuilding it from the catalog.", exc.message)
        return True
    except IndexMissingError as exc:  # another model's vectors (a change of model, an upgrade): anew too
        if not exc.details.get("another_model"):
            raise
        logger.warning("%s Rebuilding it from the catalog.", exc.message)
        return True
    return False


def _require_tools(store: CatalogStore) -> None:
    _, tools = store.counts()
    if tools == 0:
        raise IndexMissingError(
            "The catalog is empty, so there is nothing to index.",
            hint="Import one first: `tool-selector catalog import DIR`.",
        )


@writes("index build")
def build_index(
    container: Container, *, rebuild: bool = False, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    """``tool-selector index build``: refuses an empty catalog. An empty index of a backend that takes
    rows in bulk (the embedded one) is filled in bulk (``_first_build``); any other is refreshed."""
    _require_tools(container.store)
    summary = None if rebuild else _first_build(container, progress)
    return summary if summary is not None else refresh_index(container, rebuild=rebuild, progress=progress)


def _first_build(container: Container, progress: Callable[[int, int], None] | None) -> IndexSummary | None:
    """Fill an empty index in bulk (tool_selector/index/bulk.py: the documents, vectors and files a
    refresh makes, without a list of floats per document) and mark it current as ``refresh_index``
    does; None, with nothing written, when the backend does not take rows, holds documents or is damaged
    (``refresh_index`` then does the work)."""
    backend, store = container.backend, container.store
    if not isinstance(backend, RowWriter) or backend.dim != container.embedder.dim:
        return None
    backend.refresh()  # another process may have written a generation meanwhile
    try:
        if backend.count() or backend.count(target="servers"):
            return None
    except (IndexDamagedError, IndexMissingError):
        return None  # refresh_index replaces it, or says why it cannot
    built_from = store.change_seq()  # taken first: a change made meanwhile leaves the index stale
    summary = build_rows(store, backend, container.embedder, progress)
    if summary is not None:
        _mark(store, container.index_key, summary, built_from)
    return summary


@writes("index rebuild")
def rebuild_index(
    container: Container, *, progress: Callable[[int, int], None] | None = None
) -> IndexSummary:
    """Empty the configured backend (a Weaviate collection is dropped and made anew) and fill it from
    the catalog store. Vectors come from the store's cache; only texts never embedded are embedded."""
    _require_tools(container.store)
    return refresh_index(container, drop=True, progress=progress)
