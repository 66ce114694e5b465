"""``tool-selector lab calibrate``: grouped folds, dataset weights, the fit of both heads, the figures it
reports, and the whole command on small-catalog roots with the real model."""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from eval.fitting.calibrate import tier_figures
from eval.fitting.calibrate_evidence import Example
from eval.fitting.calibrate_fit import (
    RECIPES,
    Recipe,
    SignedLogistic,
    centred_points,
    dataset_weights,
    export_model,
    fit_heads,
    grouped_folds,
)
from routes.cli import app
from tool_selector.config.settings import TierThresholds
from tool_selector.core.errors import CalibrationError
from tool_selector.resolve.confidence import load_calibration
from tool_selector.resolve.evidence import FEATURES


def _example(dataset: str, catalog: int, i: int, *, signal: float, correct: bool, **more: Any) -> Example:
    answerable = more.pop("answerable", correct)
    return Example(
        dataset=dataset,
        catalog=f"{dataset}/k-{catalog:02d}",
        catalog_servers=more.pop("servers", 10),
        id=f"{dataset}-{catalog}-{i}",
        level=None,
        origin=more.pop("origin", None if answerable else "gold-removed"),
        answerable=answerable,
        correct=correct,
        top3=more.pop("top3", correct),
        evidence={"top_cosine": signal, "cosine_margin": signal, **more},
    )


def _synthetic(seed: int = 5) -> list[Example]:
    """Two datasets of different sizes; the label follows top_cosine, with noise near the middle."""
    rng = random.Random(seed)
    out = []
    for dataset, catalogs, per in (("big", 12, 120), ("small", 6, 40)):
        for c in range(catalogs):
            for i in range(per):
                signal = rng.random()
                right = rng.random() < 1 / (1 + math.exp(-12 * (signal - 0.5)))
                out.append(_example(dataset, c, i, signal=round(signal, 4), correct=right))
    return out


