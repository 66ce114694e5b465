"""Near-duplicate matching of tools being registered or imported: a tool matches a stored one of the
same server (or of the catalog) by the cosine of their name-and-description vectors. A batch is matched
in blocks of one matrix product (``DuplicateFinder.match_batch``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Literal

import numpy as np
from pydantic import BaseModel

from services.root.container import Container
from tool_selector.core.choices import MatchScope
from tool_selector.core.errors import NotFoundError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import ToolRecord, ToolSpec
from tool_selector.search.text import split_identifiers

logger = logging.getLogger(__name__)

SIMILAR = 0.85
SIMILAR_WITH_SAME_NAME = 0.75
DEDUP_TEXT_VERSION = "dedup-v1"


class ToolMatch(BaseModel):
    tool_id: str
    similarity: float
    rule: Literal["same_id", "similar", "similar_same_name"]


def same_name(a: str, b: str) -> bool:
    def key(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", split_identifiers(name).lower())

    return key(a) == key(b)


def dedup_text(name: str, description: str) -> str:
    return f"{split_identifiers(name)}: {description}"[:4000]


_PRODUCT_FLOATS = 1 << 24  # one block of a batch's similarity product holds at most this many (64 MB)


class _Pool:
    """The candidates of a finder as one matrix: row ``i`` is the vector of ``records[i]``. A tool that
    changed or left has its row retired (``records[i]`` None, ``live[i]`` False) and its new version,
    if any, appended: rows are never reused, so a row number stays valid for the pool's life."""

    def __init__(self, dim: int, *, whole: bool) -> None:
        self.whole = whole  # every server was read (scope catalog); else only the servers in ``read``
        self.read: set[str] = set()
        self.matrix = np.zeros((0, dim), np.float32)
        self.live = np.zeros(0, bool)
        self.size = 0
        self.records: list[ToolRecord | None] = []
        self.server_of: list[str] = []  # of every row, retired ones too
        self.row_of: dict[str, int] = {}  # live rows by tool id
        self.rows_of_server: dict[str, set[int]] = {}  # live rows by server

    def covers(self, server: str) -> bool:
        return self.whole or server in self.read

    def append(self, records: list[ToolRecord], vectors: np.ndarray) -> None:
        stop = self.size + len(records)
        if stop > self.matrix.shape[0]:
            capacity = max(stop, 2 * self.matrix.shape[0], 64)
            matrix = np.zeros((capacity, self.matrix.shape[1]), np.float32)
            matrix[: self.size] = self.matrix[: self.size]
            live = np.zeros(capacity, bool)
            live[: self.size] = self.live[: self.size]
            self.matrix, self.live = matrix, live
        self.matrix[self.size : stop] = vectors
        self.live[self.size : stop] = True
        for row, record in enumerate(records, start=self.size):
            self.records.append(record)
            self.server_of.append(record.server)
            self.row_of[record.id] = row
            self.rows_of_server.setdefault(record.server, set()).add(row)
        self.size = stop

    def retire(self, row: int) -> None:
        record = self.records[row]
        if record is not None:
            self.records[row] = None
            self.live[row] = False
            del self.row_of[record.id]
            self.rows_of_server[record.server].discard(row)

    def retire_server(self, server: str) -> None:
        for row in list(self.rows_of_server.get(server, ())):
            self.retire(row)


def _decide(spec: ToolSpec, candidates: list[tuple[float, ToolRecord]]) -> ToolMatch | None:
    """The matching rules over the candidates with similarity >= SIMILAR_WITH_SAME_NAME (the others
    never match): most similar first, ties in catalog order (server, then name, as ``list_tools``)."""
    for sim, other in sorted(candidates, key=lambda p: (-p[0], p[1].server, p[1].name)):
        if sim >= SIMILAR:
            return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar")
        if same_name(other.name, spec.name):
            return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar_same_name")
    return None


