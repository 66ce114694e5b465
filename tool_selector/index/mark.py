"""The index's mark: the number of the last catalog change the index was brought in line with, kept in
the catalog store under the index's key + ``#seq`` (one per backend and Weaviate collection). The index
is current when no change came after its mark, or the few servers changed since hold the documents the
index has. Read by the read path and the REST API's status; written only by the write path's refresh
(services/write/indexing.py). It takes the store, the backend and the index's key (``Marked``: the
composition root's Container is one), never the whole Container."""

from __future__ import annotations

from typing import Protocol

from tool_selector.catalog.store import CatalogStore
from tool_selector.index.build import build_documents, build_server_documents
from tool_selector.index.written import indexed_ids
from tool_selector.search.backend import SearchBackend


class Marked(Protocol):
    """What the mark is read from: the catalog store, the search backend and the index's key."""

    @property
    def store(self) -> CatalogStore: ...

    @property
    def backend(self) -> SearchBackend: ...

    @property
    def index_key(self) -> str: ...


SEQ_MARK = "#seq"


def indexed_seq(container: Marked) -> int | None:
    """The mark of the configured index: the number of the last catalog change it was brought in line
    with; None for an index never marked."""
    value = container.store.get_meta(container.index_key + SEQ_MARK)
    return int(value) if value is not None and value.isdigit() else None


CHECK_MAX = 64  # changed servers compared document by document before an index is called stale


def index_is_current(container: Marked) -> bool:
    """No change came after the index's mark, or the few servers changed since hold the documents the
    index has (a change such as a rejected quarantine entry alters nothing the index is made from)."""
    store = container.store
    seq = indexed_seq(container)
    if seq is None:
        return False
    if seq == store.change_seq():
        return True
    changed = store.servers_changed_since(seq)
    if changed is None or len(changed) > CHECK_MAX:
        return False
    return _same_documents(container, changed)


def _same_documents(container: Marked, servers: set[str]) -> bool:
    backend = container.backend
    for target, (docs, _) in (
        ("tools", build_documents(container.store, servers)),
        ("servers", build_server_documents(container.store, servers)),
    ):
        held = indexed_ids(backend, servers, target)  # type: ignore[arg-type]
        if set(held) != {d.id for d in docs} or any(held[d.id] != d.text_hash for d in docs):
            return False
    return True
