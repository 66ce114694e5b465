"""The catalog's words as sparse 0/1 matrices (``WordMatrix``), and their growth by what changed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class WordMatrix:
    """The catalog's words as sparse 0/1 matrices, so that a query's word evidence about many tools is
    two sparse products instead of a loop: one row per tool and field (``RANKED_FIELDS``, then all the
    tool's words), one row per power (all its words)."""

    vocabulary: dict[str, int]
    tool_rows: dict[str, int]  # tool id -> its first row in ``fields``
    power_rows: dict[str, int]
    fields: sparse.csr_matrix
    powers: sparse.csr_matrix

    @classmethod
    def build(
        cls,
        per_field: dict[str, list[set[str]]],
        tool_words: dict[str, frozenset[str]],
        power_words: dict[str, set[str]],
    ) -> WordMatrix:
        vocabulary: dict[str, int] = {}
        columns: list[int] = []
        pointers = [0]
        tool_rows: dict[str, int] = {}
        for tool_id, fields in per_field.items():
            tool_rows[tool_id] = len(pointers) - 1
            for words in (*fields, tool_words[tool_id]):
                columns.extend(vocabulary.setdefault(w, len(vocabulary)) for w in sorted(words))
                pointers.append(len(columns))
        power_columns: list[int] = []
        power_pointers = [0]
        power_rows: dict[str, int] = {}
        for power, words in power_words.items():
            power_rows[power] = len(power_pointers) - 1
            power_columns.extend(vocabulary.setdefault(w, len(vocabulary)) for w in sorted(words))
            power_pointers.append(len(power_columns))
        size = max(len(vocabulary), 1)

        def matrix(cols: list[int], ptrs: list[int]) -> sparse.csr_matrix:
            data = np.ones(len(cols), dtype=np.float64)
            return sparse.csr_matrix(
                (data, np.asarray(cols, dtype=np.int64), ptrs), shape=(len(ptrs) - 1, size)
            )

        return cls(
            vocabulary,
            tool_rows,
            power_rows,
            matrix(columns, pointers),
            matrix(power_columns, power_pointers),
        )


def extended(
    matrix: WordMatrix,
    per_field: dict[str, list[set[str]]],
    tool_words: dict[str, frozenset[str]],
    power_words: dict[str, set[str]],
    dropped: tuple[Iterable[str], Iterable[str]] = ((), ()),
) -> WordMatrix:
    """``matrix`` with rows appended for these tools and powers (their ids then point at the new rows;
    rows no id points at any more are never read), the vocabulary grown by their new words, and the
    ``dropped`` tools and powers forgotten."""
    vocabulary = dict(matrix.vocabulary)
    added = WordMatrix.build(per_field, tool_words, power_words)
    remap = np.asarray(
        [
            vocabulary.setdefault(w, len(vocabulary))
            for w in sorted(added.vocabulary, key=lambda w: added.vocabulary[w])
        ],
        dtype=np.int64,
    )
    size = max(len(vocabulary), 1)

    def grown(old: sparse.csr_matrix, new: sparse.csr_matrix) -> sparse.csr_matrix:
        moved = sparse.csr_matrix(
            (new.data, remap[new.indices] if len(remap) else new.indices, new.indptr),
            shape=(new.shape[0], size),
        )
        wide = sparse.csr_matrix((old.data, old.indices, old.indptr), shape=(old.shape[0], size))
        return sparse.vstack([wide, moved], format="csr")

    tool_rows = dict(matrix.tool_rows)
    power_rows = dict(matrix.power_rows)
    for tool in dropped[0]:
        tool_rows.pop(tool, None)
    for power in dropped[1]:
        power_rows.pop(power, None)
    tool_rows.update({k: v + matrix.fields.shape[0] for k, v in added.tool_rows.items()})
    power_rows.update({k: v + matrix.powers.shape[0] for k, v in added.power_rows.items()})
    return WordMatrix(
        vocabulary,
        tool_rows,
        power_rows,
        grown(matrix.fields, added.fields),
        grown(matrix.powers, added.powers),
    )
