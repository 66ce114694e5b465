"""The personal-setups set (eval/datasets/personal-setups) is well formed: its check script passes on it,
the eval loader reads every setup, its build script makes it byte for byte, and the check catches a
spoiled copy (a gold id outside the catalog, an edited tool, a request copying a tool description, a
plain request with two gold servers, a missing unanswerable kind)."""

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

from eval.quality.dataset import check_dataset_dir, dataset_folders, load_queries
from tests.support.paths import BENCHMARKS, DATASETS, ROOT
from tests.support.scripts import load_script

DATASET = DATASETS / "personal-setups"
SETUP_NAMES = [
    "backend-dev",
    "data-platform",
    "grad-student",
    "home-finance",
    "product-manager",
    "shop-owner",
]


def _module(name: str) -> ModuleType:
    return load_script(DATASET / f"{name}.py", f"personal_setups_{name}")


def _need_benchmarks() -> None:
    if not (BENCHMARKS / "msc_bench_dev" / "tools.json").is_file():
        pytest.skip(f"the shared benchmarks are not present at {BENCHMARKS}")


@pytest.fixture(scope="module")
def check() -> ModuleType:
    _need_benchmarks()
    return _module("check")


def test_the_set_passes_its_check_with_six_setups(check: ModuleType) -> None:
    problems, summaries = check.check(DATASET, BENCHMARKS)
    assert problems == []
    assert sorted(summaries) == SETUP_NAMES
    for summary in summaries.values():
        assert 12 <= summary["servers"] <= 20
        assert summary["requests"] >= 80
        assert (
            summary["plain"] + summary["everyday"] + summary["near_domain"] + summary["ambiguous"]
            == (summary["requests"])
        )


def test_the_check_script_exits_0_and_prints_a_row_per_setup() -> None:
    _need_benchmarks()
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py")], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    for name in SETUP_NAMES:
        assert f"| {name} |" in done.stdout


def test_every_setup_loads_with_the_eval_loader_and_carries_expected_tiers() -> None:
    folders = dataset_folders(DATASET)
    assert [f.name for f in folders] == SETUP_NAMES
    for folder in folders:
        queries = load_queries(check_dataset_dir(folder).queries)
        assert len(queries) >= 80
        assert {q.expected_tier for q in queries} == {"activated", "not_found", "multiple_matches"}
        assert all(q.answerable == (q.expected_tier != "not_found") for q in queries)


def test_the_build_script_makes_the_files_byte_for_byte(tmp_path: Path) -> None:
    _need_benchmarks()
    build = _module("build")
    assert build.main(["--benchmarks", str(BENCHMARKS), "--out", str(tmp_path)]) == 0
    for name in SETUP_NAMES:
        for file in ("servers.json", "tools.json", "queries.jsonl"):
            assert (tmp_path / name / file).read_bytes() == (DATASET / name / file).read_bytes(), (name, file)


# -- spoiled copies ----------------------------------------------------------------------------------


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _first(rows: list[dict[str, Any]], category: str) -> dict[str, Any]:
    return next(r for r in rows if r["category"] == category)


def _unknown_gold_id(folder: Path) -> None:
    rows = _rows(folder / "queries.jsonl")
    row = _first(rows, "plain")
    server = row["gold_servers"][0]
    row["gold_tool_groups"][0].append(f"{server}::no_such_tool")
    row["gold_tools"] = sorted({t for slot in row["gold_tool_groups"] for t in slot})
    _write_rows(folder / "queries.jsonl", rows)


def _edited_tool(folder: Path) -> None:
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    tools[0]["description"] += " Now better."
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")


def _copied_description(folder: Path) -> None:
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    description = next(t["description"] for t in tools if len(t["description"].split()) >= 12)
    rows = _rows(folder / "queries.jsonl")
    _first(rows, "plain")["query"] = "please " + description
    _write_rows(folder / "queries.jsonl", rows)


def _plain_with_two_servers(folder: Path) -> None:
    rows = _rows(folder / "queries.jsonl")
    ambiguous = _first(rows, "ambiguous")
    plain = _first(rows, "plain")
    for key in ("gold_servers", "gold_tools", "gold_tool_groups"):
        plain[key] = ambiguous[key]
    _write_rows(folder / "queries.jsonl", rows)


def _unanswerable_without_kind(folder: Path) -> None:
    rows = _rows(folder / "queries.jsonl")
    del _first(rows, "unanswerable")["kind"]
    _write_rows(folder / "queries.jsonl", rows)


SPOILERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "gold id outside the catalog": (_unknown_gold_id, "not in the setup's tools.json"),
    "tool edited": (_edited_tool, "differs from the catalog"),
    "request copies a tool description": (_copied_description, "with a tool description"),
    "plain with two gold servers": (_plain_with_two_servers, "exactly one gold server"),
    "unanswerable without kind": (_unanswerable_without_kind, "needs kind"),
}


@pytest.mark.parametrize("spoiler", sorted(SPOILERS))
def test_the_check_finds_a_spoiled_copy(check: ModuleType, tmp_path: Path, spoiler: str) -> None:
    for name in SETUP_NAMES:
        shutil.copytree(DATASET / name, tmp_path / name)
    spoil, expected = SPOILERS[spoiler]
    spoil(tmp_path / "backend-dev")
    problems, _ = check.check(tmp_path, BENCHMARKS)
    assert problems, spoiler
    assert all(p.startswith("backend-dev") for p in problems), problems
    assert any(expected in p for p in problems), problems


def test_the_check_script_exits_1_on_a_spoiled_copy(tmp_path: Path) -> None:
    _need_benchmarks()
    for name in SETUP_NAMES[:5]:
        shutil.copytree(DATASET / name, tmp_path / name)
    done = subprocess.run(
        [sys.executable, str(DATASET / "check.py"), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert "5 setups, expected at least 6" in done.stderr


def test_the_second_phrasing_passes_its_check_and_catches_a_copied_request(tmp_path: Path) -> None:
    """queries-rephrased.jsonl (REPHRASED.md): its check passes on the set, and fails on a copy whose
    first rephrasing repeats its original's words."""
    script = DATASET / "check_rephrased.py"
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"| {name} | " in done.stdout for name in SETUP_NAMES)
    for name in SETUP_NAMES:
        shutil.copytree(DATASET / name, tmp_path / name)
    target = tmp_path / SETUP_NAMES[0] / "queries-rephrased.jsonl"
    lines = target.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    original = json.loads((tmp_path / SETUP_NAMES[0] / "queries.jsonl").read_text().splitlines()[0])
    lines[0] = json.dumps(first | {"query": original["query"] + " please"})
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    broken = subprocess.run(
        [sys.executable, str(script), "--root", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert broken.returncode != 0 and first["id"] in broken.stdout + broken.stderr
