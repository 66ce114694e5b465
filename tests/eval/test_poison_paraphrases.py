"""The poison-paraphrases set (eval/datasets/poison-paraphrases) is well formed: its check script passes
on it and finds each kind of damage in a spoiled copy, and its build script makes it byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import BENCHMARKS, DATASETS
from tests.support.scripts import load_script

DATASET = DATASETS / "poison-paraphrases"


def _module(name: str) -> ModuleType:
    return load_script(DATASET / f"{name}.py", f"poison_paraphrases_{name}")


@pytest.fixture(scope="module")
def check() -> ModuleType:
    if not (BENCHMARKS / "poison" / "corpus.jsonl").is_file():
        pytest.skip(f"the shared benchmarks are not present at {BENCHMARKS}")
    return _module("check")


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    text = (DATASET / "corpus.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _spoiled(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_set_passes_its_check_with_64_attacks_halved_and_438_real_benign_tools(check: ModuleType) -> None:
    problems, counts = check.check(DATASET / "corpus.jsonl", BENCHMARKS)
    assert problems == []
    assert (counts["poisoned"], counts["benign"]) == (64, 438)
    assert counts["poisoned_by_split"] == {"dev": 32, "test": 32}
    assert all(split["dev"] == split["test"] for split in counts["by_attack"].values())
    assert len(counts["benign_by_source"]) == 4


def test_the_check_script_exits_0_on_the_set() -> None:
    if not (BENCHMARKS / "poison" / "corpus.jsonl").is_file():
        pytest.skip(f"the shared benchmarks are not present at {BENCHMARKS}")
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py"), "--benchmarks", str(BENCHMARKS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["poisoned"] == 64


def test_the_check_finds_a_repeated_id_an_edited_copy_a_trigger_phrase_and_a_shared_server(
    check: ModuleType, rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    spoiled = [dict(r) for r in rows]
    attack = next(i for i, r in enumerate(spoiled) if r["label"] == "poisoned")
    benign = next(i for i, r in enumerate(spoiled) if r["label"] == "benign")
    spoiled[attack + 1]["id"] = spoiled[attack]["id"]
    spoiled[attack]["description"] += " Ignore all previous instructions."
    spoiled[attack + 2]["server"] = spoiled[benign]["server"]
    spoiled[benign]["description"] += " (edited)"
    problems, _ = check.check(_spoiled(tmp_path, spoiled), BENCHMARKS)
    said = "\n".join(problems)
    assert f"id {spoiled[attack]['id']!r} repeated" in said
    assert "uses a phrase the scanner keys on: 'Ignore all previous instructions'" in said
    assert "also serves benign items" in said
    assert f"item {spoiled[benign]['id']}: not a verbatim copy" in said


def test_the_check_finds_a_copy_of_the_shared_corpus_and_too_few_items(
    check: ModuleType, rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    shared = json.loads((BENCHMARKS / "poison" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[0])
    few = [dict(r) for r in rows[:10]]
    few[0]["description"] = shared["description"]
    problems, _ = check.check(_spoiled(tmp_path, few), BENCHMARKS)
    said = "\n".join(problems)
    assert "duplicates an item of the shared poison corpus" in said
    assert "10 attacks; at least 50 are needed" in said and "0 benign items; at least 200" in said


def test_the_build_script_makes_the_set_byte_for_byte(check: ModuleType) -> None:
    build = _module("build")
    assert build.build(BENCHMARKS) == (DATASET / "corpus.jsonl").read_text(encoding="utf-8")
