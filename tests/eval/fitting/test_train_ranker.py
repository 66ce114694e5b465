"""``tool-selector lab train-ranker`` on a real labelled dataset: held-back folds, the file, and its use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.quality.dataset import load_queries
from routes.cli import app
from tests.support.paths import GATEWAY_DEMO as DEMO
from tool_selector.resolve.rerank.features import RANK_FEATURES
from tool_selector.resolve.rerank.model import load_ranker


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_train_ranker_measures_held_back_folds_writes_a_model_resolve_uses_and_a_bad_one_is_named(
    tmp_path: Path, cache_dir: Path
) -> None:
    out = tmp_path / "models" / "mine.json"
    env = {"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    args = [
        "lab",
        "train-ranker",
        str(DEMO),
        "--out",
        str(out),
        "--version",
        "mine",
        "--folds",
        "2",
        "--rounds",
        "20",
    ]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    answerable = sum(1 for q in load_queries(DEMO / "queries.jsonl") if q.answerable)
    held = printed["held_back_folds"]
    assert held["all"]["queries"] == held["dataset gateway-demo"]["queries"] == answerable
    assert 0.0 < held["all"]["fused_tool_r5"] <= 1.0 and 0.0 < held["all"]["ranker_tool_r5"] <= 1.0

    model = load_ranker(out)
    assert model.version == "mine" and model.features == list(RANK_FEATURES)
    assert len(model.ensemble.trees) == printed["trees"] == 20
    assert model.provenance["datasets"][0]["dataset"] == "gateway-demo"
    assert model.provenance["learner"]["folds"] == 2 and "--rounds 20" in model.provenance["command"]
    assert "the weather" not in out.read_text(), "no query text in the model file"

    env["TOOL_SELECTOR_SEARCH__RANKER_FILE"] = str(out)
    for command in (["catalog", "import", str(DEMO), "--approve"], ["index", "build"]):
        assert CliRunner().invoke(app, command, env=env).exit_code == 0
    env["TOOL_SELECTOR_SEARCH__RERANK"] = "true"  # the ranker is off by default (docs/measurements.md)
    resolved = CliRunner().invoke(app, ["resolve", "what time is it in Tokyo", "--explain"], env=env)
    assert resolved.exit_code == 0, resolved.output
    assert json.loads(resolved.stdout)["resolution"]["tools"]

    (tmp_path / "bad.json").write_text("{not json")
    env["TOOL_SELECTOR_SEARCH__RANKER_FILE"] = str(tmp_path / "bad.json")
    refused = CliRunner().invoke(app, ["resolve", "what time is it in Tokyo"], env=env)
    assert refused.exit_code != 0
    assert "ranker" in refused.output and "train-ranker" in refused.output
