"""The first build of an empty index in bulk: every tool and server document of the catalog, and their
vectors as the rows of one float32 matrix, written in one call to a backend that takes rows
(``RowWriter``: the embedded one).

``index_catalog`` (tool_selector/index/build.py) brings any index of any backend in line, document by
document, each carrying its vector as a list of floats: at 100k tools those lists and the documents'
copies held gigabytes. Here a large catalog is read a few servers at a time (only the documents are
kept), the vectors are read from the vector cache a chunk at a time into the matrix, and the backend
takes the matrix as it is. On an empty index, the documents, vectors, vector cache, summary and
index files are those ``index_catalog`` makes.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from tool_selector.catalog.store import CatalogStore
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import ToolDocument
from tool_selector.embedding.embedders import Embedder
from tool_selector.index.build import IndexSummary, _embed, _server_documents, _tool_documents, warn_left_out
from tool_selector.index.sources import read_catalog
from tool_selector.search.backend import RowWriter

logger = logging.getLogger(__name__)

CHUNK = 5000  # vectors read from the cache at a time
READ_WHOLE = 20_000  # a catalog of at most this many tools is read at once, a larger one ...
SERVERS_READ = 2_000  # ... this many servers at a time (at 100k tools: ~230 MB held, not ~900 MB)


def build_rows(
    store: CatalogStore,
    backend: RowWriter,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary | None:
    """Write every document of the catalog into ``backend``, which holds none; vectors come from the
    store's cache, and only texts never embedded are embedded (and cached). None, with nothing
    written, when a server's name is also a tool's id (``a::b``): ``index_catalog`` writes those apart."""
    started = time.perf_counter()
    tools, tool_texts, servers, server_texts, left_out = _documents(store)
    if not {d.id for d in tools}.isdisjoint(d.id for d in servers):
        return None
    model = embedder.model_id
    keys = [sha256_of([model, tool_texts[d.id]]) for d in tools]
    server_keys = [sha256_of([model, server_texts[d.id]]) for d in servers]
    texts = dict(zip(keys, (tool_texts[d.id] for d in tools), strict=True))
    texts.update((k, server_texts[d.id]) for k, d in zip(server_keys, servers, strict=True) if k not in texts)
    del tool_texts, server_texts
    rows: dict[str, list[int]] = defaultdict(list)  # vector key -> the rows it fills
    for row, key in enumerate([*keys, *server_keys]):
        rows[key].append(row)
    matrix = np.zeros((len(keys) + len(server_keys), backend.dim), dtype=np.float32)
    cached = _fill_from_cache(store, model, rows, matrix)
    fresh = _embed(embedder, {k: t for k, t in texts.items() if k not in cached}, progress)
    if fresh:
        store.put_vectors(model, fresh)
    for key, vector in fresh.items():
        matrix[rows[key]] = vector
    tool_keys = set(keys)
    summary = IndexSummary(
        documents=len(tools),
        embedded=len(tool_keys & fresh.keys()),
        vectors_from_cache=sum(1 for k in keys if k in cached),
        servers_indexed=len(servers),
        servers_embedded=len(set(server_keys) & fresh.keys() - tool_keys),
        left_out=left_out,
    )
    backend.write_rows([*tools, *servers], matrix)
    summary.written, summary.servers_written = len(tools), len(servers)
    summary.seconds = round(time.perf_counter() - started, 3)
    logger.info("indexed: %s", summary.model_dump())
    warn_left_out(left_out)
    return summary


def _documents(
    store: CatalogStore,
) -> tuple[list[ToolDocument], dict[str, str], list[ToolDocument], dict[str, str], dict[str, str]]:
    """The tool and the server documents, with the texts of their vectors, made from the catalog read
    a few servers at a time (``SERVERS_READ``): only the documents are held, not every record at once.
    The same documents, in the same order (by server, then tool), as from the whole catalog read once."""
    chunks: list[list[str] | None] = [None]  # a small catalog: read at once (fewer queries)
    if store.counts()[1] > READ_WHOLE:
        names = [s.name for s in store.list_servers()]
        chunks = [names[start : start + SERVERS_READ] for start in range(0, len(names), SERVERS_READ)]
    tools: list[ToolDocument] = []
    servers: list[ToolDocument] = []
    tool_texts: dict[str, str] = {}
    server_texts: dict[str, str] = {}
    left_out: dict[str, str] = {}  # names that break the naming rule (tool_selector/index/sources.py)
    for chunk in chunks:
        catalog = read_catalog(store, chunk)
        left_out.update(catalog.left_out)
        for docs, texts, (made, made_texts) in (
            (tools, tool_texts, _tool_documents(catalog)),
            (servers, server_texts, _server_documents(catalog)),
        ):
            docs.extend(made)
            texts.update(made_texts)
    return tools, tool_texts, servers, server_texts, left_out


def _fill_from_cache(
    store: CatalogStore, model: str, rows: dict[str, list[int]], matrix: np.ndarray
) -> set[str]:
    """Fill the rows of every key the vector cache holds; returns those keys."""
    found: set[str] = set()
    wanted = list(rows)
    for start in range(0, len(wanted), CHUNK):
        for key, vector in store.get_vectors(model, wanted[start : start + CHUNK]).items():
            matrix[rows[key]] = vector
            found.add(key)
    return found
