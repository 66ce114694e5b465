"""``tool-selector lab replay`` and the memory's judge: a replay of gateway-demo twice in the same words
learns from the first pass (the second activates more, with remembered answers) and learns nothing with
the memory off; a second phrasing that is missing says what to do; the judge's fit keeps every
coefficient's sign and weighs each dataset the same."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from eval.fitting.memory_fit import fit_model
from routes.cli import app
from tests.support.paths import GATEWAY_DEMO as DEMO


def _replay(cache_dir: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(
        app, ["lab", "replay", str(DEMO), *args], env={"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    )
    assert result.exit_code == 0, result.output
    found: dict = json.loads(result.stdout[result.stdout.index("{") :])  # type: ignore[type-arg]
    assert "gateway-demo" in result.stdout.splitlines()[1]  # the printed table's first row
    return found


@pytest.mark.usefixtures("real_model")
def test_a_second_pass_in_the_same_words_activates_what_the_first_confirmed(cache_dir: Path) -> None:
    first, second = _replay(cache_dir, "--passes", "2")["all"]
    assert first["remembered"] == 0 < second["remembered"]
    assert second["plain_activated"] > first["plain_activated"]
    assert second["activated_precision"] >= 0.98 and second["unanswerable_activated"] == 0.0
    off = _replay(cache_dir, "--passes", "2", "--no-memory")["all"]
    assert [p["remembered"] for p in off] == [0, 0]
    assert off[1]["plain_activated"] == off[0]["plain_activated"] == first["plain_activated"]


@pytest.mark.usefixtures("real_model")
def test_a_missing_second_phrasing_says_what_to_do(cache_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["lab", "replay", str(DEMO), "--rephrased"], env={"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    )
    assert result.exit_code != 0 and "queries-rephrased.jsonl" in result.output
    assert "Replay without --rephrased" in result.output


def test_the_judge_keeps_its_signs_and_weighs_each_dataset_the_same() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for dataset, size in (("big", 900), ("small", 60)):
        for _ in range(size):
            similarity = float(rng.uniform(0.35, 1.0))
            label = bool(rng.random() < similarity) if dataset == "small" else True
            rows.append({"dataset": dataset, "label": label, "features": [similarity, 0.2, 0.7, 0.5, 1.0]})
    model = fit_model(rows)
    assert all(w >= 0 for w in model.coefficients) and model.coefficients[0] > 0
    assert model.probability([0.95, 0.2, 0.7, 0.5, 1.0]) > model.probability([0.4, 0.2, 0.7, 0.5, 1.0])
    # the big set (always right) must not make a low-similarity recall look sure: each set weighs half
    assert model.probability([0.4, 0.2, 0.7, 0.5, 1.0]) < 0.9
    with pytest.raises(Exception, match="judged both right and wrong"):
        fit_model([r | {"label": True} for r in rows])
