"""The shadowing attacks (eval/datasets/shadowing) are well formed: the check script passes on them and
finds each kind of damage in a spoiled copy."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import DATASETS
from tests.support.scripts import load_script

DATASET = DATASETS / "shadowing"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    return load_script(DATASET / "check.py", "shadowing_check")


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATASET / "attacks.jsonl").read_text(encoding="utf-8").splitlines()]


def test_the_attacks_pass_their_check_with_every_kind_and_split(check: ModuleType) -> None:
    problems, counts = check.check()
    assert problems == []
    assert counts["attacks"] == 59 and counts["by_split"] == {"dev": 22, "fresh": 16, "test": 21}
    assert set(counts["by_kind"]) == {"claim", "schema-claim", "foreign", "copy", "paraphrase"}


def test_the_check_script_exits_0_on_the_attacks() -> None:
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["attacks"] == 59


def _duplicate(rows: list[dict[str, Any]]) -> None:
    rows.append({**rows[0], "id": "shadow-99"})


def _unknown_target(rows: list[dict[str, Any]]) -> None:
    rows[0]["target"] = "git::git_blame"


def _demo_server(rows: list[dict[str, Any]]) -> None:
    rows[0]["server"] = "fetch"


def _loose_copy(rows: list[dict[str, Any]]) -> None:
    copy = next(r for r in rows if r["kind"] == "copy" and r["notes"].startswith("verbatim"))
    copy["description"] = copy["description"][5:]


def _trigger(rows: list[dict[str, Any]]) -> None:
    claim = next(r for r in rows if r["kind"] == "claim")
    claim["description"] += " It supersedes the other one."


def _missing_field(rows: list[dict[str, Any]]) -> None:
    del rows[0]["notes"]


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (_duplicate, "2 attacks share this"),
        (_unknown_target, "is no tool of"),
        (_demo_server, "is a demo server"),
        (_loose_copy, "word for word"),
        (_trigger, "leans on the scanner's words"),
        (_missing_field, "the fields must be exactly"),
    ],
)
def test_the_check_finds_each_kind_of_damage(
    check: ModuleType, tmp_path: Path, spoil: Callable[[list[dict[str, Any]]], None], said: str
) -> None:
    rows = _rows()
    spoil(rows)
    spoiled = tmp_path / "attacks.jsonl"
    spoiled.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    problems, _ = check.check(spoiled)
    assert any(said in p for p in problems), problems
