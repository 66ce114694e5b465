"""The argument-fill set (eval/datasets/argument-fill) is well formed (its check script passes, and fails on a
spoiled copy naming the line and the reason), and ``tool-selector lab fill-arguments`` scores the filler
on it: per example, per parameter, missing's precision; a wrong label shows among the errors."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from routes.cli import app
from tests.support.paths import DATASETS
from tests.support.scripts import load_script

DATASET = DATASETS / "argument-fill"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    return load_script(DATASET / "check.py", "argument_fill_check")


def _rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _write(folder: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (folder / "examples.jsonl").write_text(text, encoding="utf-8")


def _row(rows: list[dict[str, Any]], row_id: str) -> dict[str, Any]:
    return next(r for r in rows if r["id"] == row_id)


def test_the_check_passes_on_the_shipped_set_of_at_least_150_examples_in_both_phrasings(
    check: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check.main([]) == 0
    out = capsys.readouterr().out
    found = re.search(r"^(\d+) examples over \d+ tools", out, re.MULTILINE)
    assert found is not None and int(found.group(1)) >= 150, out
    phrasings = {r.get("phrasing", "user") for r in _rows(DATASET)}
    assert phrasings == {"user", "agent"}
    assert sum(1 for r in _rows(DATASET) if r["missing"]) >= 20


Spoiler = Callable[[list[dict[str, Any]]], tuple[str, str]]


def _not_a_parameter(rows: list[dict[str, Any]]) -> tuple[str, str]:
    _row(rows, "time-01")["expected"]["zone"] = "Asia/Tokyo"
    return "time-01", "expected zone is not a parameter of time::get_current_time"


def _missing_not_required(rows: list[dict[str, Any]]) -> tuple[str, str]:
    _row(rows, "git-02")["missing"].append("max_count")
    return "git-02", "missing max_count is not a required parameter"


def _required_unaccounted(rows: list[dict[str, Any]]) -> tuple[str, str]:
    _row(rows, "time-05")["missing"] = []
    return "time-05", "required ['timezone'] neither expected nor missing"


def _wrong_type(rows: list[dict[str, Any]]) -> tuple[str, str]:
    _row(rows, "git-02")["expected"]["max_count"] = "5"
    return "git-02", "expected max_count: '5' is not of type ['integer']"


def _outside_the_enum(rows: list[dict[str, Any]]) -> tuple[str, str]:
    _row(rows, "fs-14")["expected"]["sortBy"] = "date"
    return "fs-14", "expected sortBy: 'date' is not one of ['name', 'size']"


def _id_twice(rows: list[dict[str, Any]]) -> tuple[str, str]:
    rows[1]["id"] = rows[0]["id"]
    return rows[0]["id"], "id used 2 times"


SPOILERS: dict[str, Spoiler] = {
    "an expected key that is no parameter": _not_a_parameter,
    "a missing parameter that is not required": _missing_not_required,
    "a required parameter neither expected nor missing": _required_unaccounted,
    "a value of the wrong JSON type": _wrong_type,
    "a value outside the enum": _outside_the_enum,
    "an id twice": _id_twice,
}


@pytest.mark.parametrize("spoiler", sorted(SPOILERS))
def test_the_check_fails_on_a_spoiled_copy_naming_the_line_and_the_reason(
    check: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], spoiler: str
) -> None:
    folder = tmp_path / "argument-fill"
    shutil.copytree(DATASET, folder)
    rows = _rows(folder)
    line_id, reason = SPOILERS[spoiler](rows)
    _write(folder, rows)

    assert check.main(["--root", str(folder)]) == 1
    assert f"{line_id}: {reason}" in capsys.readouterr().err


def test_the_lab_command_scores_the_shipped_set_per_example_per_parameter_and_missing() -> None:
    result = CliRunner().invoke(app, ["lab", "fill-arguments", str(DATASET)])

    assert result.exit_code == 0, result.output
    total = re.search(r"^\| all \| (\d+) \| ([\d.]+) \((\d+)/\1\) \|", result.output, re.MULTILINE)
    assert total is not None, result.output
    assert int(total.group(1)) == len(_rows(DATASET))
    assert float(total.group(2)) >= 0.95  # in-sample: the filler was tuned on this set
    for row in ("| agent |", "| user |", "| time zone |", "| path |", "| count |", "missing: precision"):
        assert row in result.output


def test_a_wrong_label_is_listed_among_the_errors_and_an_unknown_tool_is_a_clear_error(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "set"
    shutil.copytree(DATASET, folder)
    rows = _rows(folder)
    _row(rows, "time-01")["expected"] = {"timezone": "Asia/Seoul"}
    _write(folder, rows)

    result = CliRunner().invoke(app, ["lab", "fill-arguments", str(folder), "--errors"])

    assert result.exit_code == 0, result.output
    assert (
        '- time-01 [time::get_current_time] "what time is it in Tokyo right now?"'
        in result.output.replace("'", '"')
    )
    assert 'got      {"timezone": "Asia/Tokyo"}' in result.output

    rows[0]["tool"] = "nowhere::nothing"
    _write(folder, rows)
    unknown = CliRunner().invoke(app, ["lab", "fill-arguments", str(folder)])
    assert unknown.exit_code != 0
    assert "nowhere::nothing" in unknown.output and "--tools" in unknown.output
