"""An incremental BM25 keyword index whose scores equal those of ``bm25s`` (its default method, "lucene").

``bm25s`` precomputes a weight per (document, term), so one added document means rebuilding all. This
index keeps counts and weighs the query's terms when queried: a vocabulary (ids never reused), per-term
document frequencies over the live rows, row lengths; each row's (term, pair) entries in append-only
CSR, where a *pair* is a distinct (document length, term frequency) whose tf part is computed once; the
same entries term by term (CSC) up to the last merge plus a tail of newer rows, merged (and removed rows
dropped) once either passes a small share of the merged entries; a memo of the weights queried since
the last change.

Scoring reproduces bm25s: idf ``log(1 + (N - df + 0.5) / (df + 0.5))`` as float32; tf part
``tf / (k1 * ((1 - b) + b * dl / avgdl) + tf)`` in float64 (no ``k1 + 1``); each ``idf * tfc`` as float32
added into float32 scores once per query token occurrence, in query order; unknown tokens dropped.
Removed rows score 0 and count in neither N, df nor avgdl: equal bit for bit with numpy >= 2.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import pairwise, repeat
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

_FORMAT = 1
_MIN_PENDING = 4096  # entries (or removed rows) never merged below this ...
_PENDING_SHARE = 1 / 32  # ... and above it, merged once past this share of the merged entries

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


K = TypeVar("K", str, tuple[int, int])
T = TypeVar("T", bound=np.generic)


class _Ids(dict[K, int]):
    """key -> id; a new key gets the next id on lookup (so ``map(ids.__getitem__, keys)`` assigns)."""

    def __missing__(self, key: K) -> int:
        new = self[key] = len(self)
        return new


def _grown(array: npt.NDArray[T], needed: int) -> npt.NDArray[T]:
    """``array`` with room for ``needed`` items (capacity doubled, so appends are amortised O(1))."""
    if needed <= len(array):
        return array
    bigger = np.zeros(max(needed, 2 * len(array), 16), dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


def _by_term(terms: npt.NDArray[np.int32]) -> npt.NDArray[np.intp]:
    """The order of the entries by term, rows kept in order within a term (a CSR's transpose): a
    stable radix sort, 16 bits a pass (numpy's stable sort of 16-bit keys is linear)."""
    order = np.argsort((terms & 0xFFFF).astype(np.uint16), kind="stable")
    if terms.size and int(terms.max()) > 0xFFFF:
        order = order[np.argsort((terms[order] >> 16).astype(np.uint16), kind="stable")]
    return order


class _Weights:
    """For one version of the index (every add or remove makes a new one): the term-frequency part of
    BM25 per pair, and the float32 weights of the postings of the terms queried so far."""

    def __init__(self, version: int, tfc: F64) -> None:
        self.version = version
        self.tfc = tfc
        self.postings: dict[int, list[tuple[I32 | I64, F32]]] = {}


class KeywordIndex:
    """BM25 over rows of tokens, rows appended (``add``) and removed (``remove``) in place. Row numbers
    are the order of addition; a removed row keeps its number and scores 0. Not thread-safe: ``add`` and
    ``remove`` must not run alongside anything else (concurrent ``scores`` calls alone are fine)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = float(k1)
        self._b = float(b)
        self._vocab: _Ids[str] = _Ids()
        self._pairs: _Ids[tuple[int, int]] = _Ids()  # (document length, term frequency) -> pair id
        self._pair_dl: F64 = np.zeros(0, dtype=np.float64)
        self._pair_tf: F64 = np.zeros(0, dtype=np.float64)
        self._size = 0
        self._nnz = 0
        self._row_ptr: I64 = np.zeros(1, dtype=np.int64)  # rows: (term, pair) entries (CSR), capacity-doubled
        self._terms: I32 = np.zeros(0, dtype=np.int32)
        self._codes: I32 = np.zeros(0, dtype=np.int32)
        self._doc_len: I64 = np.zeros(0, dtype=np.int64)
        self._live: Bools = np.zeros(0, dtype=np.bool_)
        self._df: I64 = np.zeros(0, dtype=np.int64)  # statistics over the live rows
        self._n_live = 0
        self._total_len = 0
        # terms: (row, pair) entries (CSC) of rows [0, _main_rows), term ids [0, _main_vocab)
        self._main_rows = 0
        self._main_vocab = 0
        self._col_ptr: I64 = np.zeros(1, dtype=np.int64)
        self._col_rows: I32 = np.zeros(0, dtype=np.int32)
        self._col_codes: I32 = np.zeros(0, dtype=np.int32)
        # rows removed since the last merge (their entries are still stored), capacity-doubled
        self._removed_rows: I64 = np.zeros(0, dtype=np.int64)
        self._n_removed = 0
        self._removed_nnz = 0
        self._version = 0
        self._memo = _Weights(-1, np.zeros(0, dtype=np.float64))

    @classmethod
    def build(cls, corpus: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> KeywordIndex:
        index = cls(k1=k1, b=b)
        index.add(corpus)
        if index._nnz > index._row_ptr[index._main_rows]:  # not merged by add already
            index._merge()
        return index

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def size(self) -> int:
        """Rows ever added, removed ones included: the length of ``scores``."""
        return self._size

    @property
    def live_count(self) -> int:
        """Rows added and not removed: bm25s's N."""
        return self._n_live

    def add(self, corpus: Sequence[Sequence[str]]) -> None:
        """Append one row per document, numbered from ``size`` on, in order."""
        n = len(corpus)
        if n == 0:
            return
        vocab, pairs, n_pairs = self._vocab, self._pairs, len(self._pairs)
        terms_list: list[int] = []
        codes_list: list[int] = []
        ends = np.zeros(n + 1, dtype=np.int64)
        lengths = np.zeros(n, dtype=np.int64)
        for i, doc in enumerate(corpus):
            counts = Counter(doc)
            terms_list.extend(map(vocab.__getitem__, counts))
            codes_list.extend(map(pairs.__getitem__, zip(repeat(len(doc)), counts.values())))
            ends[i + 1] = len(terms_list)
            lengths[i] = len(doc)
        terms = np.array(terms_list, dtype=np.int32)
        codes = np.array(codes_list, dtype=np.int32)
        if len(pairs) > n_pairs:
            new = np.array(list(pairs)[n_pairs:], dtype=np.float64)  # dicts keep insertion (= id) order
            self._pair_dl = _grown(self._pair_dl, len(pairs))
            self._pair_tf = _grown(self._pair_tf, len(pairs))
            self._pair_dl[n_pairs : len(pairs)] = new[:, 0]
            self._pair_tf[n_pairs : len(pairs)] = new[:, 1]

        old, size, start, nnz = self._size, self._size + n, self._nnz, self._nnz + len(terms)
        self._terms = _grown(self._terms, nnz)
        self._codes = _grown(self._codes, nnz)
        self._terms[start:nnz] = terms
        self._codes[start:nnz] = codes
        self._row_ptr = _grown(self._row_ptr, size + 1)
        self._row_ptr[old + 1 : size + 1] = ends[1:] + start
        self._doc_len = _grown(self._doc_len, size)
        self._doc_len[old:size] = lengths
        self._live = _grown(self._live, size)
        self._live[old:size] = True
        self._df = _grown(self._df, len(vocab))
        np.add.at(self._df, terms, 1)
        self._size, self._nnz = size, nnz
        self._n_live += n
        self._total_len += int(lengths.sum())
        self._version += 1
        if self._nnz - int(self._row_ptr[self._main_rows]) > self._pending_limit():
            self._merge()

    def remove(self, rows: Iterable[int]) -> None:
        """Remove rows: each then scores 0 and no longer counts. Removing a removed row does nothing."""
        wanted = sorted({int(r) for r in rows})
        if not wanted:
            return
        if wanted[0] < 0 or wanted[-1] >= self._size:
            raise IndexError(f"row out of range: the index has {self._size} rows")
        picked = np.asarray(wanted, dtype=np.int64)
        picked = picked[self._live[picked]]
        if len(picked) == 1:  # the common case, without the vectorised gather below
            lo, hi = int(self._row_ptr[picked[0]]), int(self._row_ptr[picked[0] + 1])
            self._df[self._terms[lo:hi]] -= 1  # a row's terms are distinct
            total = hi - lo
        elif len(picked):
            starts = self._row_ptr[picked]
            counts = self._row_ptr[picked + 1] - starts
            total = int(counts.sum())
            entries = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(total)
            np.subtract.at(self._df, self._terms[entries], 1)
        else:
            return
        self._live[picked] = False
        self._n_live -= len(picked)
        self._total_len -= int(self._doc_len[picked].sum())
        self._version += 1
        self._removed_rows = _grown(self._removed_rows, self._n_removed + len(picked))
        self._removed_rows[self._n_removed : self._n_removed + len(picked)] = picked
        self._n_removed += len(picked)
        self._removed_nnz += total
        if max(self._removed_nnz, self._n_removed) > self._pending_limit():
            self._merge()

    def _pending_limit(self) -> int:
        return max(_MIN_PENDING, int(int(self._row_ptr[self._main_rows]) * _PENDING_SHARE))

    def _merge(self) -> None:
        """Drop the removed rows' entries and rebuild the CSC over all rows: O(entries + rows + terms)."""
        size = self._size
        if self._n_removed:
            lengths = np.diff(self._row_ptr[: size + 1])
            keep = np.repeat(self._live[:size], lengths)
            nnz = int(keep.sum())
            self._terms[:nnz] = self._terms[: self._nnz][keep]
            self._codes[:nnz] = self._codes[: self._nnz][keep]
            lengths[~self._live[:size]] = 0
            np.cumsum(lengths, out=self._row_ptr[1 : size + 1])
            self._nnz = nnz
            self._n_removed = self._removed_nnz = 0
        n_vocab = len(self._vocab)
        terms = self._terms[: self._nnz]
        order = _by_term(terms)
        lengths = np.diff(self._row_ptr[: size + 1])
        self._col_ptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_vocab), out=self._col_ptr[1:])
        self._col_rows = np.repeat(np.arange(size, dtype=np.int32), lengths)[order]
        self._col_codes = self._codes[: self._nnz][order].astype(np.int32)
        self._main_rows, self._main_vocab = size, n_vocab

    def scores(self, tokens: Sequence[str]) -> F32:
        """float32 BM25 score of every row (``size`` of them) for the query ``tokens``."""
        out = np.zeros(self._size, dtype=np.float32)
        if self._n_live == 0 or self._total_len == 0:
            return out
        vocab, df = self._vocab, self._df
        ids = [tid for tid in map(vocab.get, tokens) if tid is not None and df[tid]]
        if not ids:
            return out
        memo = self._memo
        if memo.version != self._version:
            memo = self._memo = _Weights(self._version, self._tfc())
        postings = memo.postings
        missing = [tid for tid in dict.fromkeys(ids) if tid not in postings]
        if missing:
            self._weigh(missing, memo)
        for tid in ids:
            for rows, weights in postings[tid]:
                np.add.at(out, rows, weights)
        if self._n_removed:
            out[self._removed_rows[: self._n_removed]] = 0
        return out

    def _tfc(self) -> F64:
        """BM25's term-frequency part per pair, with bm25s's operations in bm25s's order."""
        k1, b, avgdl = self.k1, self.b, self._total_len / self._n_live
        dl, tf = self._pair_dl[: len(self._pairs)], self._pair_tf[: len(self._pairs)]
        result: F64 = tf / (k1 * ((1 - b) + b * dl / avgdl) + tf)
        return result

    def _weigh(self, tids: list[int], memo: _Weights) -> None:
        """The float32 weight (idf x tfc, as bm25s stores it) of each posting of the terms ``tids``:
        in the merged rows, then in the tail (disjoint rows, so adding them apart changes no sum)."""
        tail = self._tail_postings(tids)
        n = self._n_live
        for tid in tids:
            df = int(self._df[tid])
            idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
            chunks: list[tuple[I32 | I64, F32]] = []
            if tid < self._main_vocab:
                lo, hi = int(self._col_ptr[tid]), int(self._col_ptr[tid + 1])
                if hi > lo:
                    chunks.append(
                        (self._col_rows[lo:hi], self._weights(idf, self._col_codes[lo:hi], memo.tfc))
                    )
            if tid in tail:
                rows, codes = tail[tid]
                chunks.append((rows, self._weights(idf, codes, memo.tfc)))
            memo.postings[tid] = chunks

    @staticmethod
    def _weights(idf: np.float32, codes: I32, tfc: F64) -> F32:
        if len(codes) > len(tfc):  # more postings than pairs: weigh each pair once, then look them up
            return (idf * tfc).astype(np.float32)[codes]
        return (idf * tfc[codes]).astype(np.float32)

    def _tail_postings(self, tids: list[int]) -> dict[int, tuple[I64, I32]]:
        """(rows, pairs) of the terms ``tids`` among the rows added since the last merge."""
        start = int(self._row_ptr[self._main_rows])
        if start == self._nnz:
            return {}
        wanted = np.zeros(len(self._vocab), dtype=np.bool_)
        wanted[tids] = True
        terms = self._terms[start : self._nnz]
        hits = np.flatnonzero(wanted[terms])
        if not len(hits):
            return {}
        hit_terms = terms[hits]
        entries = hits + start
        rows = np.searchsorted(self._row_ptr[: self._size + 1], entries, side="right") - 1
        codes = self._codes[entries]
        if len(tids) == 1:
            return {tids[0]: (rows, codes)}
        found: dict[int, tuple[I64, I32]] = {}
        for tid in tids:
            mine = hit_terms == tid
            if mine.any():
                found[tid] = rows[mine], codes[mine]
        return found

    def save(self, path: Path) -> None:
        """Write one uncompressed .npz atomically: a temporary file beside ``path``, then a rename."""
        terms = list(self._vocab)
        text = "".join(terms).encode("utf-32-le", "surrogatepass")
        pairs = np.array(list(self._pairs), dtype=np.int64).reshape(-1, 2)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "format": np.array([_FORMAT], dtype=np.int64),
            "params": np.array([self.k1, self.b], dtype=np.float64),
            "vocab_text": np.frombuffer(text, dtype=np.uint32),
            "vocab_ends": np.cumsum(np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))),
            "pairs": pairs,
            "row_ptr": self._row_ptr[: self._size + 1],
            "terms": self._terms[: self._nnz],
            "codes": self._codes[: self._nnz],
            "doc_len": self._doc_len[: self._size],
            "live": self._live[: self._size],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, allow_pickle=False, **arrays)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> KeywordIndex:
        """Read what ``save`` wrote; ValueError if the file is not such an index."""
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"][0]) != _FORMAT:
                    raise ValueError(f"{path}: keyword index format {int(data['format'][0])}, not {_FORMAT}")
                k1, b = (float(x) for x in data["params"])
                text = data["vocab_text"].astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
                ends = data["vocab_ends"].astype(np.int64)
                pairs = data["pairs"].astype(np.int64).reshape(-1, 2)
                row_ptr = data["row_ptr"].astype(np.int64)
                terms = data["terms"].astype(np.int32)
                codes = data["codes"].astype(np.int32)
                doc_len = data["doc_len"].astype(np.int64)
                live = data["live"].astype(np.bool_)
        except (KeyError, IndexError, TypeError, EOFError, OSError) as exc:
            raise ValueError(f"{path}: not a keyword index ({exc})") from exc
        size, nnz, n_vocab = len(doc_len), len(terms), len(ends)
        if (
            len(row_ptr) != size + 1
            or len(live) != size
            or len(codes) != nnz
            or row_ptr[0] != 0
            or row_ptr[-1] != nnz
            or bool(np.any(np.diff(row_ptr) < 0))
            or (
                nnz
                and (
                    terms.min() < 0 or terms.max() >= n_vocab or codes.min() < 0 or codes.max() >= len(pairs)
                )
            )
            or (ends[-1] if n_vocab else 0) != len(text)
        ):
            raise ValueError(f"{path}: the keyword index's arrays do not agree")
        index = cls(k1=k1, b=b)
        bounds = [0, *ends.tolist()]
        index._vocab = _Ids((text[s:e], i) for i, (s, e) in enumerate(pairwise(bounds)))
        index._pairs = _Ids(((int(dl), int(tf)), i) for i, (dl, tf) in enumerate(pairs.tolist()))
        index._pair_dl = pairs[:, 0].astype(np.float64)
        index._pair_tf = pairs[:, 1].astype(np.float64)
        index._size, index._nnz = size, nnz
        index._row_ptr, index._terms, index._codes = row_ptr, terms, codes
        index._doc_len, index._live = doc_len, live
        index._df = np.bincount(terms[np.repeat(live, np.diff(row_ptr))], minlength=n_vocab).astype(np.int64)
        index._n_live = int(live.sum())
        index._total_len = int(doc_len[live].sum())
        index._removed_rows = np.flatnonzero(~live).astype(np.int64)
        index._n_removed = len(index._removed_rows)
        index._merge()
        return index
