"""Writes to the embedded index cost what they change: a delta on top of the current generation, read by
other processes without reloading the rest, folded into a full generation once deltas pile up."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.backends import CATALOG, EMBEDDER, SERVERS, query, server_query
from tests.support.backends import doc as _doc
from tests.support.index_damage import current_generation
from tool_selector.core.errors import IndexDamagedError
from tool_selector.core.models import ToolDocument
from tool_selector.search.embedded import backend as embedded
from tool_selector.search.embedded.backend import EmbeddedBackend
from tool_selector.search.keyword import KeywordIndex


def _backend(directory: Path) -> EmbeddedBackend:
    return EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)


def _pointer(directory: Path) -> str:
    return (directory / "CURRENT").read_text().strip()


def _hits(
    backend: EmbeddedBackend, text: str, **kwargs: object
) -> list[tuple[str, float, float, float | None]]:
    return [
        (h.id, round(h.score, 6), round(h.keyword_score, 6), h.vector_score)
        for h in backend.hybrid_search(query(text, **kwargs))
    ]


@pytest.fixture
def index(tmp_path: Path) -> Path:
    writer = _backend(tmp_path / "index")
    writer.upsert(CATALOG)
    writer.upsert(SERVERS)
    writer.compact()
    return tmp_path / "index"


def test_a_write_on_a_generation_is_a_small_delta_that_a_new_reader_loads(index: Path) -> None:
    base = current_generation(index)
    vectors_before = (base / "vectors.npy").stat().st_mtime_ns
    writer = _backend(index)
    writer.upsert([_doc("Notes", "delete_page", "Delete a page from a notebook")])
    assert _pointer(index) == f"{base.name}+1"
    delta = base / "delta-000001"
    assert json.loads((delta / "meta.json").read_text())["count"] == 1
    assert np.load(delta / "vectors.npy").shape == (1, EMBEDDER.dim)
    assert (base / "vectors.npy").stat().st_mtime_ns == vectors_before  # the generation is not rewritten
    reader = _backend(index)
    assert reader.ids() == writer.ids()
    assert reader.count() == len(CATALOG) + 1
    assert _hits(reader, "delete a notebook page", alpha=1.0) == _hits(
        writer, "delete a notebook page", alpha=1.0
    )


def test_a_reader_applies_only_the_new_deltas_replacements_and_deletions_included(index: Path) -> None:
    writer, reader = _backend(index), _backend(index)
    kept = reader._state.tools.vectors
    replaced = _doc("Weather", "get_forecast", "Tide tables and sea swell for a harbour", text_hash="v2")
    writer.upsert([replaced])
    writer.delete(["Clock::current_time"])
    writer.delete(["Clock"], target="servers")
    assert reader.refresh() is True
    assert reader._state.tools.vectors is kept  # the base rows were not read again
    assert reader.ids()["Weather::get_forecast"] == "v2"
    assert "Clock::current_time" not in reader.ids()
    assert reader.count() == len(CATALOG) - 1
    assert reader.count(target="servers") == len(SERVERS) - 1
    # the deleted tool is never found, not even by the query that matches it best
    assert "Clock::current_time" not in [
        h[0] for h in _hits(reader, "current time in a time zone", alpha=1.0)
    ]
    assert "Clock::current_time" not in [
        h[0] for h in _hits(reader, "current time in a time zone", alpha=0.0)
    ]
    assert "Clock" not in [h.id for h in reader.hybrid_search(server_query("current time", alpha=1.0))]
    # the replaced tool is found once, for its new text
    tide = [h[0] for h in _hits(reader, "sea swell tide tables harbour", alpha=1.0)]
    assert tide.count("Weather::get_forecast") == 1 and tide[0] == "Weather::get_forecast"
    assert [d.id for d in reader.documents()] == [d.id for d in writer.documents()]
    assert len(reader.keyword_scores("forecast", {"description": 1.0})) == reader.count()


def test_vector_ranking_over_deltas_equals_the_compacted_index(index: Path) -> None:
    writer = _backend(index)
    writer.upsert([_doc("Weather", "get_forecast", "Tide tables and sea swell", text_hash="v2")])
    writer.upsert([_doc("Notes", "delete_page", "Delete a page from a notebook")])
    writer.delete(["Code Host::close_issue"])
    questions = ["close an issue", "sea swell", "create a page", "weather forecast"]
    with_deltas = {q: _hits(writer, q, alpha=1.0) for q in questions}
    writer.compact()
    assert "+" not in _pointer(index)
    assert {q: _hits(_backend(index), q, alpha=1.0) for q in questions} == with_deltas


def test_deltas_are_compacted_into_a_full_generation_once_they_pile_up(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "COMPACT_ROWS", 3)
    monkeypatch.setattr(embedded, "COMPACT_SHARE", 0.0)
    first = current_generation(index).name
    writer, reader = _backend(index), _backend(index)
    writer.upsert([_doc("Notes", f"page_{n}", f"Page number {n}") for n in range(2)])
    assert _pointer(index) == f"{first}+1"
    writer.upsert([_doc("Notes", "page_2", "Page number 2")])  # 3 appended rows: time to compact
    assert "+" not in _pointer(index) and _pointer(index) != first
    assert not (index / first).exists()  # the old generation and its deltas are gone
    assert len(writer._state.tools.docs) == len(CATALOG) + 3  # no dead rows left
    assert reader.refresh() is True
    assert reader.ids() == writer.ids()


def test_a_damaged_delta_is_named_with_the_repair(index: Path) -> None:
    writer, reader = _backend(index), _backend(index)
    writer.upsert([_doc("Notes", "delete_page", "Delete a page")])
    meta = current_generation(index) / "delta-000001" / "meta.json"
    meta.write_bytes(b"\x00{not json")
    assert reader.refresh() is True
    with pytest.raises(IndexDamagedError) as info:
        reader.count()
    assert str(meta) in info.value.message
    assert info.value.hint.startswith("Run `tool-selector index rebuild`")


def test_a_current_file_counting_a_delta_that_is_not_there_is_damage(index: Path) -> None:
    (index / "CURRENT").write_text(f"{current_generation(index).name}+3")
    with pytest.raises(IndexDamagedError, match="delta-000001 is missing"):
        _backend(index).count()
    (index / "CURRENT").write_text(f"{current_generation(index).name}+x")
    with pytest.raises(IndexDamagedError, match="delta count is not a number"):
        _backend(index).count()


def _many(count: int) -> list[ToolDocument]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return [
        _doc(
            f"Server {n % 37}", f"tool_{n}", f"{words[n % 10]} {words[(n // 10) % 10]} {words[(n * 7) % 10]}"
        )
        for n in range(count)
    ]


def test_a_large_part_is_searched_approximately_and_its_deltas_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "COMPACT_ROWS", 10_000)
    directory = tmp_path / "index"
    writer = EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim, ann_min=300)
    exact = EmbeddedBackend(tmp_path / "exact", model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)
    docs = _many(600)
    writer.upsert(docs)
    exact.upsert(docs)
    assert writer.hybrid_search(query("alpha bravo", alpha=1.0))  # builds the approximate search
    assert writer._state.tools.search is not None and writer._state.tools.search.approximate
    assert (current_generation(directory) / "tools.ivf").is_file()  # kept for other readers
    agree = 0
    for text in ["alpha bravo", "charlie delta echo", "golf hotel", "india juliet alpha", "foxtrot"]:
        got = {h.id: h.vector_score for h in writer.hybrid_search(query(text, alpha=1.0, limit=10))}
        want = {h.id: h.vector_score for h in exact.hybrid_search(query(text, alpha=1.0, limit=10))}
        agree += len(got.keys() & want.keys())
        for doc_id in got.keys() & want.keys():
            assert got[doc_id] == pytest.approx(want[doc_id], abs=1e-6)  # cosines are exact
    assert agree >= 45  # of 50: the approximate search finds what the exact one finds
    best = writer.hybrid_search(query("alpha bravo", alpha=1.0))[0].id
    writer.delete([best])
    fresh = _doc("Server 99", "new_tool", "kilo lima mike")
    writer.upsert([fresh])
    reader = EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim, ann_min=300)
    for backend in (writer, reader):
        assert best not in [h.id for h in backend.hybrid_search(query("alpha bravo", alpha=1.0, limit=50))]
        assert backend.hybrid_search(query("kilo lima mike", alpha=1.0))[0].id == fresh.id
    assert reader._state.tools.search is not None  # loaded from the file, not trained again


def test_a_large_generation_keeps_its_keyword_index_for_the_next_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "PERSIST_MIN", 100)
    directory = tmp_path / "index"
    writer = _backend(directory)
    writer.upsert(_many(300))
    before = _hits(writer, "charlie delta", alpha=0.0)
    assert list(current_generation(directory).glob("keyword-tools-*.npz"))
    writer.upsert([_doc("Server 1", "tool_1", "charlie charlie delta", text_hash="v2")])  # a delta
    reader = _backend(directory)
    loaded: list[Path] = []
    real_load = KeywordIndex.load

    def load(path: Path) -> KeywordIndex:
        loaded.append(path)
        return real_load(path)

    monkeypatch.setattr(KeywordIndex, "load", staticmethod(load))
    after = _hits(reader, "charlie delta", alpha=0.0)
    assert loaded  # read from the file, with the delta applied on top
    assert after == _hits(writer, "charlie delta", alpha=0.0)
    assert after != before and after[0][0] == "Server 1::tool_1"
