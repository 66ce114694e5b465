"""``lab calibrate-lodo``: how datasets are named and grouped, that a left-out dataset never reaches the
fit that scores it, the tier figures of the decision issue, and the means (a family of setups first)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval.fitting import calibrate_lodo
from eval.fitting.calibrate_evidence import Example
from eval.fitting.calibrate_fit import STURDY, Recipe
from eval.fitting.calibrate_lodo import Labelled, datasets_of, figures, mean, run_lodo, table
from tests.eval.relevance.test_relevance_protocol import _dataset
from tool_selector.config.settings import TierThresholds
from tool_selector.core.errors import InvalidInputError


def _folder(root: Path, name: str) -> Path:
    return _dataset(root / name, {"notes": ["add_note"]}, [("jot this down", [["notes::add_note"]])])


def test_arguments_of_one_name_form_one_dataset_and_each_setup_of_an_each_root_is_its_own(
    tmp_path: Path,
) -> None:
    a, b, c = (_folder(tmp_path, n) for n in ("a", "b", "c"))
    setups = tmp_path / "setups"
    _folder(setups, "dev")
    _folder(setups, "shop")
    found = datasets_of([f"fam={a}", f"fam={b}", str(c)], [setups])
    assert [(d.name, [f.name for f in d.folders]) for d in found] == [
        ("fam", ["a", "b"]),
        ("c", ["c"]),
        ("setups/dev", ["dev"]),
        ("setups/shop", ["shop"]),
    ]


def test_fewer_than_three_datasets_are_refused_with_what_to_do(tmp_path: Path) -> None:
    a, b = _folder(tmp_path, "a"), _folder(tmp_path, "b")
    with pytest.raises(InvalidInputError) as caught:
        datasets_of([str(a), str(b)])
    assert "NAME=PATH" in caught.value.hint


def _labelled(dataset: str, n: int, seed: int) -> list[Labelled]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        margin = rng.random()
        answerable = rng.random() < 0.8
        right = answerable and rng.random() < 1 / (1 + math.exp(-10 * (margin - 0.4)))
        evidence = {f: 0.0 for f in STURDY.features} | {"cosine_margin": round(margin, 4)}
        example = Example(
            dataset=dataset,
            catalog=f"{dataset}/k-{i % 4}",
            catalog_servers=10,
            id=f"{dataset}-{i}",
            level=None,
            origin=None if answerable else "no-gold",
            answerable=answerable,
            correct=right,
            top3=right,
            evidence=evidence,
        )
        out.append(Labelled(example, None, False))
    return out


def test_a_left_out_dataset_never_reaches_the_fit_that_scores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    examples = {name: _labelled(name, 160, seed) for seed, name in enumerate(("one", "two", "three"))}
    seen: list[set[str]] = []
    real = calibrate_lodo.fit_heads

    def spy(fitted: list[Example], **kwargs: Any) -> Any:
        seen.append({e.dataset for e in fitted})
        return real(fitted, **kwargs)

    monkeypatch.setattr(calibrate_lodo, "fit_heads", spy)
    recipe = Recipe("margin", ("cosine_margin",), "logistic", (1,))
    results = run_lodo(examples, TierThresholds(), [recipe], folds=3, say=lambda _: None)
    assert seen == [{"two", "three"}, {"one", "three"}, {"one", "two"}]
    assert set(results) == {"one", "two", "three"}
    for rows in results.values():
        assert 0.0 <= rows["margin"]["ece"] <= 1.0
        assert rows["margin"]["requests"] == 160
    assert "| mean over left-out datasets |" in table(results)


def _one(answerable: bool, correct: bool, *, ambiguous: bool = False, tier: str | None = None) -> Labelled:
    example = Example(
        dataset="d",
        catalog="d/k",
        catalog_servers=5,
        id=str(random.random()),
        level=None,
        origin=None,
        answerable=answerable,
        correct=correct,
        top3=correct,
        evidence={},
    )
    return Labelled(example, tier, ambiguous)


def test_the_figures_count_plain_unanswerable_and_ambiguous_requests_apart() -> None:
    labelled = [
        _one(True, True, tier="activated"),  # plain, activated, right
        _one(True, False, tier="activated"),  # plain, activated, wrong
        _one(True, True, tier="activated"),  # plain, weak
        _one(True, False, tier="activated"),  # plain, not_found
        _one(False, False, tier="not_found"),  # unanswerable, not_found
        _one(False, False, tier="not_found"),  # unanswerable, activated
        _one(True, True, ambiguous=True, tier="multiple_matches"),  # ambiguous, activated
    ]
    top = [0.9, 0.9, 0.3, 0.01, 0.01, 0.95, 0.9]
    top3 = [0.9, 0.9, 0.3, 0.01, 0.01, 0.95, 0.9]
    got = figures(labelled, top, top3, TierThresholds())
    assert got["answerable_activated"] == 0.5
    assert got["activated_precision"] == 0.5
    assert got["answerable_not_found"] == 0.25
    assert got["unanswerable_activated"] == 0.5
    assert got["unanswerable_not_found"] == 0.5
    assert got["ambiguous_activated"] == 1.0
    # the tier as expected: both activations (the tier, not the power) and the caught unanswerable one
    assert got["tier_accuracy"] == round(3 / 7, 4)


def test_a_family_of_setups_is_averaged_first_then_weighs_like_one_dataset() -> None:
    results = {
        "msc": {"r": {"ece": 0.1}},
        "setups/a": {"r": {"ece": 0.2}},
        "setups/b": {"r": {"ece": 0.4}},
    }
    assert mean(results, "r", "ece") == pytest.approx((0.1 + 0.3) / 2)
    assert mean(results, "other", "ece") is None
    assert np.isclose(mean(results, "r", "ece") or 0, 0.2)
