"""``tool-selector lab lodo`` end to end on two small real datasets, with training cut to two steps: the
fold's model never saw the left-out catalog, every configuration is scored, the table and the ship rule
are printed, and a second run reuses the fold model. A dataset given with ``--extra`` only trains: its
pairs of the left-out catalog's tools go too, the others join the fold's training, and it is no fold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.relevance import data
from eval.relevance.lodo import CONFIGS
from routes.cli import app
from tests.support.paths import DATASETS
from tests.support.scripts import load_script


@pytest.mark.usefixtures("real_model")  # the command loads the base model and trains from it
def test_lodo_trains_without_the_left_out_catalog_scores_every_configuration_and_reuses_the_fold(
    tmp_path: Path, cache_dir: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "demo").symlink_to(DATASETS / "gateway-demo", target_is_directory=True)
    # a personal setup that configures three of the demo's servers: its pairs for them must go
    (shared / "dev").symlink_to(DATASETS / "personal-setups" / "backend-dev", target_is_directory=True)
    # the team's requests for the demo servers (all of them the left-out catalog's) and for restbench
    check = load_script(DATASETS / "team-requests" / "check.py", "team_requests_check_lodo")
    extras = [tmp_path / "extra-demo", tmp_path / "extra-restbench"]
    assert check.export("demo", extras[0], ("agent",), None) == 0
    assert check.export("restbench", extras[1], ("agent",), None) == 0
    work = tmp_path / "work"
    args = ["lab", "lodo", "--work", str(work), "--shared", str(shared), "--set", "demo", "--set", "dev"]
    args += ["--no-team", "--only", "demo", "--max-steps", "2"]
    args += [f"--extra={e}" for e in extras]
    env = {"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    stored = json.loads((work / "lodo.json").read_text())
    fold = stored["folds"]["demo"]
    assert fold["training"]["datasets"] == ["dev", "extra:extra-restbench"]
    demo, dev = data.source("demo", shared / "demo"), data.source("dev", shared / "dev")
    expected = [p for p in data.pairs_of(dev) if p.tool_id not in demo.tool_ids()]
    extra = data.pairs_of(data.source("extra:extra-restbench", extras[1]))
    assert len(extra) == 94  # one agent request a restbench tool; none of the demo's 52 joins
    assert 0 < fold["training"]["pairs"] == len(expected) + len(extra)
    assert set(stored["folds"]) == {"demo"}  # an extra dataset is never a fold
    scores = fold["scores"]["demo"]
    assert set(scores) == {c.name for c in CONFIGS}
    for figures in scores.values():
        assert 0.0 <= figures["tool_recall_at_5"] <= 1.0 and figures["answerable"] == 59
    assert "| demo | today |" in result.stdout and "| model + arguments |" in result.stdout
    assert (work / "lodo.md").read_text().strip() == result.stdout.strip()

    again = CliRunner().invoke(app, args, env=env)
    assert again.exit_code == 0, again.output
    assert "fold model reused" in again.stderr
    assert (
        json.loads((work / "lodo.json").read_text())["folds"]["demo"]["scores"]
        == stored["folds"]["demo"]["scores"]
    )
