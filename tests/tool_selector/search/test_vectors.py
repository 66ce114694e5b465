"""VectorSearch: exact below ``ann_min`` rows, faiss IVF-Flat at or above it.

Vectors are seeded and clustered (centres plus noise, normalised), as embeddings of tools are: the IVF
index is only as good as its lists, and uniform random vectors have no clusters to find.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tool_selector.core.errors import ConfigurationError, IndexDamagedError, InvalidInputError
from tool_selector.search import vectors as vectors_module
from tool_selector.search.vectors import INDEX_FILE, VectorSearch, default_lists, default_probes

DIM = 32
ROWS = 500
LISTS, PROBES = 8, 1  # approximate in earnest: the defaults would scan every list of so few rows


def _clustered(rows: int, *, seed: int = 0, centres: int = 20, noise: float = 0.7) -> np.ndarray:
    """``rows`` vectors around the same ``centres`` cluster centres (whatever ``seed``: it draws only
    which centre and the noise), normalised."""
    middle = np.random.default_rng(1234).normal(size=(centres, DIM))
    middle /= np.linalg.norm(middle, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    x = middle[rng.integers(0, centres, rows)] + rng.normal(0, noise / np.sqrt(DIM), (rows, DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def _queries(count: int, seed: int = 1) -> np.ndarray:
    return _clustered(count, seed=seed)


@pytest.fixture(scope="module")
def matrix() -> np.ndarray:
    return _clustered(ROWS)


@pytest.fixture(scope="module")
def ann(matrix: np.ndarray) -> VectorSearch:
    return _approximate(matrix)


def _approximate(matrix: np.ndarray) -> VectorSearch:
    return VectorSearch.build(matrix, ann_min=100, seed=0, nlist=LISTS, nprobe=PROBES)


def _exact_order(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.argsort(-(matrix @ q), kind="stable")


def test_below_ann_min_the_search_is_exact_and_follows_numpy_argsort(matrix: np.ndarray) -> None:
    search = VectorSearch.build(matrix)  # 500 rows < the default ann_min
    assert not search.approximate
    for q in _queries(20):
        rows, cosines = search.top(q, 25)
        assert rows.tolist() == _exact_order(matrix, q)[:25].tolist()
        np.testing.assert_array_equal(cosines, (matrix @ q)[rows])
        scores = search.all_scores(q)
        assert scores is not None
        np.testing.assert_allclose(scores, matrix @ q, rtol=0, atol=1e-6)


def test_exact_ties_go_to_the_lower_row() -> None:
    tied = np.repeat(_clustered(3), 4, axis=0)  # every vector four times
    search = VectorSearch.build(tied)
    q = _clustered(1, seed=5)[0]
    rows, _ = search.top(q, 6)
    assert rows.tolist() == _exact_order(tied, q)[:6].tolist()


def test_at_ann_min_the_search_is_approximate_with_exact_cosines(
    matrix: np.ndarray, ann: VectorSearch
) -> None:
    assert ann.approximate
    assert ann.params == {"nlist": LISTS, "nprobe": PROBES}
    assert ann.all_scores(_queries(1)[0]) is None
    recalls = []
    for q in _queries(50):
        rows, cosines = ann.top(q, 10)
        assert len(rows) == 10
        np.testing.assert_allclose(cosines, matrix[rows] @ q, rtol=0, atol=1e-6)  # recomputed exactly
        assert (np.diff(cosines) <= 0).all()  # best first
        recalls.append(len(set(rows.tolist()) & set(_exact_order(matrix, q)[:10].tolist())) / 10)
    assert np.mean(recalls) >= 0.9


def test_exact_rows_and_cosines_for_any_rows(ann: VectorSearch, matrix: np.ndarray) -> None:
    q = _queries(1)[0]
    np.testing.assert_allclose(ann.cosines(q, np.array([3, 0, 499])), matrix[[3, 0, 499]] @ q, atol=1e-6)
    with pytest.raises(InvalidInputError):
        ann.cosines(q, np.array([ROWS]))


def test_the_same_vectors_and_seed_build_the_same_index(matrix: np.ndarray, ann: VectorSearch) -> None:
    again = _approximate(matrix)
    for q in _queries(10):
        np.testing.assert_array_equal(again.top(q, 30)[0], ann.top(q, 30)[0])


@pytest.mark.parametrize("approximate", [False, True])
def test_excluded_rows_are_never_returned_even_the_best(matrix: np.ndarray, approximate: bool) -> None:
    search = _approximate(matrix) if approximate else VectorSearch.build(matrix)
    assert search.approximate is approximate
    for q in _queries(10):
        best = _exact_order(matrix, q)
        exclude = np.zeros(ROWS, dtype=bool)
        exclude[best[:5]] = True  # the five best
        exclude[np.random.default_rng(0).choice(ROWS, 100, replace=False)] = True
        rows, cosines = search.top(q, 10, exclude=exclude)
        assert len(rows) == 10
        assert not exclude[rows].any()
        np.testing.assert_allclose(cosines, matrix[rows] @ q, atol=1e-6)
        # n as large as the matrix: every row left, and only those
        everything, _ = search.top(q, ROWS + 5, exclude=exclude)
        assert sorted(everything.tolist()) == np.flatnonzero(~exclude).tolist()


def test_excluding_every_row_returns_nothing(ann: VectorSearch) -> None:
    rows, cosines = ann.top(_queries(1)[0], 10, exclude=np.ones(ROWS, dtype=bool))
    assert rows.size == 0 and cosines.size == 0


def test_a_bad_mask_or_query_is_refused(ann: VectorSearch) -> None:
    q = _queries(1)[0]
    with pytest.raises(InvalidInputError):
        ann.top(q, 5, exclude=np.zeros(ROWS - 1, dtype=bool))
    with pytest.raises(InvalidInputError):
        ann.top(q, 5, exclude=np.zeros(ROWS, dtype=np.int64))
    with pytest.raises(InvalidInputError):
        ann.top(q[:-1], 5)


@pytest.mark.parametrize("approximate", [False, True])
def test_n_larger_than_the_rows_returns_every_row_in_exact_order(
    matrix: np.ndarray, approximate: bool
) -> None:
    search = _approximate(matrix) if approximate else VectorSearch.build(matrix)
    q = _queries(1)[0]
    rows, cosines = search.top(q, ROWS * 3)
    assert rows.tolist() == _exact_order(matrix, q).tolist()
    np.testing.assert_allclose(cosines, (matrix @ q)[rows], atol=1e-6)
    assert search.top(q, 0)[0].size == 0


def test_an_empty_matrix_finds_nothing(tmp_path: Path) -> None:
    empty = np.zeros((0, DIM), dtype=np.float32)
    search = VectorSearch.build(empty, ann_min=0)
    assert not search.approximate
    rows, cosines = search.top(np.ones(DIM, dtype=np.float32), 10)
    assert rows.size == 0 and cosines.size == 0
    assert rows.dtype == np.int64 and cosines.dtype == np.float32
    scores = search.all_scores(np.ones(DIM, dtype=np.float32))
    assert scores is not None and scores.size == 0
    search.save(tmp_path)
    assert not (tmp_path / INDEX_FILE).exists()
    assert VectorSearch.load(tmp_path, empty).top(np.ones(DIM, dtype=np.float32), 3)[0].size == 0


def test_save_and_load_give_the_same_answers(tmp_path: Path, matrix: np.ndarray, ann: VectorSearch) -> None:
    np.save(tmp_path / "vectors.npy", matrix)
    ann.save(tmp_path)
    assert (tmp_path / INDEX_FILE).is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    loaded = VectorSearch.load(tmp_path, np.load(tmp_path / "vectors.npy", mmap_mode="r"))
    assert loaded.approximate and loaded.params == ann.params
    exclude = np.zeros(ROWS, dtype=bool)
    exclude[::7] = True
    for q in _queries(20):
        for kwargs in ({}, {"exclude": exclude}):
            want_rows, want_cos = ann.top(q, 20, **kwargs)
            got_rows, got_cos = loaded.top(q, 20, **kwargs)
            np.testing.assert_array_equal(got_rows, want_rows)
            np.testing.assert_array_equal(got_cos, want_cos)


def test_an_exact_search_saves_no_index_and_removes_a_stale_one(tmp_path: Path, matrix: np.ndarray) -> None:
    (tmp_path / INDEX_FILE).write_bytes(b"stale")
    VectorSearch.build(matrix).save(tmp_path)
    assert not (tmp_path / INDEX_FILE).exists()
    assert not VectorSearch.load(tmp_path, matrix).approximate


def test_an_index_file_of_other_vectors_or_garbage_is_damaged(
    tmp_path: Path, matrix: np.ndarray, ann: VectorSearch
) -> None:
    ann.save(tmp_path)
    with pytest.raises(IndexDamagedError, match="holds 500 vectors"):
        VectorSearch.load(tmp_path, matrix[:400])
    (tmp_path / INDEX_FILE).write_bytes(b"not a faiss index")
    with pytest.raises(IndexDamagedError) as caught:
        VectorSearch.load(tmp_path, matrix)
    assert caught.value.details["path"] == str(tmp_path / INDEX_FILE)


def test_without_faiss_the_search_stays_exact_and_says_what_to_install_once(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    matrix: np.ndarray,
    ann: VectorSearch,
) -> None:
    ann.save(tmp_path)  # an index file written where faiss was installed
    real_import = builtins.__import__

    def no_faiss(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "faiss" or name.startswith("faiss."):
            raise ImportError("No module named 'faiss'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(vectors_module, "_faiss_module", None)
    monkeypatch.setattr(vectors_module, "_faiss_missing_said", False)
    monkeypatch.setattr(builtins, "__import__", no_faiss)
    exact = VectorSearch.build(matrix)
    with caplog.at_level("WARNING", logger=vectors_module.__name__):
        built = VectorSearch.build(matrix, ann_min=100)
        loaded = VectorSearch.load(tmp_path, matrix)
    assert not built.approximate and not loaded.approximate
    query = matrix[7]
    for search in (built, loaded):
        rows, cosines = search.top(query, 10)
        assert rows.tolist() == exact.top(query, 10)[0].tolist()
        assert np.allclose(cosines, exact.top(query, 10)[1])
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "pip install 'tool-selector[scale]'" in said[0], said
    with pytest.raises(ConfigurationError, match=r"tool-selector\[scale\]"):
        vectors_module._faiss()  # what a caller that must have faiss is told


def test_list_and_probe_counts(matrix: np.ndarray) -> None:
    assert default_lists(100_000) == 2530  # 8 * sqrt(rows)
    assert default_lists(20_000) == 1131
    assert default_lists(500) == 31  # no fewer than 16 training rows a list
    assert default_lists(10) == 1
    assert default_probes(2530, 100_000) == 102  # the lists that hold about 4,000 rows
    assert default_probes(1131, 20_000) == 227
    assert default_probes(31, 500) == 31  # every list of a small matrix
    assert VectorSearch.build(matrix, ann_min=100).params == {"nlist": 31, "nprobe": 31}
