"""The catalog's words as sparse 0/1 matrices (``WordMatrix``, of ``Csr``), their growth by what changed,
and the maps from ids that a change copies only in part (``Shards``).

A change appends rows for what it wrote (the ids of the tools and powers it rewrote point at the new
rows; rows no id points at any more are never read, and are dropped once they outnumber the live ones)
instead of copying the matrices: the rows live in arrays with room to grow (``_Rows``), and each matrix
is a view of their first rows. A matrix made earlier keeps reading what it read (the rows past its own
are not its), so a resolve running on the previous catalog's terms while a change is read is never
disturbed; likewise a changed ``Shards`` shares the buckets the change did not write.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from typing import Generic, TypeVar, overload

import numpy as np

_INDEX = np.int32
_ROOM = 1.25  # the capacity a reallocation leaves for the next changes
_GROWING = threading.Lock()
_SLACK = 4096  # rows left behind by changes that never call for compacting (see ``_compacted``)
_BUCKETS = 1024  # a map's buckets: at 100k keys a change copies ~100 entries per key it writes
V = TypeVar("V")
T = TypeVar("T")


class Shards(Mapping[str, V]):
    """An immutable map split by the keys' hashes into buckets, so that a changed copy (``edit``, then
    ``Draft.done``) shares every bucket the change did not write: a registration into a 100k-tool
    catalog copies a few buckets of the maps from tool ids, not the maps."""

    __slots__ = ("_buckets", "_size")

    def __init__(self, buckets: list[dict[str, V]] | None = None, size: int = 0) -> None:
        self._buckets: list[dict[str, V]] = buckets or [{} for _ in range(_BUCKETS)]
        self._size = size

    @classmethod
    def of(cls, items: Mapping[str, V]) -> Shards[V]:
        draft = cls().edit()
        for key, value in items.items():
            draft[key] = value
        return draft.done()

    def __getitem__(self, key: str) -> V:
        return self._buckets[hash(key) % _BUCKETS][key]

    @overload
    def get(self, key: str, /) -> V | None: ...
    @overload
    def get(self, key: str, default: V, /) -> V: ...
    @overload
    def get(self, key: str, default: T, /) -> V | T: ...
    def get(self, key: str, default: object = None, /) -> object:
        return self._buckets[hash(key) % _BUCKETS].get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._buckets[hash(key) % _BUCKETS]

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self._buckets)

    def pairs(self) -> Iterator[tuple[str, V]]:
        """The items, faster than ``items()`` (no lookup per key)."""
        return chain.from_iterable(b.items() for b in self._buckets)

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"Shards({dict(self.items())!r})"

    def edit(self) -> Draft[V]:
        return Draft(list(self._buckets), self._size)


class Draft(Generic[V]):
    """A changed copy of a ``Shards`` being made: a bucket is copied the first time it is written."""

    __slots__ = ("_buckets", "_owned", "_size")

    def __init__(self, buckets: list[dict[str, V]], size: int) -> None:
        self._buckets, self._size = buckets, size
        self._owned: set[int] = set()

    def _writable(self, key: str) -> dict[str, V]:
        n = hash(key) % _BUCKETS
        if n not in self._owned:
            self._owned.add(n)
            self._buckets[n] = dict(self._buckets[n])
        return self._buckets[n]

    def __getitem__(self, key: str) -> V:
        return self._buckets[hash(key) % _BUCKETS][key]

    def get(self, key: str) -> V | None:
        return self._buckets[hash(key) % _BUCKETS].get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._buckets[hash(key) % _BUCKETS]

    def __setitem__(self, key: str, value: V) -> None:
        bucket = self._writable(key)
        self._size += key not in bucket
        bucket[key] = value

    def update(self, items: Mapping[str, V]) -> None:
        buckets, owned, size = self._buckets, self._owned, self._size
        for key, value in items.items():
            n = hash(key) % _BUCKETS
            if n not in owned:
                owned.add(n)
                buckets[n] = dict(buckets[n])
            bucket = buckets[n]
            size += key not in bucket
            bucket[key] = value
        self._size = size

    def pop(self, key: str) -> V | None:
        bucket = self._buckets[hash(key) % _BUCKETS]
        if key not in bucket:
            return None
        self._size -= 1
        return self._writable(key).pop(key)

    @property
    def size(self) -> int:
        return self._size

    def done(self) -> Shards[V]:
        """The new map (the draft is not to be written after)."""
        return Shards(self._buckets, self._size)


@dataclass(frozen=True, eq=False)
class Csr:
    """A 0/1 matrix in compressed sparse rows: row ``r``'s columns are
    ``indices[indptr[r]:indptr[r + 1]]`` (views of a ``_Rows``' arrays). Only what the word evidence
    reads (``_row_sums`` in resolve/rerank/features.py): no products, no formats, no scipy."""

    indptr: np.ndarray
    indices: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def empty(cls, width: int) -> Csr:
        return cls(np.zeros(1, dtype=_INDEX), np.zeros(0, dtype=_INDEX), (0, width))

    @property
    def nnz(self) -> int:
        return int(self.indptr[self.shape[0]])


@dataclass
class _Rows:
    """The CSR arrays matrices are views of, with room past ``rows``/``nnz`` (those of the last matrix
    made from them: only that matrix may append in place)."""

    indptr: np.ndarray
    indices: np.ndarray
    rows: int
    nnz: int

    @classmethod
    def holding(cls, old: Csr, rows: int, nnz: int) -> _Rows:
        """New arrays with room for ``rows`` rows and ``nnz`` columns, starting with ``old``'s rows."""
        if nnz >= np.iinfo(_INDEX).max:
            raise OverflowError("the catalog's words outgrow 32-bit sparse indices")
        indptr = np.zeros(int(rows * _ROOM) + 2, dtype=_INDEX)
        indices = np.zeros(int(nnz * _ROOM) + 1, dtype=_INDEX)
        indptr[: old.shape[0] + 1] = old.indptr
        indices[: old.nnz] = old.indices[: old.nnz]
        return cls(indptr, indices, old.shape[0], old.nnz)

    def fits(self, old: Csr, rows: int, nnz: int) -> bool:
        tip = (self.rows, self.nnz) == (old.shape[0], old.nnz)
        return tip and rows + 1 <= len(self.indptr) and nnz <= len(self.indices)


def _appended(
    old: Csr, room: _Rows | None, lengths: np.ndarray, flat: np.ndarray, width: int
) -> tuple[Csr, _Rows]:
    """``old`` with rows appended (``lengths`` columns each, the columns ``flat`` one row after the
    other), ``width`` columns wide."""
    start_rows, start_nnz = old.shape[0], old.nnz
    rows, nnz = start_rows + len(lengths), start_nnz + len(flat)
    with _GROWING:
        if room is None or not room.fits(old, rows, nnz):
            room = _Rows.holding(old, rows, nnz)
        room.indptr[start_rows + 1 : rows + 1] = start_nnz + np.cumsum(lengths)
        room.indices[start_nnz:nnz] = flat
        room.rows, room.nnz = rows, nnz
    return Csr(room.indptr[: rows + 1], room.indices[:nnz], (rows, width)), room


@dataclass(frozen=True)
class WordMatrix:
    """The catalog's words as sparse 0/1 matrices, so that a query's word evidence about many tools is
    two sparse products instead of a loop: one row per tool and field (``RANKED_FIELDS``, then all the
    tool's words), one row per power (all its words). A row's columns are in the order of its words
    (sorted), whatever the columns' numbers: sums over a row add the same numbers in the same order
    whether the matrix was built at once or grown by changes."""

    vocabulary: Shards[int]
    tool_rows: Shards[int]  # tool id -> its first row in ``fields``
    power_rows: Shards[int]
    fields: Csr
    powers: Csr
    room: tuple[_Rows | None, _Rows | None] = field(default=(None, None), compare=False, repr=False)
    per_tool: int = 0  # the rows of a tool (0: none yet)

    @classmethod
    def empty(cls) -> WordMatrix:
        return cls(Shards(), Shards(), Shards(), Csr.empty(1), Csr.empty(1))

    @classmethod
    def build(
        cls,
        per_field: dict[str, list[frozenset[str]]],
        tool_words: Mapping[str, frozenset[str]],
        power_words: dict[str, frozenset[str]],
    ) -> WordMatrix:
        return extended(cls.empty(), per_field, tool_words, power_words)


class _Columns:
    """The column numbers of word sets, in the order of their words; each distinct set looked up once
    (the fields of a server's tools, and many tools' texts, repeat), rows then made by numpy."""

    def __init__(self, vocabulary: Draft[int]) -> None:
        self.vocabulary = vocabulary
        self._words: dict[str, int] = {}
        self._ids: dict[frozenset[str], int] = {}
        self._sets: list[list[int]] = []  # the columns of each distinct set, by its number

    def _column(self, word: str) -> int:
        found = self.vocabulary.get(word)
        if found is None:
            found = self.vocabulary.size
            self.vocabulary[word] = found
        self._words[word] = found
        return found

    def of(self, words: frozenset[str]) -> int:
        """The number of this set (its columns: ``self._sets[n]``)."""
        found = self._ids.get(words)
        if found is None:
            known = self._words
            found = self._ids[words] = len(self._sets)
            self._sets.append([known[w] if w in known else self._column(w) for w in sorted(words)])
        return found

    def rows(self, sets: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The lengths of rows holding these sets (by number), and their columns one after the other."""
        sizes = np.fromiter(map(len, self._sets), dtype=np.int64, count=len(self._sets))
        pool = np.fromiter(chain.from_iterable(self._sets), dtype=_INDEX, count=int(sizes.sum()))
        numbers = np.asarray(sets, dtype=np.int64)
        lengths = sizes[numbers]
        starts = np.cumsum(sizes) - sizes
        offsets = np.repeat(starts[numbers] - (np.cumsum(lengths) - lengths), lengths)
        return lengths, pool[np.arange(int(lengths.sum())) + offsets]


def extended(
    matrix: WordMatrix,
    per_field: dict[str, list[frozenset[str]]],
    tool_words: Mapping[str, frozenset[str]],
    power_words: dict[str, frozenset[str]],
    dropped: tuple[Iterable[str], Iterable[str]] = ((), ()),
) -> WordMatrix:
    """``matrix`` with rows appended for these tools and powers (their ids then point at the new rows;
    rows no id points at any more are never read), the vocabulary grown by their new words, and the
    ``dropped`` tools and powers forgotten. Costs what is appended, not the matrices' size."""
    vocabulary = matrix.vocabulary.edit()
    columns = _Columns(vocabulary)
    tool_rows = matrix.tool_rows.edit()
    power_rows = matrix.power_rows.edit()
    for tool in dropped[0]:
        tool_rows.pop(tool)
    for power in dropped[1]:
        power_rows.pop(power)
    field_sets: list[int] = []
    first = matrix.fields.shape[0]
    placed: dict[str, int] = {}
    for tool_id, sets in per_field.items():
        placed[tool_id] = first + len(field_sets)
        field_sets.extend(map(columns.of, sets))
        field_sets.append(columns.of(tool_words[tool_id]))
    tool_rows.update(placed)
    first = matrix.powers.shape[0]
    power_rows.update({power: first + n for n, power in enumerate(power_words)})
    power_sets = list(map(columns.of, power_words.values()))
    width = max(vocabulary.size, 1)
    fields, field_room = _appended(matrix.fields, matrix.room[0], *columns.rows(field_sets), width)
    powers, power_room = _appended(matrix.powers, matrix.room[1], *columns.rows(power_sets), width)
    per_tool = len(field_sets) // len(per_field) if per_field else matrix.per_tool
    done_tools, done_powers = tool_rows.done(), power_rows.done()
    if fields.shape[0] > 2 * len(done_tools) * per_tool + _SLACK:
        fields, field_room, done_tools = _compacted(fields, done_tools, per_tool)
    if powers.shape[0] > 2 * len(done_powers) + _SLACK:
        powers, power_room, done_powers = _compacted(powers, done_powers, 1)
    rooms = (field_room, power_room)
    return WordMatrix(vocabulary.done(), done_tools, done_powers, fields, powers, rooms, per_tool)


def _compacted(old: Csr, rows: Shards[int], width: int) -> tuple[Csr, _Rows, Shards[int]]:
    """Only the rows ids point at (``width`` from each first row), in new arrays: the rows changes left
    behind are dropped once they outnumber the live ones (a cost of the live rows, once in as many
    rows appended)."""
    keys, firsts = zip(*rows.pairs(), strict=True) if len(rows) else ((), ())
    picked = (np.asarray(firsts, dtype=np.int64)[:, None] + np.arange(width)[None, :]).ravel()
    starts = old.indptr[picked].astype(np.int64)
    lengths = old.indptr[picked + 1] - starts
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    flat = old.indices[np.arange(int(lengths.sum())) + offsets]
    matrix, room = _appended(Csr.empty(old.shape[1]), None, lengths, flat, old.shape[1])
    placed = Shards[int]().edit()
    placed.update({key: n * width for n, key in enumerate(keys)})
    return matrix, room, placed.done()


@contextmanager
def collection_held() -> Iterator[None]:
    """Automatic garbage collection held off while all of a catalog's documents are read: the reading
    makes objects that live on, and each collection meanwhile rescans the heap for nothing (a quarter
    of the time of building the terms of 100k tools)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def word_counts(sets: Counter[frozenset[str]]) -> Counter[str]:
    """How many of these word sets (counted) hold each word."""
    out: Counter[str] = Counter()
    for words, n in sets.items():
        for word in words:
            out[word] += n
    return out
