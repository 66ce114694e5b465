"""The incremental BM25 index (tool_selector/search/keyword.py) scores exactly as bm25s does.

The reference is what the embedded backend does today: a fresh ``bm25s.BM25(k1=1.2, b=0.75)`` over
the live documents, ``get_tokens_ids`` (unknown tokens dropped) and ``get_scores_from_ids``; an empty
corpus or query scores zeros. Equality after random add/remove sequences is what would catch a wrong
idf, a wrong length norm, a stale N/df/avgdl after a removal, or a lost tail row after a merge.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import bm25s
import numpy as np
import pytest

from tool_selector.search import keyword
from tool_selector.search.keyword import KeywordIndex

Corpus = list[list[str]]


class Bm25sReference:
    """What embedded.py's _KeywordIndex returns for these documents (built once, queried many times)."""

    def __init__(self, corpus: Corpus, k1: float = 1.2, b: float = 0.75) -> None:
        self.size = len(corpus)
        self.index: bm25s.BM25 | None = None
        if any(corpus):
            self.index = bm25s.BM25(k1=k1, b=b)
            self.index.index(corpus, show_progress=False)

    def scores(self, query: list[str]) -> np.ndarray:
        known = self.index.get_tokens_ids(query) if self.index is not None and query else []
        if self.index is None or not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.index.get_scores_from_ids(known), dtype=np.float32)


