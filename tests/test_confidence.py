"""Absolute confidence: the logistic fit, the combination rule, the packaged calibration, the evidence."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from services.container import Container
from tool_selector.confidence import (
    FEATURES,
    Calibration,
    LogisticModel,
    evidence_of,
    fit_logistic,
    load_calibration,
)
from tool_selector.errors import CalibrationError
from tool_selector.models import MatchType, PowerCandidate, SearchHit

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = ROOT / "tool_selector" / "calibration" / "confidence-v1.json"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


# --------------------------------------------------------------------------- fitting


def _separable(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=200)
    y = (signal > 0).astype(float)
    noise = rng.normal(size=200)
    x = np.column_stack([signal * 2.0 + 5.0, -signal, noise])  # +, -, nothing
    return x, y


def test_a_logistic_fit_recovers_the_sign_of_each_feature() -> None:
    x, y = _separable()
    weights, bias, mean, scale = fit_logistic(x, y)
    assert weights[0] > 1.0
    assert weights[1] < -1.0
    assert abs(weights[2]) < min(abs(weights[0]), abs(weights[1])) / 3
    assert mean == pytest.approx(x.mean(axis=0))
    assert scale == pytest.approx(x.std(axis=0))
    model = LogisticModel(
        features=["a", "b", "c"],
        weights=weights.tolist(),
        bias=bias,
        mean=mean.tolist(),
        scale=scale.tolist(),
    )
    predicted = np.array([model.probability({"a": r[0], "b": r[1], "c": r[2]}) for r in x]) >= 0.5
    assert (predicted == y.astype(bool)).mean() > 0.95


def test_a_logistic_fit_is_deterministic() -> None:
    x, y = _separable()
    first = fit_logistic(x, y, l2=0.5)
    second = fit_logistic(x.copy(), y.copy(), l2=0.5)
    assert np.array_equal(first[0], second[0])
    assert first[1] == second[1]
    assert np.array_equal(first[2], second[2])
    assert np.array_equal(first[3], second[3])


def test_a_stronger_penalty_shrinks_the_weights() -> None:
    x, y = _separable()
    loose, _, _, _ = fit_logistic(x, y, l2=0.1)
    tight, _, _, _ = fit_logistic(x, y, l2=100.0)
    assert np.abs(tight).sum() < np.abs(loose).sum()


def test_sample_weights_move_the_bias() -> None:
    x, y = _separable()
    _, plain, _, _ = fit_logistic(x, y)
    _, heavy_negatives, _, _ = fit_logistic(x, y, sample_weight=np.where(y == 0, 5.0, 1.0))
    assert heavy_negatives < plain


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        (np.ones((4, 2)), np.array([1.0, 1.0, 1.0, 1.0]), "both positive and negative"),
        (np.ones(4), np.array([1.0, 0.0, 1.0, 0.0]), "2-D feature matrix"),
        (np.ones((3, 2)), np.array([1.0, 0.0]), "one label per row"),
    ],
)
def test_a_fit_on_unusable_data_is_refused(x: np.ndarray, y: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_logistic(x, y)


# --------------------------------------------------------------------------- combination rule


def _model(bias: float, weight: float = 1.0) -> LogisticModel:
    return LogisticModel(features=["top_cosine"], weights=[weight], bias=bias, mean=[0.0], scale=[1.0])


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def test_a_logistic_model_standardises_then_applies_the_sigmoid() -> None:
    model = LogisticModel(
        features=["top_cosine", "cosine_margin"],
        weights=[2.0, -1.0],
        bias=0.5,
        mean=[0.5, 0.1],
        scale=[0.25, 0.2],
    )
    z = 0.5 + 2.0 * (0.75 - 0.5) / 0.25 - 1.0 * (0.3 - 0.1) / 0.2
    assert model.probability({"top_cosine": 0.75, "cosine_margin": 0.3}) == pytest.approx(_sigmoid(z))
    assert model.probability({}) == pytest.approx(_sigmoid(0.5 - 2.0 * 2 + 0.5))  # missing evidence is 0


def test_a_likely_answerable_query_gets_at_least_the_floor() -> None:
    calibration = Calibration(
        version="t", answerable=_model(0.0), correct=_model(-5.0, weight=0.0), floor=0.3
    )
    evidence = {"top_cosine": 2.0}  # P(answerable) = 0.88, P(correct) = 0.0067
    assert _sigmoid(2.0) * _sigmoid(-5.0) < 0.3
    assert calibration.probability(evidence) == 0.3


def test_a_likely_unanswerable_query_stays_below_the_floor() -> None:
    calibration = Calibration(version="t", answerable=_model(0.0), correct=_model(5.0, weight=0.0), floor=0.3)
    assert calibration.probability({"top_cosine": -2.0}) == pytest.approx(_sigmoid(-2.0) * _sigmoid(5.0))
    # P(answerable) = 0.475 and P(correct) = 0.993: the joint 0.47 is capped just under the floor
    capped = calibration.probability({"top_cosine": -0.1})
    assert capped < 0.3
    assert capped == pytest.approx(0.299)


def test_a_sure_answer_gets_the_joint_probability() -> None:
    calibration = Calibration(version="t", answerable=_model(0.0), correct=_model(5.0, weight=0.0), floor=0.3)
    assert calibration.probability({"top_cosine": 5.0}) == pytest.approx(_sigmoid(5.0) * _sigmoid(5.0))


def test_exactly_even_odds_of_being_answerable_count_as_answerable() -> None:
    calibration = Calibration(
        version="t", answerable=_model(0.0), correct=_model(-9.0, weight=0.0), floor=0.3
    )
    assert calibration.probability({"top_cosine": 0.0}) == 0.3


# --------------------------------------------------------------------------- the packaged file


def test_the_packaged_calibration_loads_and_records_how_it_was_fitted() -> None:
    calibration = load_calibration()
    assert calibration.version == "confidence-v1"
    assert set(calibration.answerable.features) <= set(FEATURES)
    assert set(calibration.correct.features) <= set(FEATURES)
    assert 0.0 < calibration.floor < 1.0
    command = calibration.provenance["command"]
    assert command.startswith("tool-selector calibrate ")
    assert "--out tool_selector/calibration/confidence-v1.json" in command
    datasets = calibration.provenance["datasets"]
    assert datasets, "the provenance must name the datasets it was fitted on"
    for entry in datasets:
        assert entry["dataset"] in command
        assert SHA256.match(entry["catalog_sha256"])
        assert SHA256.match(entry["queries_sha256"])
    assert calibration == load_calibration(PACKAGED)


def test_the_packaged_calibration_was_fitted_on_the_benchmark_files_as_they_are() -> None:
    from eval.dataset import check_dataset_dir
    from eval.workspace import catalog_files_hash

    calibration = load_calibration()
    benchmarks = ROOT.parent / "shared" / "benchmarks"
    for entry in calibration.provenance["datasets"]:
        folder = benchmarks / entry["dataset"]
        if not folder.is_dir():
            pytest.skip(f"benchmark data not present at {folder}")
        paths = check_dataset_dir(folder)
        assert catalog_files_hash(paths) == entry["catalog_sha256"]
        assert hashlib.sha256(paths.queries.read_bytes()).hexdigest() == entry["queries_sha256"]


def _packaged_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PACKAGED.read_text(encoding="utf-8"))
    return data


def test_a_calibration_file_that_is_not_json_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": "x", "answerable": ')
    with pytest.raises(CalibrationError) as info:
        load_calibration(path)
    assert f"{path} is malformed" in info.value.message
    assert "tool-selector calibrate" in info.value.hint


def test_a_calibration_file_missing_a_model_is_refused_by_name(tmp_path: Path) -> None:
    data = _packaged_json()
    del data["correct"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=re.escape(str(path))):
        load_calibration(path)


@pytest.mark.parametrize(
    "change",
    [
        {"features": ["top_cosine", "astrology"]},
        {"weights": [1.0, 2.0, 3.0]},
        {"scale": [0.0]},
    ],
)
def test_a_calibration_that_does_not_fit_this_version_is_refused_by_name(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    data = _packaged_json()
    model = {"features": ["top_cosine"], "weights": [1.0], "bias": 0.0, "mean": [0.5], "scale": [0.1]}
    data["answerable"] = {**model, **change}
    path = tmp_path / "mismatched.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError) as info:
        load_calibration(path)
    assert str(path) in info.value.message
    assert "does not fit this version" in info.value.message


def test_a_missing_calibration_file_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    with pytest.raises(CalibrationError, match=re.escape(str(path))):
        load_calibration(path)


# --------------------------------------------------------------------------- evidence


def _hit(server: str, name: str, cosine: float | None, keyword: float = 0.0) -> SearchHit:
    return SearchHit(
        id=f"{server}::{name}",
        server=server,
        name=name,
        score=1.0,
        keyword_score=keyword,
        vector_score=cosine,
    )


def _power(name: str) -> PowerCandidate:
    return PowerCandidate(name=name, score=1.0, match_type=MatchType.HYBRID)


HITS = [
    _hit("Weather Server", "get_forecast", 0.8, keyword=3.0),
    _hit("Weather Server", "get_alerts", 0.6),
    _hit("Clock", "now", 0.5),
    _hit("Clock", "timezones", None),
]


def test_evidence_reads_the_best_cosine_the_margin_and_the_name_overlaps() -> None:
    evidence = evidence_of("get the forecast for Paris", HITS, [_power("Weather Server"), _power("Clock")])
    assert set(evidence) == set(FEATURES)
    assert evidence["top_cosine"] == pytest.approx(0.8)
    assert evidence["cosine_margin"] == pytest.approx(0.3)  # 0.8 (Weather Server) - 0.5 (Clock)
    assert evidence["tool_name_overlap"] == 1.0  # get, forecast: both in the query
    assert evidence["server_name_overlap"] == 0.0  # weather (server is generic): not in the query
    assert evidence["query_terms_log"] == pytest.approx(math.log1p(3))  # get, forecast, pari


def test_evidence_counts_name_overlap_by_share_of_the_names_words() -> None:
    evidence = evidence_of("weather forecast", HITS, [_power("Weather Server")])
    assert evidence["tool_name_overlap"] == 0.5
    assert evidence["server_name_overlap"] == 1.0
    assert evidence["cosine_margin"] == pytest.approx(0.3)


def test_the_margin_is_measured_from_the_top_power_even_when_another_has_the_best_cosine() -> None:
    evidence = evidence_of("what time is it", HITS, [_power("Clock"), _power("Weather Server")])
    assert evidence["top_cosine"] == pytest.approx(0.8)
    assert evidence["cosine_margin"] == pytest.approx(-0.3)
    assert evidence["query_terms_log"] == pytest.approx(math.log1p(1))  # only "time" survives the stopwords


def test_no_hits_give_no_evidence_but_the_query_length() -> None:
    evidence = evidence_of("repair the wall", [], [])
    assert evidence == {
        "top_cosine": 0.0,
        "cosine_margin": 0.0,
        "tool_name_overlap": 0.0,
        "server_name_overlap": 0.0,
        "query_terms_log": pytest.approx(math.log1p(2)),
    }


def test_a_lone_power_has_its_own_cosine_as_margin() -> None:
    evidence = evidence_of("forecast", HITS[:2], [_power("Weather Server")])
    assert evidence["cosine_margin"] == pytest.approx(0.8)


# --------------------------------------------------------------------------- on a real catalog


@pytest.mark.slow
def test_an_off_topic_query_is_less_confident_than_an_on_topic_one(demo_container: Container) -> None:
    resolver = demo_container.resolver
    on_topic = resolver.resolve("list the open issues of my GitHub project")
    off_topic = resolver.resolve("how do I repair a cracked basement wall")
    assert on_topic.powers[0].name == "GitHub Projects MCP Server"
    assert off_topic.confidence < on_topic.confidence
    assert off_topic.confidence < demo_container.settings.thresholds.weak_matches
    assert on_topic.features["top_cosine"] > off_topic.features["top_cosine"]
