"""The agent's phrasings of the personal-setups requests (``queries-agent.jsonl``, checked by
eval/datasets/personal-setups/check_agent.py): the check passes on the shipped set, and fails on a spoiled
copy (a label changed from the original's, a multi-part tool name, a 5-word run of a tool description,
the same text twice), listing the line's id and the reason."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import DATASETS
from tests.support.scripts import load_script

DATASET = DATASETS / "personal-setups"
SETUP = "backend-dev"


@pytest.fixture(scope="module")
def check_agent() -> ModuleType:
    return load_script(DATASET / "check_agent.py", "personal_setups_check_agent")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _tools(folder: Path) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    return tools


def test_the_check_passes_on_the_shipped_set_with_a_row_per_setup(
    check_agent: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_agent.main([]) == 0
    out = capsys.readouterr().out
    setups = sorted(p.parent.name for p in DATASET.glob("*/queries-agent.jsonl"))
    assert len(setups) >= 6
    for name in setups:
        assert re.search(rf"^\| {name} \| (\d+) \| \1 \| \d+ \| 0 \|$", out, re.MULTILINE), out
    assert re.search(r"^\| all \| \d+ \| \d+ \| \d+ \| 0 \|$", out, re.MULTILINE), out


# -- spoiled copies: each returns the line's id and the reason the check must give -----------------


Spoiler = Callable[[Path, list[dict[str, Any]], ModuleType], tuple[str, str]]


def _label_changed(folder: Path, rows: list[dict[str, Any]], check: ModuleType) -> tuple[str, str]:
    row = next(r for r in rows if r["expected_tier"] == "activated")
    row["expected_tier"] = "not_found"
    return row["id"], "field 'expected_tier' differs from the original ('not_found' != 'activated')"


def _multipart_tool_name(folder: Path, rows: list[dict[str, Any]], check: ModuleType) -> tuple[str, str]:
    name = next(t["name"] for t in _tools(folder) if "_" in t["name"])
    rows[0]["query"] = f"call {name} for the billing repo"
    return rows[0]["id"], f"names the tool {name!r}"


def _description_run(folder: Path, rows: list[dict[str, Any]], check: ModuleType) -> tuple[str, str]:
    words = next(w for t in _tools(folder) if len(w := check.tokens(t.get("description") or "")) >= 8)
    run = " ".join(words[:5])
    rows[0]["query"] = f"please {run} soon"
    return rows[0]["id"], f"shares 5 words in a row with a tool description: {run!r}"


def _same_text_twice(folder: Path, rows: list[dict[str, Any]], check: ModuleType) -> tuple[str, str]:
    rows[1]["query"] = rows[0]["query"]
    return rows[1]["id"], f"same text as {rows[0]['id']}"


SPOILERS: dict[str, Spoiler] = {
    "a copied label changed": _label_changed,
    "a multi-part tool name": _multipart_tool_name,
    "a 5-word run of a tool description": _description_run,
    "the same text twice": _same_text_twice,
}


@pytest.mark.parametrize("spoiler", sorted(SPOILERS))
def test_the_check_fails_on_a_spoiled_copy_listing_the_id_and_reason(
    check_agent: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], spoiler: str
) -> None:
    folder = tmp_path / SETUP
    shutil.copytree(DATASET / SETUP, folder)
    rows = _rows(folder / "queries-agent.jsonl")
    line_id, reason = SPOILERS[spoiler](folder, rows, check_agent)
    _write_rows(folder / "queries-agent.jsonl", rows)

    code = check_agent.main(["--root", str(tmp_path)])

    out = capsys.readouterr().out
    assert code == 1
    problems = out.split("\n\n", 1)[1].splitlines()
    assert f"{line_id}: {reason}" in problems, out
    assert all(p.startswith(f"{line_id}: ") for p in problems), problems
    assert f"| {SETUP} | {len(rows)} | {len(rows)} |" in out
    assert out.splitlines()[2].endswith(f"| {len(problems)} |")
