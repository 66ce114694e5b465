"""The demo-conversations set (eval/datasets/demo-conversations) is well formed: its check script passes on
it and prints the composition the README quotes, and fails on a spoiled copy (a gold tool no server has,
a gold argument the tool's schema does not take, the same agent_query twice), naming the line and why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import DATASETS, GATEWAY_DEMO, ROOT
from tests.support.scripts import load_script

DATASET = DATASETS / "demo-conversations"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    return load_script(DATASET / "check.py", "demo_conversations_check")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _failures(output: str) -> list[str]:
    return [line[len("  - ") :] for line in output.splitlines() if line.startswith("  - ")]


def test_the_check_script_passes_on_the_shipped_set_and_prints_its_composition() -> None:
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py")], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("OK: all checks passed")
    assert "queries.jsonl by conversation and category" in done.stdout
    # the README quotes the output whole
    readme = (DATASET / "README.md").read_text(encoding="utf-8")
    assert done.stdout.rstrip("\n") in readme


# -- spoiled copies ----------------------------------------------------------------------------------


def _unknown_gold_tool(rows: list[dict[str, Any]]) -> tuple[str, str]:
    row = next(r for r in rows if r["category"] == "plain" and not r["gold_arguments"])
    row["gold_tools"] = ["git::git_teleport"]
    row["gold_tool_groups"] = [["git::git_teleport"]]
    return row["id"], "unknown tool git::git_teleport"


def _argument_outside_the_schema(rows: list[dict[str, Any]]) -> tuple[str, str]:
    row = next(r for r in rows if r["gold_arguments"])
    row["gold_arguments"]["colour"] = "blue"
    return row["id"], f"gold_arguments key 'colour' is not a parameter of {row['gold_tools'][0]}"


def _duplicate_agent_query(rows: list[dict[str, Any]]) -> tuple[str, str]:
    rows[1]["agent_query"] = rows[0]["agent_query"]
    return rows[1]["id"], f"duplicate agent_query (same as {rows[0]['id']})"


SPOILERS: dict[str, Callable[[list[dict[str, Any]]], tuple[str, str]]] = {
    "unknown gold tool": _unknown_gold_tool,
    "gold argument outside the schema": _argument_outside_the_schema,
    "duplicate agent_query": _duplicate_agent_query,
}


@pytest.mark.parametrize("spoiler", sorted(SPOILERS))
def test_the_check_fails_on_a_spoiled_copy_naming_the_line_and_why(
    check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], spoiler: str
) -> None:
    copy = tmp_path / "demo-conversations"
    shutil.copytree(DATASET, copy)
    rows = _rows(copy / "queries.jsonl")
    line_id, reason = SPOILERS[spoiler](rows)
    _write_rows(copy / "queries.jsonl", rows)

    code = check.main(["--root", str(copy), "--tools", str(GATEWAY_DEMO / "tools.json")])

    out = capsys.readouterr().out
    assert code == 1
    failures = _failures(out)
    assert f"FAILED: {len(failures)} problem(s)" in out
    assert f"{line_id}: {reason}" in failures, out
    assert all(f.startswith(f"{line_id}: ") for f in failures), failures


def test_the_check_finds_the_tools_beside_a_copied_folder(
    check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(DATASET, tmp_path / "demo-conversations")
    (tmp_path / "gateway-demo").mkdir()
    tools = json.loads((GATEWAY_DEMO / "tools.json").read_text(encoding="utf-8"))
    kept = [t for t in tools if t["server"] != "time"]  # the gold tools of the time lines are gone
    (tmp_path / "gateway-demo" / "tools.json").write_text(json.dumps(kept), encoding="utf-8")

    code = check.main(["--root", str(tmp_path / "demo-conversations")])

    out = capsys.readouterr().out
    assert code == 1
    assert any(f.endswith("unknown tool time::get_current_time") for f in _failures(out)), out