def bm25s_scores(corpus: Corpus, query: list[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    return Bm25sReference(corpus, k1, b).scores(query)


def assert_matches(index: KeywordIndex, rows: list[list[str]], live: set[int], *queries: list[str]) -> None:
    """``index`` holds ``rows`` (row i = rows[i]); only ``live`` rows remain."""
    kept = sorted(live)
    dead = [i for i in range(len(rows)) if i not in live]
    reference = Bm25sReference([rows[i] for i in kept])
    for query in queries:
        got = index.scores(query)
        assert got.dtype == np.float32
        assert got.shape == (len(rows),) == (index.size,)
        assert not got[dead].any(), "a removed row scored"
        np.testing.assert_allclose(got[kept], reference.scores(query), rtol=1e-5, atol=0)


def random_doc(rng: random.Random, words: list[str], longest: int = 12) -> list[str]:
    # skewed word choice, so some words are in most documents (small idf) and some in few
    return [words[min(int(rng.expovariate(0.15)), len(words) - 1)] for _ in range(rng.randint(0, longest))]


@pytest.fixture
def small_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merge after a few entries, so that the tests go through the tail, merges and compactions."""
    monkeypatch.setattr(keyword, "_MIN_PENDING", 6)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("merges", ["small", "default"])
def test_equals_bm25s_after_random_adds_and_removes(
    seed: int, merges: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if merges == "small":
        monkeypatch.setattr(keyword, "_MIN_PENDING", 6)
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    rows = [random_doc(rng, words) for _ in range(rng.randint(0, 30))]
    index = KeywordIndex.build(rows) if seed % 2 else KeywordIndex()
    if seed % 2 == 0:
        index.add(rows)
    live = set(range(len(rows)))
    for _step in range(12):
        if rng.random() < 0.5 and live:
            gone = rng.sample(sorted(live), k=rng.randint(1, min(4, len(live))))
            index.remove(gone)
            live -= set(gone)
        else:
            new = [random_doc(rng, words) for _ in range(rng.randint(1, 5))]
            index.add(new)
            live |= set(range(len(rows), len(rows) + len(new)))
            rows += new
        assert index.live_count == len(live)
        queries = [[rng.choice([*words, "unknown"]) for _ in range(rng.randint(1, 6))] for _ in range(3)]
        assert_matches(index, rows, live, *queries)


def test_bit_for_bit_equal_on_a_larger_corpus(small_merges: None) -> None:
    """Same operations in the same order as bm25s: not merely close (numpy >= 2 promotion rules)."""
    rng = random.Random(7)
    words = [f"t{i}" for i in range(300)]
    rows = [random_doc(rng, words, longest=60) for _ in range(400)]
    index = KeywordIndex.build(rows[:300])
    index.add(rows[300:])
    index.remove(range(0, 400, 7))
    live = [i for i in range(400) if i % 7]
    reference = Bm25sReference([rows[i] for i in live])
    for _ in range(20):
        query = [rng.choice(words) for _ in range(rng.randint(1, 10))]
        assert np.array_equal(index.scores(query)[live], reference.scores(query))


def test_hand_computed_scores() -> None:
    """The lucene variant bm25s uses, worked by hand: idf = ln(1 + (N - df + .5)/(df + .5)),
    weight = idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)), no (k1 + 1) factor."""
    rows = [["apple", "pie"], ["apple", "apple", "tart", "cake"], ["bread"]]
    k1, b, avgdl, n = 1.2, 0.75, 7 / 3, 3
    got = KeywordIndex.build(rows).scores(["apple"])
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    expected = [idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) for tf, dl in ((1, 2), (2, 4), (0, 1))]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # after removing the bread row, N, df and avgdl change
    index = KeywordIndex.build(rows)
    index.remove([2])
    idf, avgdl = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5)), 3.0
    expected = [idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) for tf, dl in ((1, 2), (2, 4))] + [0.0]
    np.testing.assert_allclose(index.scores(["apple"]), expected, rtol=1e-6)


def test_other_k1_and_b() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(20)]
    rows = [random_doc(rng, words) for _ in range(50)]
    index, reference = KeywordIndex.build(rows, k1=1.8, b=0.3), Bm25sReference(rows, k1=1.8, b=0.3)
    for word in words[:5]:
        np.testing.assert_allclose(index.scores([word, "w1"]), reference.scores([word, "w1"]), rtol=1e-5)


def test_repeated_query_tokens_count_again() -> None:
    rows = [["a", "b"], ["a", "c", "c"], ["b", "d"], ["e"]]
    index = KeywordIndex.build(rows)
    once, twice = index.scores(["a", "c"]), index.scores(["a", "c", "c", "a", "a"])
    np.testing.assert_allclose(twice, bm25s_scores(rows, ["a", "c", "c", "a", "a"]), rtol=1e-5)
    assert twice[1] > once[1]


def test_unknown_tokens_are_dropped() -> None:
    rows = [["a", "b"], ["b", "c"], ["c"]]
    index = KeywordIndex.build(rows)
    np.testing.assert_array_equal(index.scores(["zzz", "b", "yyy"]), index.scores(["b"]))
    np.testing.assert_array_equal(index.scores(["zzz", "yyy"]), np.zeros(3, dtype=np.float32))
    np.testing.assert_array_equal(index.scores([]), np.zeros(3, dtype=np.float32))


def test_a_term_left_only_in_removed_rows_is_unknown() -> None:
    rows = [["a", "b"], ["b", "c"], ["c"]]
    index = KeywordIndex.build(rows)
    index.remove([0])
    np.testing.assert_array_equal(index.scores(["a"]), np.zeros(3, dtype=np.float32))
    assert_matches(index, rows, {1, 2}, ["a", "b", "c"])


def test_empty_documents_count_in_n_and_the_mean_length() -> None:
    rows = [[], ["a", "b"], [], ["b", "b", "c"], []]
    index = KeywordIndex.build(rows)
    assert_matches(index, rows, set(range(5)), ["a"], ["b"], ["b", "c", "a"])
    index.remove([3])
    assert_matches(index, rows, {0, 1, 2, 4}, ["b", "a"])


@pytest.mark.parametrize("rows", [[], [[]], [[], [], []]])
def test_empty_corpus_scores_zeros(rows: Corpus) -> None:
    index = KeywordIndex.build(rows)
    assert index.size == len(rows)
    got = index.scores(["a", "b"])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.zeros(len(rows), dtype=np.float32))


def test_all_removed_scores_zeros_and_the_index_can_grow_again(small_merges: None) -> None:
    rows = [["a", "b"], ["b", "c"], ["c", "a", "a"]]
    index = KeywordIndex.build(rows)
    index.remove([0, 1, 2])
    assert index.live_count == 0
    assert index.size == 3
    np.testing.assert_array_equal(index.scores(["a", "b", "c"]), np.zeros(3, dtype=np.float32))
    more = [["a", "d"], ["d"], ["a", "e", "e"]]
    index.add(more)
    assert index.size == 6
    assert_matches(index, rows + more, {3, 4, 5}, ["a", "d", "e"])


def test_remove_is_idempotent_and_checks_the_range() -> None:
    rows = [["a"], ["a", "b"], ["b"]]
    index = KeywordIndex.build(rows)
    index.remove([1, 1])
    index.remove([1])
    index.remove([])
    assert index.live_count == 2
    assert_matches(index, rows, {0, 2}, ["a", "b"], ["a"], ["b", "b"])
    with pytest.raises(IndexError):
        index.remove([3])
    with pytest.raises(IndexError):
        index.remove([-1])
    assert index.live_count == 2


def test_add_in_many_small_batches_equals_one_build(small_merges: None) -> None:
    rng = random.Random(11)
    words = [f"w{i}" for i in range(30)]
    rows = [random_doc(rng, words) for _ in range(120)]
    built, grown = KeywordIndex.build(rows), KeywordIndex()
    for i in range(0, 120, 3):
        grown.add(rows[i : i + 3])
    assert grown.size == built.size == 120
    for word in words:
        np.testing.assert_array_equal(grown.scores([word, "w0"]), built.scores([word, "w0"]))


def test_save_and_load_round_trip(tmp_path: Path, small_merges: None) -> None:
    rng = random.Random(5)
    words = [f"w{i}" for i in range(25)] + ["é", "日本", "", "a b", "\x00"]
    rows = [random_doc(rng, words) for _ in range(60)]
    index = KeywordIndex.build(rows[:40], k1=1.4, b=0.6)
    index.add(rows[40:])  # a tail not merged yet ...
    index.remove([3, 17, 45])  # ... and removed rows not compacted yet
    path = tmp_path / "keyword.npz"
    index.save(path)
    index.save(path)  # replaces the file
    assert [p.name for p in tmp_path.iterdir()] == ["keyword.npz"]
    loaded = KeywordIndex.load(path)
    assert (loaded.size, loaded.live_count, loaded.k1, loaded.b) == (60, 57, 1.4, 0.6)
    for query in ([w] for w in words):
        np.testing.assert_array_equal(loaded.scores(query), index.scores(query))
    more = [random_doc(rng, words) for _ in range(10)]
    for either in (index, loaded):
        either.add(more)
        either.remove([0, 59])
    for query in ([w, "w1"] for w in words):
        np.testing.assert_array_equal(loaded.scores(query), index.scores(query))


def test_save_and_load_an_empty_index(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "keyword.npz"
    KeywordIndex().save(path)
    loaded = KeywordIndex.load(path)
    assert loaded.size == 0
    loaded.add([["a"], ["a", "b"]])
    np.testing.assert_allclose(loaded.scores(["a", "b"]), bm25s_scores([["a"], ["a", "b"]], ["a", "b"]))


def test_load_refuses_what_is_not_an_index(tmp_path: Path) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, something=np.arange(3))
    with pytest.raises(ValueError, match="not a keyword index"):
        KeywordIndex.load(other)
    path = tmp_path / "keyword.npz"
    KeywordIndex.build([["a", "b"], ["c"]]).save(path)
    with np.load(path) as data:
        arrays = dict(data)
    arrays["terms"] = arrays["terms"][:1]
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="do not agree"):
        KeywordIndex.load(path)
