"""The careful-attacks set (eval/datasets/careful-attacks) is well formed: its check script passes on it
and finds each kind of damage in a spoiled copy; the second labelling agrees on every label."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import BENCHMARKS, DATASETS
from tests.support.scripts import load_script

DATASET = DATASETS / "careful-attacks"


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (DATASET / name).read_text(encoding="utf-8").splitlines() if x.strip()]


@dataclass
class Checked:
    returncode: int
    stdout: str


@pytest.fixture(scope="module")
def check() -> ModuleType:
    if not (BENCHMARKS / "msc_bench_dev" / "tools.json").is_file():
        pytest.skip(f"the shared benchmarks are not present at {BENCHMARKS}")
    return load_script(DATASET / "check.py", "careful_attacks_check")


def _check(check: ModuleType, *args: str) -> Checked:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = check.main([*args, "--benchmarks", str(BENCHMARKS)])
    return Checked(code, out.getvalue())


def test_the_check_script_runs_on_its_own_and_exits_0_on_the_set() -> None:
    if not (BENCHMARKS / "msc_bench_dev" / "tools.json").is_file():
        pytest.skip(f"the shared benchmarks are not present at {BENCHMARKS}")
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py"), "--benchmarks", str(BENCHMARKS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout


def test_the_set_passes_its_check_with_at_least_60_attacks_of_each_kind_and_600_benign_items(
    check: ModuleType,
) -> None:
    done = _check(check)
    assert done.returncode == 0, done.stdout
    assert "2372 items checked, 0 problems" in done.stdout
    attacks = _rows("attacks.jsonl")
    kinds = check.KINDS
    assert len(kinds) == 8
    assert {k: sum(r["kind"] == k for r in attacks) >= 60 for k in kinds} == dict.fromkeys(kinds, True)
    assert len(_rows("benign.jsonl")) >= 600


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda r: {**r, "kind": "phishing"}, "kind 'phishing' not in"),
        (lambda r: {**r, "input_schema": {"properties": {}}}, "input_schema must be a JSON-Schema object"),
        (lambda r: {k: v for k, v in r.items() if k != "notes"}, "missing fields ['notes']"),
        (
            lambda r: {
                **r,
                "description": "Change the name of a Heroku application or resolve naming conflicts by "
                "providing the current app name and a unique new name.",
            },
            "copies a real tool text",
        ),
    ],
)
def test_the_check_finds_each_kind_of_damage_in_a_new_batch(
    check: ModuleType, tmp_path: Path, spoil: Any, said: str
) -> None:
    batch = tmp_path / "batch.jsonl"
    first = _rows("attacks.jsonl")[0]
    batch.write_text(json.dumps(spoil({**first, "id": "new-001"})) + "\n", encoding="utf-8")
    done = _check(check, str(batch))
    assert done.returncode == 1
    assert said in done.stdout


def test_a_batch_that_copies_an_item_of_the_set_is_a_near_copy_even_in_another_script(
    check: ModuleType, tmp_path: Path
) -> None:
    attacks = _rows("attacks.jsonl")
    cjk = next(r for r in attacks if r["language"] in ("ja", "zh", "ko"))
    batch = tmp_path / "batch.jsonl"
    batch.write_text(json.dumps({**cjk, "id": "new-002"}, ensure_ascii=False) + "\n", encoding="utf-8")
    done = _check(check, str(batch), "--against", str(DATASET))
    assert done.returncode == 1
    assert "same text as attacks.jsonl" in done.stdout


def test_the_blind_second_labellings_agree_on_every_label() -> None:
    done = subprocess.run(
        [sys.executable, str(DATASET / "relabel" / "compare.py")], capture_output=True, text=True, check=True
    )
    said = [line for line in done.stdout.splitlines() if line.startswith("label (")]
    assert said == [
        "label (poisoned or benign): 160 of 160 agree",
        "label (poisoned or benign): 96 of 96 agree",
        "label (poisoned or benign): 80 of 80 agree",
    ]
    rounds = (
        (DATASET / "relabel", 160),
        (DATASET / "relabel" / "round2", 96),
        (DATASET / "relabel" / "round3", 80),
    )
    for folder, size in rounds:
        sample = [json.loads(x) for x in (folder / "sample.jsonl").read_text("utf-8").splitlines()]
        assert len(sample) == size
        for item in sample:  # nothing gives the label away: no label, kind or note, an id that says nothing
            assert set(item) <= {"id", "server", "tool_name", "title", "description", "input_schema",
                                 "server_instructions", "annotations"}  # fmt: skip
            assert not item["id"].startswith(("atk", "ben"))


def test_the_check_reads_words_in_any_script_and_cuts_cjk_into_characters(check: ModuleType) -> None:
    assert check.words("Привет, мир: send 2 notes") == ["привет", "мир", "send", "2", "notes"]
    assert check.words("日本語のメモ") == list("日本語のメモ")
