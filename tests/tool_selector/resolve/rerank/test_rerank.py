"""The learned ranker: its features, its exported trees, its file, and the resolver reordering with it."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from services.resolve.snapshot import IndexSnapshot
from services.root.container import Container
from tool_selector.core.errors import CalibrationError
from tool_selector.core.models import SearchHit, ToolDocument, with_score
from tool_selector.resolve.confidence import Tree, TreeEnsemble
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.judge import capability_judge
from tool_selector.resolve.rerank.features import RANK_FEATURES, Candidates, rank_features
from tool_selector.resolve.rerank.model import RankerModel, load_ranker
from tool_selector.resolve.resolver import Resolver, rerank
from tool_selector.search.text import tokenize


def _doc(server: str, name: str, description: str, **extra: str | list[str]) -> ToolDocument:
    fields: dict[str, str | list[str]] = {
        "name": name.replace("_", " "),
        "description": description,
        "server_name": server,
        "server_description": f"{server} server",
        "parameter_names": [],
        "tags": [],
        **extra,
    }
    return ToolDocument(id=f"{server}::{name}", server=server, name=name, fields=fields, text_hash="h")


DOCS = [
    _doc("Weather", "get_forecast", "Forecast for a city", action_entities=["get forecast"]),
    _doc("Weather", "get_alerts", "Severe storm warnings"),
    _doc("Mail", "send_email", "Send a message to a contact", use_cases=["email my boss"]),
]
TERMS = CatalogTerms.from_documents(DOCS)


def _hit(tool_id: str, score: float, keyword: float = 0.0, cosine: float = 0.1) -> SearchHit:
    server, name = tool_id.split("::")
    return SearchHit(
        id=tool_id, server=server, name=name, score=score, keyword_score=keyword, vector_score=cosine
    )


def _row(rows: np.ndarray, i: int) -> dict[str, float]:
    return dict(zip(RANK_FEATURES, rows[i].tolist(), strict=True))


def test_each_field_a_query_word_is_found_in_counts_for_that_candidate_only() -> None:
    hits = [
        _hit("Weather::get_alerts", 0.9),
        _hit("Weather::get_forecast", 0.8),
        _hit("Mail::send_email", 0.1),
    ]
    rows = rank_features(
        Candidates(words=tokenize("storm warnings"), hits=hits, power_scores={"Weather": 1.0, "Mail": 0.1}),
        TERMS,
    )
    alerts, forecast, mail = _row(rows, 0), _row(rows, 1), _row(rows, 2)
    assert alerts["cover_description"] == pytest.approx(1.0)  # both words are in its description
    assert forecast["cover_description"] == 0.0 and mail["cover_description"] == 0.0
    assert alerts["cover_tool"] == alerts["cover_description"]
    assert alerts["cover_power"] == forecast["cover_power"] > 0  # one power, the same words
    assert mail["power_rank"] > alerts["power_rank"] == 0.0
    assert alerts["fused_rank"] == 0.0 and mail["fused_gap"] == pytest.approx(0.8)


def test_a_tool_name_said_in_order_and_an_enrichment_field_are_read() -> None:
    hits = [_hit("Mail::send_email", 0.5), _hit("Weather::get_forecast", 0.6)]
    rows = rank_features(
        Candidates(words=tokenize("please send email to my boss"), hits=hits, power_scores={"Mail": 0.5}),
        TERMS,
    )
    mail, weather = _row(rows, 0), _row(rows, 1)
    assert mail["name_said"] == 1.0 and mail["name_bigram"] == 1.0
    assert mail["cover_use_cases"] > 0 and weather["cover_use_cases"] == 0.0
    assert weather["name_said"] == 0.0 and weather["power_rank"] > 0  # Weather is not a ranked power


def test_the_steps_and_the_server_documents_of_a_request_are_read_per_candidate() -> None:
    forecast, mail = _hit("Weather::get_forecast", 0.7), _hit("Mail::send_email", 0.4)
    rows = rank_features(
        Candidates(
            words=tokenize("get the forecast and then email it to my boss"),
            hits=[forecast, mail],
            power_scores={"Weather": 0.7, "Mail": 0.4},
            part_hits=[[forecast], [_hit("Mail::send_email", 1.0, cosine=0.6)]],
            server_hits=[_hit("Mail::Mail", 0.9)],
            parts=2,
        ),
        TERMS,
    )
    assert _row(rows, 1)["part_fused"] == 1.0 and _row(rows, 1)["part_cosine"] == pytest.approx(0.6)
    assert _row(rows, 1)["part_rank"] == 0.0 == _row(rows, 0)["part_rank"]  # each is first of its step
    assert _row(rows, 1)["server_score"] == 0.9 and _row(rows, 0)["server_score"] == 0.0
    assert _row(rows, 0)["parts"] == 2.0


def test_batch_scoring_walks_every_tree_like_one_row_at_a_time() -> None:
    tree = Tree(
        feature=[0, -1, 1, -1, -1],
        threshold=[0.5, 0, 0.2, 0, 0],
        left=[1, 1, 3, 3, 4],
        right=[2, 1, 4, 3, 4],
        value=[0, -1.0, 0, 0.5, 2.0],
    )
    ensemble = TreeEnsemble(baseline=0.25, trees=[tree, tree])
    rows = np.array([[0.1, 0.0], [0.9, 0.1], [0.9, 0.3]])
    assert ensemble.raw_many(rows).tolist() == [ensemble.raw(r) for r in rows] == [-1.75, 1.25, 4.25]
    missing = np.array([[np.nan, 0.0], [0.9, np.nan]])  # not "x <= threshold": right, one row at a time too
    assert ensemble.raw_many(missing).tolist() == [ensemble.raw(r) for r in missing] == [1.25, 4.25]


def test_a_rescored_hit_is_the_hit_with_only_its_score_changed() -> None:
    hit = SearchHit(id="S::t", server="S", name="t", score=0.5, keyword_score=2.0, vector_score=0.25)
    rescored = with_score(hit, 0.75)
    assert rescored == replace(hit, score=0.75)
    assert asdict(rescored) == {**asdict(hit), "score": 0.75}
    assert hit.score == 0.5


def test_lightgbm_trees_exported_score_as_lightgbm_does() -> None:
    import lightgbm as lgb

    from eval.fitting.train_ranker import LEARNER, export

    rng = np.random.default_rng(0)
    rows = rng.random((400, len(RANK_FEATURES)))
    labels = (rows[:, 3] + 0.3 * rows[:, 7] > 0.9).astype(int)
    booster = lgb.train({**LEARNER, "min_data_in_leaf": 5}, lgb.Dataset(rows, labels, group=[20] * 20), 20)
    assert np.allclose(export(booster).raw_many(rows), booster.predict(rows), atol=1e-9)


def _ranker(feature: str, version: str = "test") -> RankerModel:
    """One tree: a candidate whose ``feature`` is above 0.5 scores 3, any other -3."""
    tree = Tree(
        feature=[0, -1, -1], threshold=[0.5, 0, 0], left=[1, 1, 2], right=[2, 1, 2], value=[0, -3.0, 3.0]
    )
    return RankerModel(
        version=version, features=[feature], candidates=5, ensemble=TreeEnsemble(baseline=0, trees=[tree])
    )


def test_reranked_candidates_lead_and_the_rest_keep_their_order_below_them() -> None:
    hits = [_hit(f"S::t{i}", 1.0 - i / 10) for i in range(4)]
    out = rerank(hits, np.array([-1.0, 2.0]))
    assert [h.id for h in out] == ["S::t1", "S::t0", "S::t2", "S::t3"]
    assert out[0].score > out[1].score > out[2].score > out[3].score > 0


def test_the_resolver_reorders_only_the_first_candidates_with_the_ranker(demo_container: Container) -> None:
    terms = IndexSnapshot(demo_container).terms
    query = "what will the weather be like tomorrow in Oslo"
    kwargs = {
        "alpha": 0.5,
        "field_boosts": demo_container.settings.search.field_boosts,
        "capability": capability_judge(),
    }
    parts = (demo_container.backend, demo_container.embedder, demo_container.calibration)
    fused = Resolver(*parts, **kwargs).resolve(query, terms, tools=10)
    leaf = Tree(feature=[-1], threshold=[0.0], left=[0], right=[0], value=[0.0])  # every candidate ties
    flat = RankerModel(
        version="flat", features=["fused"], candidates=5, ensemble=TreeEnsemble(baseline=0, trees=[leaf])
    )
    ranked = Resolver(*parts, ranker=flat, **kwargs).resolve(query, terms, tools=10)
    assert [t.id for t in ranked.tools[:5]] == sorted(t.id for t in fused.tools[:5])  # ties: by id
    assert [t.id for t in ranked.tools[5:]] == [t.id for t in fused.tools[5:]]  # the rest keep their order
    assert [p.name for p in ranked.powers] == [p.name for p in fused.powers]  # powers: from the fused hits


def test_a_ranker_file_of_another_format_or_reading_unknown_features_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps({"format": "something-else/9"}))
    with pytest.raises(CalibrationError) as info:
        load_ranker(path)
    assert "tool-selector lab train-ranker" in (info.value.hint or "")
    path.write_text(
        _ranker("name_said").model_copy(update={"features": ["no_such_feature"]}).model_dump_json()
    )
    with pytest.raises(CalibrationError, match="no_such_feature"):
        load_ranker(path)


def test_the_packaged_ranker_reads_this_version_and_says_how_it_was_fitted() -> None:
    model = load_ranker()
    assert set(model.features) <= set(RANK_FEATURES)
    assert model.provenance["learner"]["grouped_by"] == "server"
    held = model.figures["held_back_folds"]
    assert {"all", "dataset msc_bench_dev", "dataset livemcpbench", "dataset metatool"} <= set(held)
    assert held["all"]["ranker_tool_r1"] >= held["all"]["fused_tool_r1"]
