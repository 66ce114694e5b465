"""The embedded search backend: a folder on disk, no server.

Keyword scoring is BM25 (search/keyword.py, equal to ``bm25s``) over field-weighted tokens; vectors are
searched by exact dot product, or approximately (faiss IVF) from ``ann_min`` documents, with exact
cosines for what is found. Fusion follows Weaviate's relativeScoreFusion (or rankedFusion). Tool and
server documents are two parts of one index (state.py).

On disk: ``<dir>/CURRENT`` names a generation folder (``gen-<id>``) and how many of its deltas count
(``gen-<id>+<n>``). A write adds a small delta; a full generation is written once deltas pile up. Each
becomes visible by an atomic swap of ``CURRENT``, so a reader or a crash sees the old or the new index,
never half of one; an index made anew (``index rebuild``) is written into a ``staged`` copy in
memory, then ``publish``ed as one generation. Damaged files (cut off, garbage, or changed since they
were written: files.py checks their sha256) are named; every read then raises that error,
and ``drop`` or ``publish`` replace the index without reading it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

import numpy as np

from tool_selector.core.errors import (
    IndexDamagedError,
    IndexMissingError,
    InvalidInputError,
    StoreError,
    ToolSelectorError,
)
from tool_selector.core.models import SearchHit, ToolDocument, search_hit
from tool_selector.search.backend import SearchQuery, Target, UpsertResult, fuse_ranked, fuse_relative
from tool_selector.search.embedded.files import (
    DELTA_SEP,
    SERVER_FILES,
    TOOL_FILES,
    Delta,
    load_delta,
    load_generation,
    parse_pointer,
    read_pointer,
    sweep,
    write_delta,
    write_generation,
    write_pointer,
    write_rows,
)
from tool_selector.search.embedded.ids import EmbeddedIds
from tool_selector.search.embedded.state import (
    Cosines,
    KeywordPart,
    Part,
    State,
    keep_keyword,
    keyword_file,
    load_or_build_search,
    nearest,
    row_cosines,
    rows_of,
    stored_keyword,
    top_rows,
    trained_search,
)
from tool_selector.search.text import tokenize
from tool_selector.search.vectors import ANN_MIN, VectorSearch

logger = logging.getLogger(__name__)


# A write is a delta on the generation; a full one (replaced rows compacted away) is written once the
# deltas hold this many rows and this share of the index, or this many deltas have piled up.
COMPACT_ROWS = 2_000
COMPACT_SHARE = 0.1
COMPACT_DELTAS = 256
PERSIST_MIN = 5_000  # a base generation of this many rows keeps its keyword index on disk beside it


class EmbeddedBackend(EmbeddedIds):
    """SearchBackend on a local folder. Readers take one snapshot; writers serialise on a lock."""

    def __init__(
        self, directory: Path, *, model_id: str, dim: int, ann_min: int = ANN_MIN, on_disk: bool = True
    ) -> None:
        self.directory = directory
        self.model_id = model_id
        self.dim = dim
        self.ann_min = ann_min  # a part of this many base rows is searched approximately (faiss IVF)
        self.on_disk = on_disk  # False: a staged index, in memory until published (``staged``)
        self._lock = threading.RLock()
        self._state = State.empty(dim)
        self._generation: str | None = None  # what CURRENT said when last loaded or written
        self._unusable: ToolSelectorError | None = None  # why the files on disk cannot be served
        if on_disk:
            self._load()

    def staged(self) -> Self:
        """An empty index held in memory only, for a rebuild to write into: this index (on disk and in
        this process) stays current until ``publish``, even if the rebuild is killed or fails."""
        kind = type(self)
        return kind(self.directory, model_id=self.model_id, dim=self.dim, ann_min=self.ann_min, on_disk=False)

    def publish(self, staged: EmbeddedBackend) -> None:
        """Make what ``staged`` holds the index: one new full generation, written whole, then CURRENT
        swapped to it (the old index is not read: this is also the repair of a damaged one). On a
        failure (StoreError) CURRENT and this process keep the old index."""
        with self._lock, staged._lock:
            if self._unusable is not None:
                logger.info("replacing the index at %s: %s", self.directory, self._unusable.message)
            self._commit(staged._state)

    # -- persistence ----------------------------------------------------------------------------

    def _load(self) -> None:
        """Load what CURRENT names: its generation, then its deltas (only the new ones when this
        process already holds the same generation). Files that cannot be served (damaged, or of
        another format or model) are remembered, not raised: every read raises it, and ``drop``
        starts afresh."""
        pointer: str | None = None
        for _ in range(3):
            try:
                pointer = read_pointer(self.directory)
                if pointer is None:
                    return
                state = self._read(pointer)
            except (IndexMissingError, IndexDamagedError) as exc:
                if self._pointer_moved(pointer):  # another process swapped generations while we read
                    continue
                self._state = State.empty(self.dim)
                self._unusable, self._generation = exc, pointer
                return
            self._state = state
            self._unusable, self._generation = None, pointer
            return
        raise StoreError(f"The index at {self.directory} kept changing while it was read.", hint="Retry.")

    def _read(self, pointer: str) -> State:
        base, count = parse_pointer(self.directory, pointer)
        held = parse_pointer(self.directory, self._generation) if self._generation else None
        if self._unusable is None and held is not None and held[0] == base and held[1] <= count:
            state, start = self._state, held[1]  # the same generation: only its new deltas
        else:
            tools, servers = load_generation(self.directory, base, model_id=self.model_id, dim=self.dim)
            state, start = State(tools=Part.of(*tools), servers=Part.of(*servers)), 0
        for number in range(start + 1, count + 1):
            state = state.applied(load_delta(self.directory, base, number, dim=self.dim))
        return state

    def _pointer_moved(self, seen: str | None) -> bool:
        try:
            return read_pointer(self.directory) != seen
        except IndexDamagedError:
            return False

    def _usable(self) -> State:
        """The current snapshot; raises (a new error each time) when the files cannot be served."""
        bad = self._unusable
        if bad is not None:
            raise type(bad)(bad.message, hint=bad.hint, **bad.details)
        return self._state

    def refresh(self) -> bool:
        """Load the index another process wrote since we last looked; True when it changed."""
        if not self.on_disk:
            return False
        with self._lock:
            try:
                pointer = read_pointer(self.directory)
            except IndexDamagedError:
                pointer = ""  # CURRENT cannot be read: loading records why
            if pointer is None or pointer == self._generation:
                return False
            self._load()
            return True

    def _persist(self, state: State) -> State:
        """A full generation of ``state`` (compacted); CURRENT then names it. Returns what it wrote."""
        state = State(tools=state.tools.compacted(), servers=state.servers.compacted())
        searches: dict[Target, VectorSearch | None] = {}

        def fill(folder: Path) -> None:
            for part, files in ((state.tools, TOOL_FILES), (state.servers, SERVER_FILES)):
                write_rows(folder, part.docs, part.vectors, files)
            for target in ("tools", "servers"):  # a large part's, trained now: no reader's first query pays
                searches[target] = trained_search(state.part(target).vectors, folder, target, self.ann_min)

        counts = {"count": len(state.tools.docs), "server_count": len(state.servers.docs)}
        try:
            name = write_generation(self.directory, fill, model_id=self.model_id, dim=self.dim, **counts)
            self._point(name)
        except OSError as exc:
            raise StoreError(f"Cannot write the index at {self.directory}: {exc}.") from exc
        sweep(self.directory, keep=name)
        return State(
            tools=replace(state.tools, search=searches["tools"]),
            servers=replace(state.servers, search=searches["servers"]),
        )

    def _point(self, pointer: str) -> None:
        write_pointer(self.directory, pointer)
        self._generation = pointer

    def _compacts(self, delta: Delta | None, appended: int, size: int) -> bool:
        """Whether a write makes a full generation (not a delta); a full one never reads CURRENT."""
        if delta is None or not self._generation:
            return True
        count = parse_pointer(self.directory, self._generation)[1]
        return count >= COMPACT_DELTAS or appended >= max(COMPACT_ROWS, COMPACT_SHARE * size)

    def _commit(self, state: State, delta: Delta | None = None) -> None:
        """Persist first, then publish: a failed write leaves the served index as it was. ``delta``
        (what changed) is written on top of the current generation unless the deltas have grown
        enough to compact them into a full generation."""
        if not self.on_disk:  # staged: in memory until published
            self._state, self._unusable = state, None
            return
        if self._compacts(delta, state.appended, state.size):
            state = self._persist(state)
        else:
            assert delta is not None and self._generation is not None
            base, count = parse_pointer(self.directory, self._generation)
            try:
                write_delta(self.directory / base, count + 1, delta)
                self._point(f"{base}{DELTA_SEP}{count + 1}")
            except OSError as exc:
                raise StoreError(f"Cannot write the index at {self.directory}: {exc}.") from exc
            sweep(self.directory, keep=base)
        self._state, self._unusable = state, None

    # -- SearchBackend --------------------------------------------------------------------------

    def upsert(self, documents: Sequence[ToolDocument]) -> UpsertResult:
        """Tool and server documents alike, each into its own part; one write for the call."""
        result = UpsertResult()
        with self._lock:
            self._usable()
            stored: list[ToolDocument] = []
            rows: list[np.ndarray] = []
            for doc in documents:
                if doc.vector is None or len(doc.vector) != self.dim or not np.isfinite(doc.vector).all():
                    result.errors[doc.id] = f"needs a vector of {self.dim} finite floats"
                    continue
                stored.append(doc.model_copy(update={"vector": None}))
                rows.append(np.asarray(doc.vector, dtype=np.float32))
            if stored:
                result.written = self.write_rows(stored, np.stack(rows))
        return result

    def write_rows(self, documents: Sequence[ToolDocument], vectors: np.ndarray) -> int:
        """``upsert`` of documents (``vector`` None) and their vectors as one matrix, row for row: a first
        build holds no list of floats per document; its full generation takes the rows as they come."""
        vectors, given = np.asarray(vectors, dtype=np.float32), len(documents)
        if vectors.shape != (given, self.dim) or not np.isfinite(vectors).all():
            raise InvalidInputError(f"needs {len(documents)} vectors of {self.dim} finite floats")
        with self._lock:
            state = self._usable()
            latest = {d.id: i for i, d in enumerate(documents)}  # an id given twice: the last one counts
            keep = sorted(latest.values())
            if len(keep) < len(documents):
                documents, vectors = [documents[i] for i in keep], vectors[keep]
            delta = Delta(list(documents), vectors, {})
            if state.tools.docs or state.servers.docs or not self._compacts(delta, len(keep), len(keep)):
                self._commit(state.applied(delta), delta)
            else:  # what applying the rows to no rows and compacting them gives
                self._commit(State(tools=rows_of(delta, "tools"), servers=rows_of(delta, "servers")))
        return given

    def delete(self, ids: Sequence[str], *, target: Target = "tools") -> int:
        with self._lock:
            state = self._usable()
            gone = sorted({i for i in ids if i in state.part(target).pos})
            if not gone:
                return 0
            delta = Delta([], np.zeros((0, self.dim), dtype=np.float32), {target: gone})
            self._commit(state.applied(delta), delta)
            return len(gone)

    def compact(self) -> None:
        """Write the index as one full generation now (replaced rows dropped, deltas folded in)."""
        with self._lock:
            self._commit(self._usable())

    def count(self, *, target: Target = "tools") -> int:
        return len(self._usable().part(target).pos)

    def drop(self) -> None:
        """Start afresh without reading what is on disk (an empty generation made current)."""
        self.publish(self.staged())

    def documents(self, *, target: Target = "tools") -> list[ToolDocument]:
        return self._usable().part(target).live()

    def warm(self, boosts: dict[str, float], *, target: Target = "tools") -> None:
        """Build the keyword index for these boosts now instead of on the first query."""
        self._keyword_index(self._usable(), boosts, target)

    def _base_folder(self) -> Path | None:
        """The folder of the generation this process holds (its deltas aside)."""
        if not self._generation or not self.on_disk:
            return None
        return self.directory / parse_pointer(self.directory, self._generation)[0]

    def _cache(self, target: Target, part: Part, **update: Any) -> None:
        """Keep what was built for ``part`` on the snapshot, if it is still the current one."""
        current = self._state
        held = current.part(target)
        if held.docs is part.docs:  # the same rows (another cache may have replaced the snapshot since)
            self._state = current.with_part(target, replace(held, **update))

    def _keyword_index(self, state: State, boosts: dict[str, float], target: Target) -> KeywordPart:
        part = state.part(target)
        keyword = part.keyword
        if keyword is not None and keyword.boosts == boosts:
            return keyword
        with self._lock:
            current = self._state.part(target)
            if current.docs is part.docs and current.keyword is not None and current.keyword.boosts == boosts:
                return current.keyword
            stored = keyword_file(self._base_folder(), target, boosts)
            keyword = stored_keyword(stored, part, boosts) or KeywordPart.of(
                part.docs, boosts, set(part.pos.values()) if part.dead else None
            )
            self._keep_keyword(part, keyword, target)
            self._cache(target, part, keyword=keyword)
            return keyword

    def _keep_keyword(self, part: Part, keyword: KeywordPart, target: Target) -> None:
        if len(part.vectors) >= PERSIST_MIN:
            keep_keyword(keyword_file(self._base_folder(), target, keyword.boosts), part, keyword)

    def _vector_search(self, part: Part, target: Target) -> VectorSearch | None:
        """Approximate search over a large part's base rows (built once per generation, kept beside it
        for other readers); None below ``ANN_MIN`` rows, where the exact product is fast enough."""
        if len(part.vectors) < self.ann_min:
            return None
        if part.search is not None:
            return part.search
        with self._lock:
            current = self._state.part(target)
            if current.docs is part.docs and current.search is not None:
                return current.search
            search = load_or_build_search(self._base_folder(), f"{target}.ivf", part.vectors, self.ann_min)
            self._cache(target, part, search=search)
            return search

    def hybrid_search(self, query: SearchQuery) -> list[SearchHit]:
        state = self._usable()
        part = state.part(query.target)
        if not part.pos:
            if query.target == "servers":  # an index written before server documents existed
                return []
            raise IndexMissingError(
                f"The search index at {self.directory} is empty.",
                hint="Import a catalog and run `tool-selector index build` first.",
            )
        docs = part.docs
        keyword_all = self._keyword_index(state, query.field_boosts, query.target).scores(
            tokenize(query.text)
        )[: len(docs)]  # a newer snapshot's rows may follow: not this one's
        keyword = top_rows(keyword_all, query.candidates, positive_only=True) if query.alpha < 1 else {}
        cosine: dict[int, float] = {}  # row -> cosine, for every row a hit may need
        vector: dict[int, float] = {}
        q: np.ndarray | None = None
        if query.vector is not None:  # cosines are reported even at alpha 0: the confidence reads them
            if query.vector.shape != (self.dim,):
                raise InvalidInputError(f"query vector must have {self.dim} dimensions")
            q = query.vector.astype(np.float32)
            search = self._vector_search(part, query.target)
            vector, cosine = nearest(part, search, q, query.candidates if query.alpha > 0 else 0)
        fuse = fuse_relative if query.fusion == "relative_score" else fuse_ranked
        fused = fuse(keyword, vector, query.alpha)
        best = sorted(fused, key=lambda i: (-fused[i], docs[i].id))[: query.limit]
        if q is not None and not isinstance(cosine, Cosines):  # exact cosines of the hits found by words
            missing = [i for i in best if i not in cosine]
            cosine.update(zip(missing, row_cosines(part, q, missing), strict=True))
        return [
            search_hit(
                docs[i].id,
                docs[i].server,
                docs[i].name,
                float(fused[i]),
                float(keyword_all[i]),
                None if q is None else float(cosine[i]),
            )
            for i in best
        ]

    def keyword_scores(self, text: str, boosts: dict[str, float], *, target: Target = "tools") -> np.ndarray:
        """Boosted BM25 of every live document of ``target``, in the order of ``documents``."""
        state = self._usable()
        part = state.part(target)
        scores = self._keyword_index(state, boosts, target).scores(tokenize(text))
        return scores[sorted(part.pos.values())] if part.dead else scores

    def close(self) -> None:
        return None