class DuplicateFinder:
    """Cosine similarity of tools against stored tools; vectors cached in the catalog store.

    For its life (one registration, one batch) the finder keeps the candidates as one matrix (``_Pool``):
    the whole catalog (scope catalog) or the servers asked for (scope server), each read from the store
    once. Before each decision it reads the catalog's change log (``store.change_seq``) and re-reads the
    servers changed since, so that a tool created, changed or deleted meanwhile is matched as stored
    now; a write made through ``writing`` costs one re-read row instead of its server."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self._memo: dict[str, np.ndarray] = {}  # this finder's vectors: a batch reads each one once
        self._pool: _Pool | None = None
        self._seq = 0  # the change log's number the pool is in line with

    def _vectors(self, texts: list[str], *, keep: bool = True) -> np.ndarray:
        """The texts' vectors: from this finder, the store's cache, or the embedder (then cached).
        ``keep``: remember them in this finder (not for the candidates, which the pool holds)."""
        embedder, store = self.container.embedder, self.container.store
        keys = [sha256_of([embedder.model_id, DEDUP_TEXT_VERSION, t]) for t in texts]
        found = {k: self._memo[k] for k in keys if k in self._memo}
        unknown = [k for k in dict.fromkeys(keys) if k not in found]
        if unknown:
            found.update(store.get_vectors(embedder.model_id, unknown))
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in found}.items())
        if missing:
            fresh = embedder.embed_documents([t for _, t in missing])
            new = {k: v for (k, _), v in zip(missing, fresh, strict=True)}
            store.put_vectors(embedder.model_id, new)
            found.update(new)
        if keep:
            self._memo.update(found)
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, embedder.dim), np.float32)

    def _texts_vectors(self, texts: list[str], *, keep: bool = True) -> np.ndarray:
        """``_vectors`` in calls of 256 texts (the embedder's batches stay small)."""
        if len(texts) <= 256:
            return self._vectors(texts, keep=keep)
        return np.concatenate(
            [self._vectors(texts[s : s + 256], keep=keep) for s in range(0, len(texts), 256)]
        )

    def _read(self, server: str | None) -> None:
        """Read the tools of one server, or of the whole catalog (None: a new pool), into the pool."""
        records = self.container.store.list_tools(server)
        vectors = self._texts_vectors([dedup_text(t.name, t.description) for t in records], keep=False)
        if server is None or self._pool is None:
            self._pool = _Pool(self.container.embedder.dim, whole=server is None)
        if server is not None:
            self._pool.retire_server(server)
            self._pool.read.add(server)
        self._pool.append(records, vectors)

    def _catch_up(self) -> None:
        """Re-read the servers of the pool changed since it was read (the catalog's change log)."""
        store = self.container.store
        seq = store.change_seq()  # before reading: a change made while reading is read again next time
        if self._pool is not None and seq != self._seq:
            changed = store.servers_changed_since(self._seq)
            if changed is None:  # the log was pruned past our number: read everything again
                self._pool = None
            else:
                for server in sorted(changed):
                    if self._pool.covers(server):
                        self._read(server)
        self._seq = seq

    def _candidates(self, scope: MatchScope, servers: Iterable[str]) -> _Pool:
        """The pool, in line with the catalog and holding the candidates of ``scope`` for ``servers``."""
        self._catch_up()
        if scope == "catalog":
            if self._pool is None or not self._pool.whole:
                self._read(None)
        else:
            for server in sorted(set(servers)):
                if self._pool is None or not self._pool.covers(server):
                    self._read(server)
        if self._pool is None:  # scope server with no servers
            self._pool = _Pool(self.container.embedder.dim, whole=False)
        return self._pool

    @contextmanager
    def writing(self, server: str, tool_id: str) -> Iterator[None]:
        """Around a write that changes the tool ``tool_id`` of ``server`` and no other tool (create, update,
        delete), made in a transaction no other connection writes into (``writer.batch()``): afterwards
        the finder re-reads that one tool instead of its whole server. A write that raises leaves the
        finder to the change log (the next decision re-reads the servers it changed)."""
        if self._pool is None:  # nothing read yet: nothing to keep in line
            yield
            return
        self._catch_up()
        before = self._seq
        yield
        store, pool = self.container.store, self._pool
        if pool is None:
            return
        seq = store.change_seq()
        changed = store.servers_changed_since(before)
        if changed is None:
            self._pool = None
            return
        for other in sorted(changed - {server}):
            if pool.covers(other):
                self._read(other)
        if pool.covers(server):
            row = pool.row_of.get(tool_id)
            if row is not None:
                pool.retire(row)
            try:
                record = store.get_tool(tool_id)
            except NotFoundError:
                pass
            else:
                pool.append([record], self._vectors([dedup_text(record.name, record.description)]))
        self._seq = seq

    def match_batch(self, specs: list[ToolSpec], scope: MatchScope) -> BatchMatches:
        """The near-duplicates of a batch's tools: embeds them and reads their candidates in a few large
        calls and multiplies all specs against all candidates at once. Call it before the batch's
        transaction, so that matching inside it never holds the database while embedding; decide each
        spec with ``BatchMatches.best`` in the batch's order, writing through ``writing``."""
        return BatchMatches(self, specs, scope)

    def _similarities(self, spec: ToolSpec, scope: MatchScope) -> tuple[_Pool, np.ndarray, np.ndarray]:
        """The live candidate rows of ``spec`` and their similarities to it."""
        pool = self._candidates(scope, [spec.server])
        query = self._vectors([dedup_text(spec.name, spec.description)])[0]
        if scope == "catalog":
            rows = np.flatnonzero(pool.live[: pool.size])
            return pool, rows, (pool.matrix[: pool.size] @ query)[rows]
        rows = np.array(sorted(pool.rows_of_server.get(spec.server, ())), dtype=np.int64)
        return pool, rows, pool.matrix[rows] @ query

    def best(self, spec: ToolSpec, scope: MatchScope) -> ToolMatch | None:
        pool, rows, sims = self._similarities(spec, scope)
        near = np.flatnonzero(sims >= SIMILAR_WITH_SAME_NAME)
        candidates = [(float(sims[i]), pool.records[int(rows[i])]) for i in near]
        return _decide(spec, [(sim, record) for sim, record in candidates if record is not None])

    def closest(self, spec: ToolSpec, scope: MatchScope) -> tuple[str, float] | None:
        """The most similar stored tool whatever its score (for the error of match_only)."""
        pool, rows, sims = self._similarities(spec, scope)
        if not len(rows):
            return None
        top = sims.max()
        tied = [record for r in rows[sims == top] if (record := pool.records[int(r)]) is not None]
        winner = min(tied, key=lambda t: (t.server, t.name))
        return winner.id, round(float(top), 4)


class BatchMatches:
    """The near-duplicate decisions of one batch (``DuplicateFinder.match_batch``).

    The similarities of the batch's specs against their candidates are one matrix product (specs x
    candidates; in blocks of ``_PRODUCT_FLOATS`` at most), made once; of it only the similarities >=
    SIMILAR_WITH_SAME_NAME are kept (the others never match). Rows the pool gains later (the batch's own
    new tools, servers re-read after a change) are multiplied in when a decision needs them, and retired
    rows are skipped: each ``best`` decides as ``DuplicateFinder.best`` would at that moment."""

    def __init__(self, finder: DuplicateFinder, specs: list[ToolSpec], scope: MatchScope) -> None:
        self.finder, self.specs, self.scope = finder, list(specs), scope
        self._queries = finder._texts_vectors([dedup_text(s.name, s.description) for s in self.specs])
        self._of_server: dict[str, list[int]] = {}
        for index, spec in enumerate(self.specs):
            self._of_server.setdefault(spec.server, []).append(index)
        self._pool: _Pool | None = None
        self._done = 0  # rows [0, _done) of the pool are multiplied
        self._hits: list[dict[int, float]] = []  # per spec: row -> similarity, for those >= 0.75
        if self.specs:  # a batch of servers only reads no candidates
            self._multiply_new_rows()

    def _multiply_new_rows(self) -> _Pool:
        pool = self.finder._candidates(self.scope, self._of_server)
        if pool is not self._pool:  # a new pool (the change log was pruned): start over
            self._pool, self._done, self._hits = pool, 0, [{} for _ in self.specs]
        start, stop = self._done, pool.size
        if stop > start:
            if self.scope == "catalog":
                self._multiply(np.arange(len(self.specs)), np.arange(start, stop))
            else:
                rows_of: dict[str, list[int]] = {}
                for row in range(start, stop):
                    rows_of.setdefault(pool.server_of[row], []).append(row)
                for server, rows in rows_of.items():
                    if server in self._of_server:
                        self._multiply(np.array(self._of_server[server]), np.array(rows))
            self._done = stop
        return pool

    def _multiply(self, specs: np.ndarray, rows: np.ndarray) -> None:
        """Similarities of the given specs against the given rows (ascending), blockwise."""
        assert self._pool is not None
        matrix = self._pool.matrix
        queries = self._queries if len(specs) == len(self.specs) else self._queries[specs]
        step = max(1, _PRODUCT_FLOATS // len(specs))
        for at in range(0, len(rows), step):
            part = rows[at : at + step]
            first, last = int(part[0]), int(part[-1])
            block = matrix[first : last + 1] if last - first + 1 == len(part) else matrix[part]
            sims = queries @ block.T
            for i, j in zip(*np.nonzero(sims >= SIMILAR_WITH_SAME_NAME), strict=True):
                self._hits[int(specs[i])][int(part[j])] = float(sims[i, j])

    def best(self, index: int) -> ToolMatch | None:
        """The match of spec ``index`` among the tools stored now (``DuplicateFinder.best``'s rules)."""
        records = self._multiply_new_rows().records
        hits = self._hits[index].items()
        return _decide(self.specs[index], [(sim, r) for row, sim in hits if (r := records[row]) is not None])


def find_match(
    container: Container, spec: ToolSpec, scope: MatchScope, finder: DuplicateFinder | None = None
) -> ToolMatch | None:
    store = container.store
    try:
        store.get_tool(spec.id)
    except NotFoundError:
        return (finder or DuplicateFinder(container)).best(spec, scope)
    return ToolMatch(tool_id=spec.id, similarity=1.0, rule="same_id")
