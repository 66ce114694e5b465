"""Absolute confidence: the exported tree ensembles, the isotonic maps, the packaged calibration, and how
a bad calibration file is refused."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.isotonic import IsotonicRegression

from eval.fitting.calibrate_fit import BOOSTING, RECIPE, export_ensemble
from services.root.container import Container
from tests.support.paths import BENCHMARKS, ROOT
from tool_selector.core.errors import CalibrationError
from tool_selector.resolve.confidence import (
    Calibration,
    Head,
    Isotonic,
    Logistic,
    Tree,
    TreeEnsemble,
    load_calibration,
)
from tool_selector.resolve.evidence import FEATURES
from tool_selector.resolve.judge import capability_judge
from tool_selector.resolve.resolver import Resolver

PACKAGED = ROOT / "tool_selector" / "calibration" / "confidence-v2.json"
SMALL = BENCHMARKS / "small"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _stump(feature: int, threshold: float, low: float, high: float) -> Tree:
    return Tree(feature=[feature, -1, -1], threshold=[threshold, 0, 0], left=[1, 0, 0], right=[2, 0, 0],
                value=[0, low, high])  # fmt: skip


# --------------------------------------------------------------------------- the ensemble


def test_a_tree_sends_a_value_equal_to_its_threshold_left() -> None:
    ensemble = TreeEnsemble(baseline=0.5, trees=[_stump(0, 0.3, -1.0, 2.0), _stump(1, 0.0, 0.25, -0.25)])
    assert ensemble.raw(np.array([0.3, 0.0])) == pytest.approx(0.5 - 1.0 + 0.25)
    assert ensemble.raw(np.array([0.3001, 0.0])) == pytest.approx(0.5 + 2.0 + 0.25)
    assert ensemble.raw(np.array([0.0, 1.0])) == pytest.approx(0.5 - 1.0 - 0.25)
    assert ensemble.probability(np.array([0.3001, 0.0])) == pytest.approx(1 / (1 + math.exp(-2.75)))


def test_trees_of_different_depths_are_walked_to_their_own_leaves() -> None:
    deep = Tree(
        feature=[0, -1, 1, -1, -1],
        threshold=[0.5, 0, 0.5, 0, 0],
        left=[1, 0, 3, 0, 0],
        right=[2, 0, 4, 0, 0],
        value=[0, 1.0, 0, 10.0, 100.0],
    )
    ensemble = TreeEnsemble(baseline=0.0, trees=[deep, _stump(0, 0.5, 0.0, 0.5)])
    assert ensemble.raw(np.array([0.2, 0.9])) == 1.0
    assert ensemble.raw(np.array([0.9, 0.2])) == 10.5
    assert ensemble.raw(np.array([0.9, 0.9])) == 100.5


@pytest.mark.parametrize("right", [5, 0], ids=["outside", "back up"])
def test_a_tree_pointing_outside_itself_or_back_up_is_refused(right: int) -> None:
    with pytest.raises(ValueError, match="points outside its tree or back up it"):
        Tree(feature=[0, -1], threshold=[0.5, 0], left=[1, 0], right=[right, 0], value=[0, 1])


def test_an_exported_ensemble_predicts_what_scikit_learn_predicts() -> None:
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=(3000, 6)), 4)  # features carry 4 decimals, as in production
    y = (x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(scale=0.7, size=3000) > 0).astype(int)
    model = HistGradientBoostingClassifier(**{**BOOSTING, "max_iter": 60}).fit(x, y)
    exported = export_ensemble(model)
    probe = np.round(rng.normal(size=(400, 6)), 4)
    ours = np.array([exported.probability(row) for row in probe])
    theirs = model.predict_proba(probe)[:, 1]
    assert np.abs(ours - theirs).max() < 1e-5
    assert len(exported.trees) == 60


def test_an_isotonic_map_interpolates_and_clips_as_scikit_learn_does() -> None:
    rng = np.random.default_rng(3)
    raw = rng.uniform(0.1, 0.9, size=500)
    y = (rng.uniform(size=500) < raw).astype(float)
    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, y)
    ours = Isotonic(x=list(fitted.X_thresholds_), y=list(fitted.y_thresholds_))
    probe = np.linspace(0.0, 1.0, 101)
    assert [ours(p) for p in probe] == pytest.approx(list(fitted.predict(probe)))


def test_an_isotonic_map_that_goes_down_is_refused() -> None:
    with pytest.raises(ValueError, match="non-decreasing"):
        Isotonic(x=[0.0, 0.5, 1.0], y=[0.0, 0.6, 0.4])


def _head(bias: float) -> Head:
    return Head(
        ensemble=TreeEnsemble(baseline=bias, trees=[_stump(0, 0.5, -1.0, 1.0)]),
        isotonic=Isotonic(x=[0.0, 1.0], y=[0.0, 1.0]),
    )


def test_p_top_three_is_never_below_p_top() -> None:
    calibration = Calibration(version="t", features=["top_cosine"], top=_head(1.0), top3=_head(-3.0))
    top, top3 = calibration.probabilities({"top_cosine": 0.9})
    assert top == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert top3 == top


def test_missing_evidence_reads_as_zero() -> None:
    calibration = Calibration(version="t", features=["top_cosine"], top=_head(0.0), top3=_head(0.0))
    assert calibration.probabilities({}) == calibration.probabilities({"top_cosine": 0.0})


# --------------------------------------------------------------------------- the packaged file


def _packaged_json() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PACKAGED.read_text(encoding="utf-8"))
    return data


def test_the_packaged_calibration_loads_and_records_how_it_was_fitted() -> None:
    calibration = load_calibration()
    assert calibration.version == "confidence-v4"
    assert calibration.features == list(RECIPE.features)
    assert "capability" in calibration.features  # the judge's verdict (issue 41)
    assert isinstance(calibration.top.ensemble, Logistic) and isinstance(calibration.top3.ensemble, Logistic)
    assert len(calibration.reference) == 384
    assert calibration == load_calibration(PACKAGED)
    provenance = calibration.provenance
    assert provenance["command"].startswith("tool-selector lab calibrate ")
    assert "--out tool_selector/calibration/confidence-v2.json" in provenance["command"]
    assert "--judge personal-setups/backend-dev=" in provenance["command"]  # each dataset its own judge
    assert provenance["fit"]["recipe"] == RECIPE.name
    fitted = {d["dataset"] for d in provenance["fit_datasets"]}
    assert {"msc", "metatool", "livemcp", "toolalpaca", "restbench", "gateway-demo"} <= fitted
    assert {f"personal-setups/{s}" for s in ("backend-dev", "shop-owner")} <= fitted
    for entry in provenance["fit_datasets"]:
        assert SHA256.match(entry["sha256"])
    figures = provenance["cross_validated"]["all"]
    assert figures["queries"] > 4000
    assert 0.0 <= figures["ece"] <= 0.1


def test_the_packaged_fit_is_made_from_the_shipped_small_catalogs_and_msc_as_they_are(tmp_path: Path) -> None:
    """The msc dataset of the fit is the 10-server cuts of shared/benchmarks/small/, the full catalog and
    the team's ten-server cuts of msc (``check.py cuts``, seeded): scripts/calibrate.sh reproduces the file
    from them."""
    from eval.quality.dataset import check_dataset_dir, dataset_folders
    from eval.quality.workspace import catalog_files_hash
    from tests.support.paths import DATASETS
    from tests.support.scripts import load_script

    if not (SMALL / "msc_k10").is_dir():
        pytest.skip(f"benchmark data not present at {SMALL}")
    cuts = load_script(DATASETS / "team-requests" / "check.py", "team_requests_check")
    assert cuts.cuts("msc", tmp_path / "msc", 10, 12, 41, 30, 12, 6) == 0  # scripts/calibrate.sh's
    digest = hashlib.sha256()
    folders = [
        *dataset_folders(SMALL / "msc_k10"),
        BENCHMARKS / "msc_bench_dev",
        *dataset_folders(tmp_path / "msc"),
    ]
    for folder in folders:
        paths = check_dataset_dir(folder)
        digest.update(catalog_files_hash(paths).encode())
        digest.update(paths.queries.read_bytes())
    recorded = {d["dataset"]: d["sha256"] for d in load_calibration().provenance["fit_datasets"]}
    assert recorded["msc"] == digest.hexdigest()


def test_a_logistic_head_reads_standardised_features_and_refuses_inconsistent_arrays() -> None:
    head = Logistic(intercept=0.0, coefficients=[2.0, -1.0], mean=[0.5, 0.0], scale=[0.25, 1.0])
    assert head.probability(np.array([0.5, 0.0])) == pytest.approx(0.5)
    assert head.probability(np.array([0.75, 0.0])) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert head.probability(np.array([0.5, 1.0])) < 0.5  # a negative coefficient lowers it
    assert head.features_used() == {0, 1}
    for bad in ({"mean": [0.5]}, {"scale": [0.25, 0.0]}, {"coefficients": []}):
        with pytest.raises(ValueError, match="positive scales"):
            Logistic.model_validate({**head.model_dump(), **bad})


def test_a_calibration_whose_logistic_head_reads_more_features_than_it_names_is_refused(
    tmp_path: Path,
) -> None:
    data = _packaged_json()
    data["features"] = data["features"][:-1]
    assert "does not fit this version" in _refused(tmp_path, data).message


def _refused(tmp_path: Path, data: Any) -> CalibrationError:
    path = tmp_path / "calibration.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(CalibrationError) as info:
        load_calibration(path)
    assert str(path) in info.value.message
    assert "tool-selector lab calibrate" in info.value.hint
    return info.value


def test_a_calibration_file_that_is_not_json_is_refused_by_name(tmp_path: Path) -> None:
    assert "is not JSON" in _refused(tmp_path, '{"version": "x", "top": ').message


def test_a_first_format_calibration_is_refused_with_the_format_it_needs(tmp_path: Path) -> None:
    old = {"version": "confidence-v1", "answerable": {}, "correct": {}}
    error = _refused(tmp_path, old)
    assert "v1 (no format field)" in error.message
    assert "tool-selector-calibration/2" in error.message


def test_a_calibration_file_missing_a_head_is_refused_by_name(tmp_path: Path) -> None:
    data = _packaged_json()
    del data["top3"]
    assert "is malformed" in _refused(tmp_path, data).message


def test_a_calibration_reading_a_feature_this_version_lacks_is_refused(tmp_path: Path) -> None:
    data = _packaged_json()
    data["features"] = [*data["features"][:-1], "astrology"]
    error = _refused(tmp_path, data)
    assert "does not fit this version" in error.message
    assert "astrology" in error.message


def test_a_calibration_whose_trees_read_past_its_features_is_refused(tmp_path: Path) -> None:
    data = _packaged_json()
    data["features"] = data["features"][:2]
    assert "read past its 2 features" in _refused(tmp_path, data).message


def test_a_missing_calibration_file_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    with pytest.raises(CalibrationError, match=re.escape(str(path))):
        load_calibration(path)


def test_a_calibration_fitted_for_another_embedding_size_is_refused_by_the_resolver(
    demo_container: Container,
) -> None:
    calibration = load_calibration().model_copy(update={"reference": [0.1] * 768})
    with pytest.raises(CalibrationError, match="768 dimensions") as info:
        Resolver(
            demo_container.backend,
            demo_container.embedder,
            calibration,
            alpha=0.5,
            field_boosts={},
            capability=capability_judge(),
        )
    assert "Re-run `tool-selector lab calibrate`" in info.value.hint


# --------------------------------------------------------------------------- on a real catalog


def test_an_off_topic_query_is_routed_below_an_on_topic_one(demo_container: Container) -> None:
    from services.resolve.read_path import ReadPath

    read_path = ReadPath.fixed(demo_container)
    on_resolution, on_topic = read_path.decide("list the open issues of my GitHub project")
    off_resolution, off_topic = read_path.decide("how do I repair a cracked basement wall")
    assert on_resolution.powers[0].name == "GitHub Projects MCP Server"
    assert on_topic.status == "activated"
    assert off_topic.status in ("weak_matches", "not_found")
    assert off_resolution.confidence < on_resolution.confidence
    assert off_resolution.top3_confidence < demo_container.settings.confidence.thresholds.multiple_matches
    assert set(on_resolution.features) == set(FEATURES)


def test_a_calibration_file_over_max_file_bytes_is_refused_naming_the_limit(tmp_path: Path) -> None:
    from tool_selector.config.settings import Settings

    big = tmp_path / "calibration.json"
    big.write_text(json.dumps({"format": "padding", "pad": "x" * 8192}))
    settings = Settings(data_dir=tmp_path / "data", confidence={"calibration_file": big}, max_file_bytes=4096)
    with Container(settings) as container, pytest.raises(CalibrationError) as caught:
        _ = container.calibration
    assert f"The confidence calibration {big} is 8.0 KiB" in caught.value.message
    assert "over the limit of 4 KiB (4096 bytes)" in caught.value.message
    assert "TOOL_SELECTOR_MAX_FILE_BYTES" in caught.value.hint
