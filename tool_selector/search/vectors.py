"""Nearest vectors by cosine: exact below ``ann_min`` rows, faiss IVF-Flat at or above it.

The rows are L2-normalised float32 vectors, so cosine is the inner product. Below ``ann_min`` rows a
search is the exact product ``vectors @ query``. From ``ann_min`` rows on, an inverted-file index
(faiss ``IndexIVFFlat``, inner product, spherical k-means with a fixed seed) scans only the ``nprobe``
lists whose centroids are nearest the query; the cosines of the rows it returns are then recomputed
from ``vectors`` (one row each), so a reported cosine is always the exact one, and the order is by it.

Parameters, measured on all-MiniLM-L6-v2 embeddings of ~3,100 real tool texts grown to 20k-100k rows
by seeded noise, with 295 real benchmark queries: ``nlist = 8 * sqrt(rows)`` (2530 at 100k rows; 4 *
sqrt was slower at equal recall) and ``nprobe`` the lists that hold about 4,000 rows (102 at 100k):
recall@100 against the exact search 0.987-0.991 from 20k to 100k rows, about 1.5-2 ms of one core a
search at 100k against ~30 ms for the exact product. k-means trains 6 rounds on a seeded sample of 40
rows a list (about 37 s of CPU at 100k rows).

On disk the index is one file (``INDEX_FILE``) beside the generation's vectors: ``save`` writes it
(atomically) when the search is approximate and removes it otherwise, and ``load`` reads it when it is
there and searches exactly when it is not. faiss is imported only when an index is built or read.

faiss is the ``scale`` extra (a person's setup never reaches ``ann_min`` rows). Without it, a build or
a load at or above ``ann_min`` rows searches exactly (the same answers, ~30 ms a search at 100k rows
instead of ~2 ms), and says so once in the log with what to install.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.core.errors import ConfigurationError, InvalidInputError, StoreError
from tool_selector.search.embedded.files import damaged

INDEX_FILE = "vectors.ivf"
ANN_MIN = 20_000
FAISS_THREADS = 2  # building (k-means, adding) may use both cores; a search of one query uses one thread
LISTS_PER_ROOT = 8  # nlist = 8 * sqrt(rows): the fastest of 4, 8 (and powers of two near them) measured
SCAN_ROWS = 4_000  # nprobe scans lists holding about this many rows: recall@100 >= 0.98 measured
MIN_PER_LIST = 16  # no list with fewer rows to train on (faiss warns below 39; 17 at 20k rows measured well)
TRAIN_PER_LIST = 40  # k-means trains on a seeded sample of up to this many rows a list ...
TRAIN_ITERATIONS = 6  # ... for this many rounds: as good as 64 a list and 10 rounds, in half the time

_faiss_module: Any = None
_faiss_lock = threading.Lock()
_faiss_missing_said = False
logger = logging.getLogger(__name__)


def _faiss() -> Any:
    """The faiss module, imported on first use, with its OpenMP threads capped at ``FAISS_THREADS``."""
    global _faiss_module
    if _faiss_module is not None:
        return _faiss_module
    with _faiss_lock:
        if _faiss_module is None:
            try:
                import faiss
            except ImportError as exc:
                raise ConfigurationError(
                    f"The vector index needs faiss, which is not installed: {exc}.",
                    hint="Run `pip install 'tool-selector[scale]'` (or the setup, scripts/setup.sh).",
                ) from exc
            faiss.omp_set_num_threads(max(1, min(FAISS_THREADS, os.cpu_count() or 1)))
            _faiss_module = faiss
        return _faiss_module


def _faiss_or_exact(rows: int) -> Any:
    """The faiss module, or None (search exactly) when it is not installed: said once in the log."""
    global _faiss_missing_said
    try:
        return _faiss()
    except ConfigurationError as exc:
        if not _faiss_missing_said:
            _faiss_missing_said = True
            logger.warning(
                "searching %d vectors exactly: faiss is not installed (%s). For approximate search "
                "from %d rows, `pip install 'tool-selector[scale]'`.",
                rows,
                exc.__cause__,
                ANN_MIN,
            )
        return None


def default_lists(rows: int) -> int:
    """``8 * sqrt(rows)`` lists (2530 at 100k rows), but none with fewer than 16 rows to train on."""
    return max(1, min(round(LISTS_PER_ROOT * math.sqrt(rows)), rows // MIN_PER_LIST))


def default_probes(lists: int, rows: int) -> int:
    """How many of ``lists`` lists a search scans: as many as hold about ``SCAN_ROWS`` rows."""
    if rows <= 0:
        return 1
    return max(1, min(lists, math.ceil(SCAN_ROWS * lists / rows)))


class VectorSearch:
    """Exact below `ann_min` rows; faiss IVF-Flat (inner product) at or above it; cosines of the
    returned rows recomputed exactly.

    ``vectors`` is held as given (a memory-mapped ``np.load(..., mmap_mode="r")`` stays mapped): the
    exact search reads it whole, the approximate one reads only the rows it returns. faiss keeps its own
    copy of the rows in its inverted lists, which is what it needs to scan them.
    """

    def __init__(self, vectors: np.ndarray, index: Any = None) -> None:
        self._vectors = vectors
        self._index = index
        self._probes = int(index.nprobe) if index is not None else 0
        self._lists = int(index.nlist) if index is not None else 0

    # -- making and storing ---------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        *,
        ann_min: int = ANN_MIN,
        seed: int = 0,
        nlist: int | None = None,
        nprobe: int | None = None,
    ) -> VectorSearch:
        """Exact when ``vectors`` has fewer than ``ann_min`` rows; otherwise train and fill an IVF index
        (``nlist`` lists, ``nprobe`` scanned per search; defaults ``default_lists`` and
        ``default_probes``). The same vectors and seed give the same index."""
        matrix = _matrix(vectors)
        rows, dim = matrix.shape
        if rows == 0 or rows < ann_min:
            return cls(matrix)
        faiss = _faiss_or_exact(rows)
        if faiss is None:
            return cls(matrix)
        lists = max(1, min(nlist or default_lists(rows), rows))
        probes = max(1, min(nprobe or default_probes(lists, rows), lists))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, lists, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.cp.niter = TRAIN_ITERATIONS
        index.cp.spherical = True  # centroids normalised, as the rows are
        index.cp.max_points_per_centroid = TRAIN_PER_LIST
        index.cp.min_points_per_centroid = MIN_PER_LIST  # below it faiss prints a warning
        sample = min(rows, lists * TRAIN_PER_LIST)
        picked = np.sort(np.random.default_rng(seed).choice(rows, size=sample, replace=False))
        index.train(np.ascontiguousarray(matrix[picked]))
        index.add(matrix)
        index.nprobe = probes
        return cls(matrix, index)

    def save(self, directory: Path, *, name: str = INDEX_FILE) -> None:
        """Write the index to ``directory / name`` (a temporary file, then ``os.replace``); when the
        search is exact there is no index, and a file of that name is removed."""
        path = directory / name
        if self._index is None:
            path.unlink(missing_ok=True)
            return
        faiss = _faiss()
        tmp = directory / f".{name}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            faiss.write_index(self._index, str(tmp))
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except (OSError, RuntimeError) as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"Cannot write the vector index {path}: {exc}.") from exc

    @classmethod
    def load(cls, directory: Path, vectors: np.ndarray, *, name: str = INDEX_FILE) -> VectorSearch:
        """The search ``save`` wrote for these ``vectors``: approximate when ``directory / name`` is
        there, exact when it is not. An index file that cannot be read, or that is not of these
        vectors (row count, dimensions), raises ``IndexDamagedError``."""
        matrix = _matrix(vectors)
        path = directory / name
        if not path.exists():
            return cls(matrix)
        faiss = _faiss_or_exact(matrix.shape[0])
        if faiss is None:
            return cls(matrix)
        # the inverted lists are mapped, not read: loading takes milliseconds, and processes that load
        # the same file share its pages (faiss still checks every list against the file's length)
        flags = getattr(faiss, "IO_FLAG_MMAP_IFC", 0)  # faiss >= 1.11; older ones read the file
        try:
            index = faiss.read_index(str(path), flags)
        except RuntimeError as exc:
            raise damaged(path, f"cannot be read as a faiss index ({_first_line(exc)})") from exc
        if not isinstance(index, faiss.IndexIVFFlat) or index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise damaged(path, f"is a {type(index).__name__}, not an inner-product IVF-Flat index")
        if index.ntotal != matrix.shape[0] or index.d != matrix.shape[1]:
            raise damaged(
                path,
                f"holds {index.ntotal} vectors of {index.d} dimensions where the index has "
                f"{matrix.shape[0]} of {matrix.shape[1]}",
            )
        return cls(matrix, index)

    # -- searching ------------------------------------------------------------------------------

    @property
    def approximate(self) -> bool:
        return self._index is not None

    @property
    def size(self) -> int:
        return int(self._vectors.shape[0])

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def params(self) -> dict[str, int]:
        """``nlist`` and ``nprobe`` (both 0 when exact)."""
        return {"nlist": self._lists, "nprobe": self._probes}

    def top(
        self, query: np.ndarray, n: int, *, exclude: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``n`` rows nearest ``query`` and their exact cosines, best first (ties: lower row first);
        never a row that ``exclude`` (a boolean mask, one per row) marks. Fewer when fewer rows are left,
        or, approximately, when the lists scanned hold fewer."""
        q = self._query(query)
        mask = self._mask(exclude)
        rows = self.size
        if n <= 0 or rows == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if self._index is None or self._scan_too_small(n, mask):
            return self._exact_top(q, n, mask)
        return self._ann_top(q, n, mask)

    def all_scores(self, query: np.ndarray) -> np.ndarray | None:
        """The exact cosine of every row, in row order, when the search is exact; None when it is
        approximate (use ``cosines`` for the rows you need)."""
        if self._index is not None:
            return None
        return self._scores(self._query(query))

    def cosines(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The exact cosines of ``rows`` (row numbers) with ``query``, in the order given."""
        picked = np.asarray(rows, dtype=np.int64)
        if picked.size and (picked.min() < 0 or picked.max() >= self.size):
            raise InvalidInputError(f"row numbers must lie in [0, {self.size})")
        return np.asarray(self._vectors[picked] @ self._query(query), dtype=np.float32)

    # -- inside -----------------------------------------------------------------------------------

    def _scores(self, q: np.ndarray) -> np.ndarray:
        return np.asarray(self._vectors @ q, dtype=np.float32)

    def _exact_top(self, q: np.ndarray, n: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        scores = self._scores(q)
        if mask is not None:
            scores[mask] = -np.inf
        best = _best(scores, n)
        if mask is not None:
            best = best[~mask[best]]
        return best, scores[best]

    def _ann_top(self, q: np.ndarray, n: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        faiss = _faiss()
        params = faiss.SearchParametersIVF()
        params.nprobe = self._probes
        if mask is not None:
            # scan more lists as rows drop out, so about as many live rows are scanned
            live = 1.0 - float(np.count_nonzero(mask)) / self.size
            params.nprobe = min(self._lists, math.ceil(self._probes / max(live, 1e-9)))
            keep = np.packbits(~mask, bitorder="little")  # the selector reads it: alive until returned
            params.sel = faiss.IDSelectorBitmap(self.size, faiss.swig_ptr(keep))
        _, ids = self._index.search(q.reshape(1, -1), n, params=params)
        found = ids[0]
        found = found[found >= 0].astype(np.int64)
        if mask is not None:
            found = found[~mask[found]]
        cos = np.asarray(self._vectors[found] @ q, dtype=np.float32)
        order = np.lexsort((found, -cos))
        return found[order], cos[order]

    def _scan_too_small(self, n: int, mask: np.ndarray | None) -> bool:
        """True when the lists a search scans are expected to hold fewer than 2n rows: then the exact
        search, which returns all n, is the one to run."""
        live = self.size - (int(np.count_nonzero(mask)) if mask is not None else 0)
        return 2 * n * self._lists > live * self._probes

    def _query(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise InvalidInputError(f"query vector must have {self.dim} dimensions, not {q.shape[0]}")
        return np.ascontiguousarray(q)

    def _mask(self, exclude: np.ndarray | None) -> np.ndarray | None:
        if exclude is None:
            return None
        mask = np.asarray(exclude)
        if mask.dtype != np.bool_ or mask.shape != (self.size,):
            raise InvalidInputError(f"exclude must be a boolean mask of {self.size} rows")
        return mask if mask.any() else None


def _matrix(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as C-contiguous float32 rows, copied only when they are not already."""
    if vectors.ndim != 2:
        raise InvalidInputError(f"vectors must be a matrix (rows x dimensions), not of shape {vectors.shape}")
    if vectors.dtype == np.float32 and vectors.flags.c_contiguous:
        return vectors
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _best(scores: np.ndarray, n: int) -> np.ndarray:
    """The rows of the ``n`` highest scores, highest first, ties by lower row: what a stable argsort of
    ``-scores`` starts with, without sorting them all."""
    total = scores.shape[0]
    if n >= total:
        return np.lexsort((np.arange(total), -scores)).astype(np.int64)
    cut = scores[np.argpartition(-scores, n - 1)[:n]].min()
    candidates = np.flatnonzero(scores >= cut)  # every row tied at the cut, in row order
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:n]].astype(np.int64)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
