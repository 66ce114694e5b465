"""The embedded search backend (a folder on disk) and the fusion functions it shares with Weaviate.

What every backend must do is in test_backend_contract.py; here is what only the embedded one does
(persistence in a folder, its keyword index).

Vectors come from the HashingEmbedder: what is tested here is fusion, persistence and keyword
scoring, not the model's semantics.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.backends import CATALOG, EMBEDDER, SERVERS, server_query
from tests.support.backends import doc as _doc
from tests.support.index_damage import DAMAGES, current_generation, damage
from tool_selector.config.settings import DEFAULT_FIELD_BOOSTS
from tool_selector.core.errors import IndexDamagedError, IndexMissingError
from tool_selector.search.backend import SearchQuery, fuse_ranked, fuse_relative
from tool_selector.search.embedded.backend import EmbeddedBackend


def _backend(directory: Path) -> EmbeddedBackend:
    return EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)


def _query(text: str, **kwargs: object) -> SearchQuery:
    kwargs.setdefault("field_boosts", DEFAULT_FIELD_BOOSTS)
    return SearchQuery(text=text, vector=EMBEDDER.embed_query(text), **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def backend(tmp_path: Path) -> EmbeddedBackend:
    opened = _backend(tmp_path / "index")
    opened.upsert(CATALOG)
    return opened


# --------------------------------------------------------------------------- fusion math


KEYWORD = {0: 2.0, 1: 4.0, 2: 3.0}
VECTOR = {0: 0.9, 1: 0.5, 3: 0.7}


def test_relative_fusion_min_max_scales_each_list_then_weights_by_alpha() -> None:
    fused = fuse_relative(KEYWORD, VECTOR, 0.75)
    # keyword scaled: 0 -> 0, 1 -> 1, 2 -> 0.5; vector scaled: 0 -> 1, 1 -> 0, 3 -> 0.5
    assert fused == pytest.approx({0: 0.75, 1: 0.25, 2: 0.125, 3: 0.375})


def test_relative_fusion_at_alpha_0_follows_the_keyword_order() -> None:
    fused = fuse_relative(KEYWORD, VECTOR, 0.0)
    assert sorted(fused, key=lambda k: -fused[k])[:3] == [1, 2, 0]
    assert fused == pytest.approx({0: 0.0, 1: 1.0, 2: 0.5, 3: 0.0})


def test_relative_fusion_at_alpha_1_follows_the_vector_order() -> None:
    fused = fuse_relative(KEYWORD, VECTOR, 1.0)
    assert sorted(fused, key=lambda k: -fused[k])[:3] == [0, 3, 1]
    assert fused == pytest.approx({0: 1.0, 1: 0.0, 2: 0.0, 3: 0.5})


def test_relative_fusion_gives_a_single_candidate_a_score_of_1() -> None:
    assert fuse_relative({5: 0.3}, {5: 0.1}, 0.6) == pytest.approx({5: 1.0})
    assert fuse_relative({}, {5: 0.1}, 0.6) == pytest.approx({5: 0.6})
    assert fuse_relative({}, {}, 0.5) == {}


def test_relative_fusion_gives_equal_scores_in_one_list_full_marks() -> None:
    assert fuse_relative({1: 2.0, 2: 2.0}, {}, 0.25) == pytest.approx({1: 0.75, 2: 0.75})


def test_ranked_fusion_adds_alpha_weighted_reciprocal_ranks() -> None:
    fused = fuse_ranked({7: 3.0, 8: 2.0}, {8: 0.9, 7: 0.1, 9: 0.05}, 0.75)
    assert fused == pytest.approx(
        {
            7: 0.25 / 60 + 0.75 / 61,
            8: 0.25 / 61 + 0.75 / 60,
            9: 0.75 / 62,
        }
    )
    assert fuse_ranked({7: 3.0}, {}, 0.5, k=1) == pytest.approx({7: 0.5})


# --------------------------------------------------------------------------- writes and persistence


def test_an_index_survives_reopening_the_folder(tmp_path: Path, backend: EmbeddedBackend) -> None:
    query = _query("open a new issue", limit=6)
    before = backend.hybrid_search(query)
    reopened = _backend(tmp_path / "index")
    assert reopened.ids() == backend.ids()
    assert reopened.count() == len(CATALOG)
    after = reopened.hybrid_search(query)
    assert [(h.id, h.score, h.keyword_score, h.vector_score) for h in after] == [
        (h.id, h.score, h.keyword_score, h.vector_score) for h in before
    ]
    assert after[0].id == "Code Host::create_issue"


def test_a_stray_temporary_generation_from_a_crashed_write_does_not_break_loading(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    directory = tmp_path / "index"
    stray = directory / "gen-deadbeef0000.tmp"
    stray.mkdir()
    (stray / "meta.json").write_text('{"format_version": 1, "model_id": "half-writ')  # cut off mid-write
    (stray / "docs.jsonl").write_text('{"id": "Half::writ')
    (directory / "CURRENT.gen-deadbeef0000.tmp").write_text("gen-deadbeef0000")
    reopened = _backend(directory)
    assert reopened.ids() == backend.ids()
    assert reopened.hybrid_search(_query("weather forecast"))[0].id == "Weather::get_forecast"
    reopened.upsert([_doc("Notes", "delete_page", "Delete a page")])
    assert not stray.exists()  # the next write clears it away
    assert [p.name for p in directory.iterdir() if p.name.startswith("gen-")] == [
        current_generation(directory).name
    ]


def test_a_missing_folder_opens_as_an_empty_index(tmp_path: Path) -> None:
    opened = _backend(tmp_path / "never-written")
    assert opened.count() == 0
    assert opened.ids() == {}
    assert not (tmp_path / "never-written").exists()


@pytest.mark.parametrize(("model_id", "dim"), [("another-model", 64), ("hashing-bow-v1", 32)])
def test_an_index_built_for_another_model_or_dimension_is_refused_until_dropped(
    tmp_path: Path, backend: EmbeddedBackend, model_id: str, dim: int
) -> None:
    opened = EmbeddedBackend(tmp_path / "index", model_id=model_id, dim=dim)
    with pytest.raises(IndexMissingError) as info:
        opened.count()
    assert "hashing-bow-v1 (64 dimensions)" in info.value.message
    assert f"{model_id} ({dim})" in info.value.message
    assert "tool-selector index rebuild" in info.value.hint
    opened.drop()  # what `index rebuild` does first: it never reads the old index
    assert opened.count() == 0


# --------------------------------------------------------------------------- server documents on disk


def _generation(directory: Path) -> Path:
    return current_generation(directory)


def test_tool_and_server_documents_are_compacted_into_one_generation_and_survive_reopening(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    backend.upsert(SERVERS)
    backend.compact()  # one full generation: both kinds in its files
    generation = _generation(tmp_path / "index")
    meta = json.loads((generation / "meta.json").read_text())
    assert (meta["count"], meta["server_count"]) == (len(CATALOG), len(SERVERS))
    assert {"docs.jsonl", "vectors.npy", "servers.jsonl", "server_vectors.npy"} <= {
        p.name for p in generation.iterdir()
    }
    reopened = _backend(tmp_path / "index")
    assert reopened.ids(target="servers") == {d.id: d.text_hash for d in SERVERS}
    assert reopened.count() == len(CATALOG)
    assert [h.id for h in reopened.hybrid_search(server_query("meteorological", alpha=0.0))] == ["Weather"]


def test_a_writer_in_another_process_brings_new_server_documents_to_a_reader_on_refresh(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    reader = _backend(tmp_path / "index")
    assert reader.count(target="servers") == 0
    backend.upsert(SERVERS)
    assert reader.refresh() is True
    assert reader.count(target="servers") == len(SERVERS)


def test_an_index_folder_of_the_version_before_server_documents_still_serves_tools(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    """That version wrote docs.jsonl (without ``kind``) and vectors.npy, and no server count."""
    backend.upsert(SERVERS)
    backend.compact()  # one full generation: both kinds in its files
    generation = _generation(tmp_path / "index")
    (generation / "servers.jsonl").unlink()
    (generation / "server_vectors.npy").unlink()
    meta = json.loads((generation / "meta.json").read_text())
    del meta["server_count"], meta["sha256"]  # nor checksums, which came later
    (generation / "meta.json").write_text(json.dumps(meta))
    lines = [json.loads(line) for line in (generation / "docs.jsonl").read_text().splitlines()]
    (generation / "docs.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in d.items() if k != "kind"}) + "\n" for d in lines)
    )

    old = _backend(tmp_path / "index")
    assert old.count() == len(CATALOG)
    assert old.hybrid_search(_query("weather forecast"))[0].id == "Weather::get_forecast"
    assert old.count(target="servers") == 0
    assert old.hybrid_search(server_query("weather forecast")) == []  # no server documents yet: none found
    old.upsert(SERVERS)  # what the next index build or sync does
    assert _backend(tmp_path / "index").count(target="servers") == len(SERVERS)


def test_a_cut_off_server_document_file_is_named_with_the_repair(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    backend.upsert(SERVERS)
    backend.compact()  # one full generation: both kinds in its files
    servers = _generation(tmp_path / "index") / "servers.jsonl"
    servers.write_text("".join(servers.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(IndexDamagedError) as info:
        _backend(tmp_path / "index").count()
    assert f"{servers} holds 3 documents where meta.json says 4" in info.value.message
    assert info.value.hint.startswith("Run `tool-selector index rebuild`")


def test_drop_clears_the_server_documents_on_disk_too(tmp_path: Path, backend: EmbeddedBackend) -> None:
    backend.upsert(SERVERS)
    backend.drop()
    reopened = _backend(tmp_path / "index")
    assert (reopened.count(), reopened.count(target="servers")) == (0, 0)


def test_a_server_only_write_keeps_the_tools_keyword_index(backend: EmbeddedBackend) -> None:
    backend.warm(DEFAULT_FIELD_BOOSTS)
    tools_keyword = backend._state.tools.keyword
    assert tools_keyword is not None
    backend.upsert(SERVERS)
    assert backend._state.tools.keyword is tools_keyword  # not rebuilt for a change of servers only


# --------------------------------------------------------------------------- damaged files

PROBLEMS = {
    "truncated vectors.npy": "is cut off or corrupt (Failed to read all data",
    "truncated docs.jsonl": "is cut off or corrupt",
    "garbage meta.json": "is not valid JSON",
    "empty CURRENT": "is empty",
}


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_index_opens_and_every_read_names_the_file_and_the_repair(
    tmp_path: Path, backend: EmbeddedBackend, kind: str
) -> None:
    hit = damage(tmp_path / "index", kind)
    opened = _backend(tmp_path / "index")  # opening does not raise: `index rebuild` must get to drop
    reads = {
        "count": opened.count,
        "ids": opened.ids,
        "search": lambda: opened.hybrid_search(_query("weather forecast")),
        "upsert": lambda: opened.upsert(CATALOG[:1]),
        "delete": lambda: opened.delete([CATALOG[0].id]),
    }
    for read in reads.values():
        with pytest.raises(IndexDamagedError) as info:
            read()
        assert info.value.message.startswith(f"The search index is damaged: {hit} {PROBLEMS[kind]}")
        assert info.value.details["path"] == str(hit)
        assert info.value.hint.startswith("Run `tool-selector index rebuild`")


@pytest.mark.parametrize("kind", DAMAGES)
def test_dropping_a_damaged_index_repairs_it_without_reading_it(
    tmp_path: Path, backend: EmbeddedBackend, kind: str
) -> None:
    damage(tmp_path / "index", kind)
    opened = _backend(tmp_path / "index")
    opened.drop()
    assert opened.count() == 0
    opened.upsert(CATALOG)
    reopened = _backend(tmp_path / "index")
    assert reopened.hybrid_search(_query("weather forecast"))[0].id == "Weather::get_forecast"
    assert len([p for p in (tmp_path / "index").iterdir() if p.name.startswith("gen-")]) == 1


def test_documents_cut_off_at_a_line_end_are_caught_by_the_count_in_meta(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    generation = current_generation(tmp_path / "index")
    docs = generation / "docs.jsonl"
    docs.write_text("".join(docs.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(IndexDamagedError, match=r"holds 5 documents where meta\.json says 6"):
        _backend(tmp_path / "index").count()


def test_a_current_file_naming_a_missing_folder_is_damage(tmp_path: Path, backend: EmbeddedBackend) -> None:
    (tmp_path / "index" / "CURRENT").write_text("gen-000000000000")
    with pytest.raises(IndexDamagedError, match="names the folder gen-000000000000, which does not exist"):
        _backend(tmp_path / "index").ids()


def test_a_reader_reports_a_damaged_new_generation_and_then_picks_up_its_repair(
    tmp_path: Path, backend: EmbeddedBackend
) -> None:
    reader = _backend(tmp_path / "index")
    assert reader.count() == len(CATALOG)
    backend.upsert([_doc("Notes", "delete_page", "Delete a page")])  # another process writes...
    backend.compact()  # ...a new full generation...
    damage(tmp_path / "index", "garbage meta.json")  # ...which is then damaged
    assert reader.refresh() is True
    with pytest.raises(IndexDamagedError):
        reader.hybrid_search(_query("weather forecast"))
    backend.drop()
    backend.upsert(CATALOG)
    assert reader.refresh() is True
    assert reader.hybrid_search(_query("weather forecast"))[0].id == "Weather::get_forecast"


def test_keyword_scores_weigh_a_name_match_above_a_description_match(tmp_path: Path) -> None:
    """The ranking side is in the contract suite; here the raw boosted BM25 behind it."""
    opened = _backend(tmp_path / "index")
    opened.upsert(
        [
            _doc("Files", "archive", "Stores things for later"),
            _doc("Files", "store", "Put the archive somewhere else"),
            _doc("Files", "rename", "Give a file another name"),
        ]
    )
    scores = opened.keyword_scores("archive", {"name": 3.0, "description": 1.0})
    assert scores[2] == 0.0
    assert scores[0] > scores[1] > 0.0


def test_a_field_with_boost_zero_is_not_searched(backend: EmbeddedBackend) -> None:
    assert np.all(backend.keyword_scores("weather", {"name": 1.0, "description": 0.0}) == 0.0)
    assert backend.keyword_scores("weather", {"name": 0.0, "description": 1.0}).max() > 0.0


def test_a_query_of_stopwords_only_has_keyword_scores_of_zero(backend: EmbeddedBackend) -> None:
    scores = backend.keyword_scores("what is the", DEFAULT_FIELD_BOOSTS)
    assert scores.shape == (len(CATALOG),)
    assert np.all(scores == 0.0)
    hits = backend.hybrid_search(_query("what is the", field_boosts=DEFAULT_FIELD_BOOSTS))
    assert hits  # the vector side still answers
    assert all(h.keyword_score == 0.0 for h in hits)
    assert backend.hybrid_search(_query("what is the", alpha=0.0, field_boosts=DEFAULT_FIELD_BOOSTS)) == []


def test_a_query_without_field_boosts_gets_keyword_scores_of_zero(backend: EmbeddedBackend) -> None:
    """SearchQuery's default boosts are empty: no field is searched, so no keyword evidence."""
    query = SearchQuery(text="weather forecast", vector=EMBEDDER.embed_query("weather forecast"))
    assert query.field_boosts == {}
    hits = backend.hybrid_search(query)
    assert hits[0].id == "Weather::get_forecast"
    assert all(h.keyword_score == 0.0 for h in hits)


def test_hits_carry_the_raw_cosine_and_keyword_score_next_to_the_fused_score(
    backend: EmbeddedBackend,
) -> None:
    query = _query("list issues", field_boosts=DEFAULT_FIELD_BOOSTS, limit=3)
    hits = backend.hybrid_search(query)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].id == "Code Host::list_issues"
    assert hits[0].score == pytest.approx(1.0)  # relative fusion: the best hit of any query scores ~1
    by_id = {d.id: d for d in CATALOG}
    for hit in hits:
        assert hit.vector_score == pytest.approx(float(np.dot(by_id[hit.id].vector, query.vector)), abs=1e-6)
    keyword = backend.keyword_scores("list issues", DEFAULT_FIELD_BOOSTS)
    assert hits[0].keyword_score == pytest.approx(float(keyword[1]))
    assert hits[0].keyword_score == pytest.approx(float(keyword.max()))