def test_grouped_folds_never_split_a_catalog() -> None:
    examples = _synthetic()
    folds = grouped_folds(examples, 5)
    fold_of: dict[str, set[int]] = {}
    for e, f in zip(examples, folds, strict=True):
        fold_of.setdefault(e.catalog, set()).add(f)
    assert all(len(f) == 1 for f in fold_of.values())
    assert set(folds) == set(range(5))
    sizes = [folds.count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 120  # balanced to within one catalog


def test_every_dataset_weighs_the_same_and_so_do_its_answerable_and_unanswerable_halves() -> None:
    examples = _synthetic() + [
        _example("whole", 0, i, signal=0.9, correct=i % 3 > 0, answerable=True) for i in range(30)
    ]
    weight = dataset_weights(examples)

    def total(**where: Any) -> float:
        return float(weight[[all(getattr(e, k) == v for k, v in where.items()) for e in examples]].sum())

    assert (
        total(dataset="big") == pytest.approx(total(dataset="small")) == pytest.approx(total(dataset="whole"))
    )
    for dataset in ("big", "small"):
        assert total(dataset=dataset, answerable=True) == pytest.approx(
            total(dataset=dataset, answerable=False)
        )
    assert weight.mean() == pytest.approx(1.0)


def test_natural_weighting_lets_a_dataset_keep_its_own_share_of_unanswerable_requests() -> None:
    examples = _synthetic()
    weight = dataset_weights(examples, "natural")

    def total(**where: Any) -> float:
        return float(weight[[all(getattr(e, k) == v for k, v in where.items()) for e in examples]].sum())

    assert total(dataset="big") == pytest.approx(total(dataset="small"))
    big = [e for e in examples if e.dataset == "big"]
    share = sum(not e.answerable for e in big) / len(big)
    assert total(dataset="big", answerable=False) / total(dataset="big") == pytest.approx(share)


@pytest.mark.parametrize("recipe", list(RECIPES.values()), ids=list(RECIPES))
def test_both_heads_are_fitted_and_their_out_of_fold_probabilities_are_calibrated(recipe: Recipe) -> None:
    examples = _synthetic()
    fit = fit_heads(examples, version="t", reference=np.zeros(384), folds=5, recipe=recipe)
    calibration = fit.calibration
    assert calibration.features == list(recipe.features)
    low = calibration.probabilities({"top_cosine": 0.1, "cosine_margin": 0.1})
    high = calibration.probabilities({"top_cosine": 0.9, "cosine_margin": 0.9})
    assert low[0] < 0.2
    assert high[0] > 0.8
    oof = fit.out_of_fold["top"]
    truth = np.array([e.correct for e in examples], dtype=float)
    for lo in (0.0, 0.5):
        cell = (oof >= lo) & (oof < lo + 0.5)
        assert abs(oof[cell].mean() - truth[cell].mean()) < 0.05


LINEAR = [r for r in RECIPES.values() if r.learner == "logistic"]


@pytest.mark.parametrize("recipe", LINEAR, ids=[r.name for r in LINEAR])
def test_the_fitted_confidence_tells_different_evidence_apart_at_the_low_end(recipe: Recipe) -> None:
    """A step-function isotonic map gave seven unrelated answers the one floor value 0.1468; the
    centred map gives weaker evidence a lower probability, never the same one (a logistic head's raw
    output differs wherever its evidence does; trees share a leaf's)."""
    fit = fit_heads(_synthetic(), version="t", reference=np.zeros(384), folds=5, recipe=recipe)
    evidence = [{"top_cosine": v, "cosine_margin": v} for v in (-0.6, -0.3, 0.0, 0.05)]
    low = [fit.calibration.probabilities(e)[0] for e in evidence]
    assert low == sorted(low)
    assert len(set(low)) == len(low)
    assert fit.calibration.top.isotonic.x[0] == 0.0 and fit.calibration.top.isotonic.y[0] == 0.0


def test_centred_isotonic_points_keep_the_blocks_and_their_means() -> None:
    raw = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    fitted = np.array([0.0, 0.0, 0.0, 0.5, 0.5, 1.0])
    points = centred_points(raw, fitted, np.ones(6))
    # the block fitted at 0 and the one fitted at 1 give way to the ends; the middle block sits at its mean
    assert points == {"x": [0.0, 0.65, 1.0], "y": [0.0, 0.5, 1.0]}
    points = centred_points(raw, np.array([0.1, 0.1, 0.2, 0.2, 0.4, 0.8]), np.array([1, 3, 1, 1, 1, 1.0]))
    assert points["x"] == [0.0, 0.175, 0.45, 0.7, 0.9, 1.0]
    assert points["y"] == [0.0, 0.1, 0.2, 0.4, 0.8, 1.0]


def test_a_head_without_wrong_resolutions_cannot_be_fitted() -> None:
    examples = [_example("d", c, i, signal=0.5, correct=True) for c in range(5) for i in range(10)]
    with pytest.raises(CalibrationError, match="all right or all wrong"):
        fit_heads(examples, version="t", reference=np.zeros(3), folds=5)


def test_tier_figures_read_the_stated_targets() -> None:
    examples = [
        _example("d", 0, 0, signal=0, correct=True),  # activated, right
        _example("d", 0, 1, signal=0, correct=False, answerable=True, top3=True),  # activated, wrong
        _example("d", 0, 2, signal=0, correct=False, answerable=True),  # not_found
        _example("d", 0, 3, signal=0, correct=True),  # multiple_matches
        _example("d", 0, 4, signal=0, correct=False),  # gold removed, activated
        _example("d", 0, 5, signal=0, correct=False),  # gold removed, weak
    ]
    top = [0.9, 0.9, 0.01, 0.5, 0.95, 0.2]
    top3 = [0.9, 0.9, 0.05, 0.75, 0.95, 0.2]
    figures = tier_figures(examples, top, top3, TierThresholds())
    assert figures["answerable_activated"] == 0.5
    assert figures["activated_precision"] == 0.5
    assert figures["answerable_not_found"] == 0.25
    assert figures["gold_removed_activated"] == 0.5
    assert figures["unanswerable_caught"] == 0.5
    assert figures["top_power_right"] == 0.5


# --------------------------------------------------------------------------- the whole command

TOPICS = [
    (
        "Weather Station",
        "get_forecast",
        "Get the weather forecast for a city",
        "will it rain in Oslo tomorrow",
    ),
    (
        "Calendar Planner",
        "create_event",
        "Schedule a meeting in the calendar",
        "schedule a meeting with Anna",
    ),
    (
        "Code Hosting",
        "create_issue",
        "Open an issue in a git repository",
        "open a bug report about the crash",
    ),
    ("Music Player", "play_song", "Play a song or an album", "play some jazz music"),
    ("Currency Exchange", "convert", "Convert money between currencies", "how many yen is 100 euros"),
    ("Recipe Book", "find_recipe", "Find cooking recipes by ingredient", "a recipe with aubergines"),
    ("Flight Search", "search_flights", "Search flights between two airports", "flights from Paris to Rome"),
    ("Translator", "translate", "Translate text between languages", "translate hello into German"),
    ("Email Client", "send_email", "Send an email to a contact", "email Bob that I am late"),
    ("Stock Quotes", "get_quote", "Get the latest price of a stock", "what is Apple's share price"),
    ("Note Keeper", "add_note", "Save a text note", "write down that the wifi password changed"),
    ("Maps", "directions", "Driving directions between two places", "how do I drive to Lyon"),
]


def _small_root(root: Path, catalogs: list[list[int]]) -> Path:
    """A small-catalog root as make_subcatalogs.py writes it: each catalog's servers, their answerable
    requests, and as many requests whose server was left out (gold removed)."""
    for n, members in enumerate(catalogs):
        folder = root / f"k{len(members)}-{n:02d}"
        folder.mkdir(parents=True)
        servers = [{"name": TOPICS[i][0], "description": TOPICS[i][2]} for i in members]
        tools = [
            {"server": TOPICS[i][0], "name": TOPICS[i][1], "description": TOPICS[i][2], "input_schema": {}}
            for i in members
        ]
        lines = []
        for i, (server, tool, _, query) in enumerate(TOPICS):
            inside = i in members
            gold = [[f"{server}::{tool}"]] if inside else []
            lines.append({
                "id": f"{folder.name}:{i}", "query": query, "gold_servers": [server] if inside else [],
                "gold_tools": gold[0] if inside else [], "gold_tool_groups": gold,
                **({} if inside else {"origin": "gold-removed"}),
            })  # fmt: skip
        (folder / "servers.json").write_text(json.dumps(servers))
        (folder / "tools.json").write_text(json.dumps(tools))
        (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in lines) + "\n")
    return root


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_calibrate_fits_on_small_catalog_roots_and_scores_the_hold_out(
    tmp_path: Path, cache_dir: Path
) -> None:
    fours = _small_root(tmp_path / "fours", [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [0, 4, 8, 11]])
    sixes = _small_root(tmp_path / "sixes", [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [1, 3, 5, 7, 9, 11]])
    held = _small_root(tmp_path / "held", [[2, 5, 8, 10], [1, 6, 9, 11]])
    out = tmp_path / "cal" / "mine.json"
    result = CliRunner().invoke(
        app,
        [
            "lab",
            "calibrate",
            str(fours),
            str(sixes),
            "--holdout",
            str(held),
            "--out",
            str(out),
            "--version",
            "mine",
        ],
        env={"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)},
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["calibration"] == str(out)

    calibration = load_calibration(out)
    assert calibration.version == "mine"
    assert len(calibration.reference) == 384
    provenance = calibration.provenance
    assert [d["dataset"] for d in provenance["fit_datasets"]] == ["fours", "sixes"]
    assert [d["catalogs"] for d in provenance["fit_datasets"]] == [4, 3]
    assert provenance["holdout_datasets"][0]["dataset"] == "held"
    assert provenance["reference"] == "mean vector of the 12 distinct tools of the fit catalogs"
    assert provenance["cross_validated"]["all"]["queries"] == 7 * 12
    assert set(provenance["cross_validated"]) == {
        "all",
        "dataset fours",
        "dataset sixes",
        "4 servers",
        "6 servers",
    }
    assert provenance["holdout"]["all"]["queries"] == 2 * 12
    assert provenance["holdout"]["all"]["answerable"] == 8
    assert "--holdout" in provenance["command"]

    with gzip.open(out.with_name("mine.evidence.csv.gz"), "rt", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 9 * 12
    assert {r["role"] for r in rows} == {"fit", "holdout"}
    assert set(FEATURES) <= set(rows[0])
    assert not any("aubergines" in json.dumps(r) for r in rows), "no query text in the evidence file"

    env = {"TOOL_SELECTOR_CACHE_DIR": str(cache_dir), "TOOL_SELECTOR_CONFIDENCE__CALIBRATION_FILE": str(out)}
    for command in (["catalog", "import", str(fours / "k4-00"), "--approve"], ["index", "build"]):
        assert CliRunner().invoke(app, command, env=env).exit_code == 0
    resolved = CliRunner().invoke(app, ["resolve", "will it rain in Oslo tomorrow", "--explain"], env=env)
    assert resolved.exit_code == 0, resolved.output
    answer = json.loads(resolved.stdout)
    assert answer["resolution"]["powers"][0]["name"] == "Weather Station"
    assert answer["confidence"] == round(calibration.probabilities(answer["resolution"]["features"])[0], 4)


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_calibrate_refuses_a_hold_out_that_is_also_fitted_on_and_too_few_catalogs(
    tmp_path: Path, cache_dir: Path
) -> None:
    fours = _small_root(tmp_path / "fours", [[0, 1, 2, 3], [4, 5, 6, 7]])
    env = {"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    out = tmp_path / "c.json"
    both = CliRunner().invoke(
        app, ["lab", "calibrate", str(fours), "--holdout", str(fours), "--out", str(out)], env=env
    )
    assert both.exit_code == 2
    assert "2 catalogs are both fitted on and held out" in both.stderr
    assert "not both" in both.stderr
    few = CliRunner().invoke(app, ["lab", "calibrate", str(fours), "--out", str(out)], env=env)
    assert few.exit_code == 2
    assert "needs at least 5" in few.stderr
    assert "lower --folds" in few.stderr
    assert not out.exists()


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_calibrate_lodo_scores_each_dataset_with_a_fit_on_the_others_and_reuses_its_evidence(
    tmp_path: Path, cache_dir: Path
) -> None:
    fours = _small_root(tmp_path / "fours", [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    sixes = _small_root(tmp_path / "sixes", [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [1, 3, 5, 7, 9, 11]])
    others = _small_root(tmp_path / "others", [[2, 5, 8, 10], [1, 6, 9, 11], [0, 3, 7, 11]])
    setups = _small_root(tmp_path / "setups", [[0, 2, 4, 6], [1, 3, 5, 7]])
    work = tmp_path / "work"
    command = [
        "lab", "calibrate-lodo", f"family={fours}", f"family={sixes}", str(others),
        "--each", str(setups), "--work", str(work), "--recipe", "few, logistic",
    ]  # fmt: skip
    env = {"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    first = CliRunner().invoke(app, command, env=env)
    assert first.exit_code == 0, first.output
    assert "resolving" in first.stderr
    results = json.loads((work / "calibrate-lodo.json").read_text("utf-8"))
    assert set(results) == {"family", "others", "setups/k4-00", "setups/k4-01"}
    assert results["family"]["few, logistic"]["requests"] == 6 * 12
    assert 0.0 <= results["others"]["few, logistic"]["ece"] <= 1.0
    assert "| mean over left-out datasets |" in first.stdout
    again = CliRunner().invoke(app, command, env=env)
    assert again.exit_code == 0
    assert "resolving" not in again.stderr  # the evidence is read back, not resolved again
    unknown = CliRunner().invoke(app, [*command[:-1], "trees of all kinds"], env=env)
    assert unknown.exit_code == 2
    assert "few, logistic" in unknown.stderr


def test_a_signed_logistic_keeps_each_coefficient_to_the_direction_its_feature_means() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((400, 2))
    y = (x[:, 0] - 0.8 * x[:, 1] + rng.normal(0, 0.1, 400) > 0.1).astype(int)  # the second feature lowers it
    weight = np.ones(400)
    free = SignedLogistic((0, 0)).fit(x, y, weight)
    assert free.coefficients[0] > 0 > free.coefficients[1]
    held = SignedLogistic((1, 1)).fit(x, y, weight)  # both may only raise the probability
    assert held.coefficients[0] > 0 and held.coefficients[1] == 0.0
    assert held.predict_proba(x).shape == (400, 2)
    exported = export_model(held)
    assert exported.probability(x[0]) == pytest.approx(held.predict_proba(x[:1])[0, 1])
