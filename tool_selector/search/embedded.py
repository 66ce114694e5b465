"""The embedded search backend: a folder on disk, no server.

Keyword scoring is BM25 from the ``bm25s`` library, one index per document field, summed with the
field boosts; vectors are a float32 matrix searched by exact dot product (vectors are normalised, so
this is cosine). Hybrid fusion follows Weaviate's relativeScoreFusion (or rankedFusion).

Tool documents and server documents are two parts of one index, each with its own documents, vector
matrix and keyword index (built per set of boosts, the tools' and the servers').

On disk: ``<dir>/CURRENT`` names a generation folder holding ``meta.json``, ``docs.jsonl`` and
``vectors.npy`` (tools), and ``servers.jsonl`` and ``server_vectors.npy`` (servers). A write builds a new
generation holding both and then swaps ``CURRENT`` atomically, so a reader or a crash sees the old or
the new index, never half of one. Files damaged all the same (a disk, a
person, a partial restore) are named by embedded_files.py; every read then raises that error, and
``drop`` (what ``index rebuild`` starts with) replaces the index without reading it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from tool_selector.errors import (
    IndexDamagedError,
    IndexMissingError,
    InvalidInputError,
    StoreError,
    ToolSelectorError,
)
from tool_selector.models import SearchHit, ToolDocument
from tool_selector.search.backend import SearchQuery, Target, UpsertResult, fuse_ranked, fuse_relative
from tool_selector.search.embedded_files import (
    FORMAT_VERSION,
    SERVER_FILES,
    TOOL_FILES,
    load_generation,
    read_pointer,
)
from tool_selector.search.text import tokenize, weighted_tokens

logger = logging.getLogger(__name__)


class _KeywordIndex:
    """BM25F-style keyword index: one bm25s index whose documents repeat each field's tokens by boost.

    A field with boost ``b`` contributes its tokens ``round(2 * b)`` times, so term frequencies are
    weighted per field under one IDF and one length norm (measured better than summing per-field BM25
    scores: tool recall@5 0.919 against 0.906 on msc_bench_dev L1-4). Built for one set of boosts.
    """

    def __init__(self, docs: Sequence[ToolDocument], boosts: dict[str, float]) -> None:
        self.boosts = dict(boosts)
        corpus = [weighted_tokens(doc.fields, boosts) for doc in docs]
        self.size = len(docs)
        self.index: bm25s.BM25 | None = None
        if any(corpus):  # bm25s divides by the mean length: an empty corpus has nothing to score
            self.index = bm25s.BM25(k1=1.2, b=0.75)
            self.index.index(corpus, show_progress=False)

    def scores(self, tokens: list[str]) -> np.ndarray:
        if self.index is None:
            return np.zeros(self.size, dtype=np.float32)
        known = self.index.get_tokens_ids(tokens) if tokens else []
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.index.get_scores_from_ids(known), dtype=np.float32)


@dataclass(frozen=True)
class _Part:
    """The documents of one kind (tools or servers): rows of ``vectors`` in document order, and the
    keyword index last built for them."""

    docs: list[ToolDocument]
    pos: dict[str, int]
    vectors: np.ndarray
    keyword: _KeywordIndex | None = None

    @classmethod
    def of(cls, docs: list[ToolDocument], vectors: np.ndarray) -> _Part:
        return cls(docs=docs, pos={d.id: i for i, d in enumerate(docs)}, vectors=vectors)

    @classmethod
    def empty(cls, dim: int) -> _Part:
        return cls.of([], np.zeros((0, dim), dtype=np.float32))


@dataclass(frozen=True)
class _State:
    """One consistent view of the index; replaced whole, so a reader never mixes two versions."""

    tools: _Part
    servers: _Part

    @classmethod
    def empty(cls, dim: int) -> _State:
        return cls(tools=_Part.empty(dim), servers=_Part.empty(dim))

    def part(self, target: Target) -> _Part:
        return self.tools if target == "tools" else self.servers

    def with_part(self, target: Target, part: _Part) -> _State:
        return replace(self, tools=part) if target == "tools" else replace(self, servers=part)


def _target(doc: ToolDocument) -> Target:
    return "servers" if doc.kind == "server" else "tools"


class EmbeddedBackend:
    """SearchBackend on a local folder. Readers take one snapshot; writers serialise on a lock."""

    def __init__(self, directory: Path, *, model_id: str, dim: int) -> None:
        self.directory = directory
        self.model_id = model_id
        self.dim = dim
        self._lock = threading.RLock()
        self._state = _State.empty(dim)
        self._generation: str | None = None  # what CURRENT said when last loaded or written
        self._unusable: ToolSelectorError | None = None  # why the files on disk cannot be served
        self._load()

    # -- persistence ----------------------------------------------------------------------------

    def _load(self) -> None:
        """Load what CURRENT names. Files that cannot be served (damaged, or of another format or
        model) are remembered, not raised: every read raises it, and ``drop`` starts afresh."""
        pointer: str | None = None
        for _ in range(3):
            try:
                pointer = read_pointer(self.directory)
                if pointer is None:
                    return
                tools, servers = load_generation(
                    self.directory, pointer, model_id=self.model_id, dim=self.dim
                )
            except (IndexMissingError, IndexDamagedError) as exc:
                if self._pointer_moved(pointer):  # another process swapped generations while we read
                    continue
                self._state = _State.empty(self.dim)
                self._unusable, self._generation = exc, pointer
                return
            self._state = _State(tools=_Part.of(*tools), servers=_Part.of(*servers))
            self._unusable, self._generation = None, pointer
            return
        raise StoreError(f"The index at {self.directory} kept changing while it was read.", hint="Retry.")

    def _pointer_moved(self, seen: str | None) -> bool:
        try:
            return read_pointer(self.directory) != seen
        except IndexDamagedError:
            return False

    def _usable(self) -> _State:
        """The current snapshot; raises (a new error each time) when the files cannot be served."""
        bad = self._unusable
        if bad is not None:
            raise type(bad)(bad.message, hint=bad.hint, **bad.details)
        return self._state

    def refresh(self) -> bool:
        """Load the index another process wrote since we last looked; True when it changed."""
        with self._lock:
            try:
                pointer = read_pointer(self.directory)
            except IndexDamagedError:
                pointer = ""  # CURRENT cannot be read: loading records why
            if pointer is None or pointer == self._generation:
                return False
            self._load()
            return True

    def _persist(self, state: _State) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"gen-{uuid.uuid4().hex[:12]}"
        tmp = self.directory / f"{name}.tmp"
        tmp.mkdir()
        try:
            for part, (docs_file, vectors_file) in ((state.tools, TOOL_FILES), (state.servers, SERVER_FILES)):
                with (tmp / docs_file).open("w", encoding="utf-8") as fh:
                    for doc in part.docs:
                        fh.write(doc.model_dump_json(exclude={"vector"}) + "\n")
                np.save(tmp / vectors_file, part.vectors)
            meta = {
                "format_version": FORMAT_VERSION,
                "model_id": self.model_id,
                "dim": self.dim,
                "count": len(state.tools.docs),
                "server_count": len(state.servers.docs),
            }
            (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
            for path in tmp.iterdir():
                with path.open("rb") as fh:
                    os.fsync(fh.fileno())
            os.replace(tmp, self.directory / name)
            pointer_tmp = self.directory / f"CURRENT.{name}.tmp"
            pointer_tmp.write_text(name, encoding="utf-8")
            os.replace(pointer_tmp, self.directory / "CURRENT")
            self._generation = name
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise StoreError(f"Cannot write the index at {self.directory}: {exc}.") from exc
        for old in self.directory.iterdir():
            if old.name != name and old.name.startswith("gen-"):
                shutil.rmtree(old, ignore_errors=True)

    def _commit(self, state: _State) -> None:
        """Persist first, then publish: a failed write leaves the served index as it was."""
        self._persist(state)
        self._state, self._unusable = state, None

    # -- SearchBackend --------------------------------------------------------------------------

    def upsert(self, documents: Sequence[ToolDocument]) -> UpsertResult:
        """Tool and server documents alike, each into its own part; one new generation for the call."""
        result = UpsertResult()
        with self._lock:
            state = self._usable()
            for target in ("tools", "servers"):
                batch = [d for d in documents if _target(d) == target]
                if batch:
                    part, written = self._upserted(state.part(target), batch, result.errors)
                    if written:
                        state = state.with_part(target, part)
                        result.written += written
            if result.written:
                self._commit(state)
        return result

    def _upserted(
        self, old: _Part, documents: Sequence[ToolDocument], errors: dict[str, str]
    ) -> tuple[_Part, int]:
        docs = list(old.docs)
        pos = dict(old.pos)
        rows: list[np.ndarray] = list(old.vectors)
        written = 0
        for doc in documents:
            if doc.vector is None or len(doc.vector) != self.dim:
                errors[doc.id] = f"needs a vector of {self.dim} floats"
                continue
            stored = doc.model_copy(update={"vector": None})
            vector = np.asarray(doc.vector, dtype=np.float32)
            if doc.id in pos:
                docs[pos[doc.id]] = stored
                rows[pos[doc.id]] = vector
            else:
                pos[doc.id] = len(docs)
                docs.append(stored)
                rows.append(vector)
            written += 1
        if not written:
            return old, 0
        return _Part(docs=docs, pos=pos, vectors=np.stack(rows).astype(np.float32)), written

    def delete(self, ids: Sequence[str], *, target: Target = "tools") -> int:
        with self._lock:
            state = self._usable()
            old = state.part(target)
            gone = {i for i in ids if i in old.pos}
            if not gone:
                return 0
            keep = [i for i, d in enumerate(old.docs) if d.id not in gone]
            docs = [old.docs[i] for i in keep]
            vectors = old.vectors[keep] if keep else np.zeros((0, self.dim), dtype=np.float32)
            self._commit(state.with_part(target, _Part.of(docs, vectors)))
            return len(gone)

    def count(self, *, target: Target = "tools") -> int:
        return len(self._usable().part(target).docs)

    def drop(self) -> None:
        """Start afresh without reading what is on disk: the repair of a damaged index."""
        with self._lock:
            if self._unusable is not None:
                logger.info("replacing the index at %s: %s", self.directory, self._unusable.message)
            self._commit(_State.empty(self.dim))

    def ids(self, *, target: Target = "tools") -> dict[str, str]:
        return {d.id: d.text_hash for d in self._usable().part(target).docs}

    def documents(self, *, target: Target = "tools") -> list[ToolDocument]:
        return list(self._usable().part(target).docs)

    def warm(self, boosts: dict[str, float], *, target: Target = "tools") -> None:
        """Build the keyword index for these boosts now instead of on the first query."""
        self._keyword_index(self._usable(), boosts, target)

    def _keyword_index(self, state: _State, boosts: dict[str, float], target: Target) -> _KeywordIndex:
        part = state.part(target)
        keyword = part.keyword
        if keyword is not None and keyword.boosts == boosts:
            return keyword
        with self._lock:
            keyword = _KeywordIndex(part.docs, boosts)
            current = self._state
            if current.part(target) is part:  # cache it on the snapshot it was built for
                self._state = current.with_part(target, replace(part, keyword=keyword))
            return keyword

    def hybrid_search(self, query: SearchQuery) -> list[SearchHit]:
        state = self._usable()
        part = state.part(query.target)
        if not part.docs:
            if query.target == "servers":  # an index written before server documents existed
                return []
            raise IndexMissingError(
                f"The search index at {self.directory} is empty.",
                hint="Import a catalog and run `tool-selector index build` first.",
            )
        docs = part.docs
        keyword_all = self._keyword_index(state, query.field_boosts, query.target).scores(
            tokenize(query.text)
        )
        vector_all: np.ndarray | None = None
        if query.vector is not None:  # cosines are reported even at alpha 0: the confidence reads them
            if query.vector.shape != (self.dim,):
                raise InvalidInputError(f"query vector must have {self.dim} dimensions")
            vector_all = part.vectors @ query.vector.astype(np.float32)
        keyword = _top(keyword_all, query.candidates, positive_only=True) if query.alpha < 1 else {}
        vector = _top(vector_all, query.candidates) if vector_all is not None and query.alpha > 0 else {}
        fuse = fuse_relative if query.fusion == "relative_score" else fuse_ranked
        fused = fuse(keyword, vector, query.alpha)
        best = sorted(fused, key=lambda i: (-fused[i], docs[i].id))[: query.limit]
        return [
            SearchHit(
                id=docs[i].id,
                server=docs[i].server,
                name=docs[i].name,
                score=float(fused[i]),
                keyword_score=float(keyword_all[i]),
                vector_score=None if vector_all is None else float(vector_all[i]),
            )
            for i in best
        ]

    def keyword_scores(self, text: str, boosts: dict[str, float], *, target: Target = "tools") -> np.ndarray:
        """Boosted BM25 of every document of ``target``, in document order."""
        state = self._usable()
        return self._keyword_index(state, boosts, target).scores(tokenize(text))

    def close(self) -> None:
        return None


def _top(scores: np.ndarray | None, n: int, *, positive_only: bool = False) -> dict[int, float]:
    if scores is None or scores.size == 0:
        return {}
    n = min(n, scores.size)
    idx = np.argpartition(-scores, n - 1)[:n]
    out: dict[int, Any] = {int(i): float(scores[i]) for i in idx}
    if positive_only:
        out = {i: s for i, s in out.items() if s > 0}
    return out
