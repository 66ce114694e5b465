"""The team-written requests of issue 41 (eval/datasets/team-requests, checked by its check.py): the check
passes on the shipped set; it fails on a spoiled copy (a tool not in the catalog, six words copied from a
tool's text, the same request twice, an unknown style), naming each line; and its export is a dataset
folder the eval harness reads, near requests unanswerable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from eval.quality.dataset import check_dataset_dir, load_queries
from tests.support.paths import DATASETS
from tests.support.scripts import load_script

ROOT = DATASETS / "team-requests"


@pytest.fixture(scope="module")
def check() -> ModuleType:
    return load_script(ROOT / "check.py", "team_requests_check")


def _line(**row: str) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"


def test_the_shipped_set_passes_its_check_and_covers_every_tool_of_the_demo_servers(
    check: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check.check(None) == 0
    out = capsys.readouterr().out
    assert "OK: no errors" in out
    assert "demo: " in out and "tools covered (3 people + 1 agent) 52/52" in out


def test_a_spoiled_copy_fails_naming_each_bad_line(
    check: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(ROOT / "demo", tmp_path / "demo")
    bad = tmp_path / "demo" / "requests-bad-b01.jsonl"
    bad.write_text(
        _line(id="bad-1", tool="time::no_such_tool", request="what's the hour in Lima", style="people")
        + _line(
            id="bad-2",
            tool="time::get_current_time",
            request="get current time in a specific timezone now",
            style="people",
        )
        + _line(
            id="bad-3", tool="time::get_current_time", request="WHAT'S the hour   in Lima?", style="people"
        )
        + _line(id="bad-4", tool="time::get_current_time", request="the hour in Oslo", style="shouting"),
        encoding="utf-8",
    )
    monkeypatch.setattr(check, "HERE", tmp_path)
    assert check.check("demo") == 1
    out = capsys.readouterr().out
    assert "demo/requests-bad-b01.jsonl:1: no tool 'time::no_such_tool'" in out
    assert "demo/requests-bad-b01.jsonl:2: copied from the catalog" in out
    assert "demo/requests-bad-b01.jsonl:3: the same request as demo/requests-bad-b01.jsonl:1" in out
    assert "demo/requests-bad-b01.jsonl:4: style 'shouting'" in out


def test_the_export_is_a_dataset_folder_with_near_requests_unanswerable(
    check: ModuleType, tmp_path: Path
) -> None:
    out = tmp_path / "demo-agent"
    assert check.export("demo", out, ("agent",), None, near=True) == 0
    queries = load_queries(check_dataset_dir(out).queries)
    near = [q for q in queries if not q.answerable]
    assert len(queries) - len(near) == 52  # one agent request a tool
    assert near and all(q.expected_tier == "not_found" for q in near)


def test_a_capped_export_gives_every_tool_its_first_request_before_any_its_second(
    check: ModuleType, tmp_path: Path
) -> None:
    people = ("people", "chat", "terse", "args", "typo", "everyday")
    assert check.export("demo", tmp_path / "all", people, None) == 0
    every = [q for q in load_queries(check_dataset_dir(tmp_path / "all").queries) if q.answerable]
    tools = {q.gold_tools[0] for q in every}
    assert len(every) > 2 * len(tools)  # the shipped set has several requests a tool

    assert check.export("demo", tmp_path / "one", people, None, per_tool=1) == 0
    one = [q for q in load_queries(check_dataset_dir(tmp_path / "one").queries) if q.answerable]
    assert sorted(q.gold_tools[0] for q in one) == sorted(tools)  # each tool once

    assert check.export("demo", tmp_path / "some", people, None, per_tool=2, most=len(tools) + 5) == 0
    some = [q for q in load_queries(check_dataset_dir(tmp_path / "some").queries) if q.answerable]
    assert len(some) == len(tools) + 5 and {q.gold_tools[0] for q in some} == tools
    assert {q.id for q in some} <= {q.id for q in every}
    again = tmp_path / "again"
    assert check.export("demo", again, people, None, per_tool=2, most=len(tools) + 5) == 0
    assert (again / "queries.jsonl").read_bytes() == (tmp_path / "some" / "queries.jsonl").read_bytes()


def test_cuts_are_small_catalogs_whose_requests_belong_to_their_servers(
    check: ModuleType, tmp_path: Path
) -> None:
    """What the confidence is fitted on: people's requests of the cut's own tools (answerable), near
    requests of its own servers and everyday requests (unanswerable); each family its own everyday
    slice."""
    assert check.cuts("toolalpaca", tmp_path / "ta", 10, 2, 41, 30, 12, 6) == 0
    folders = sorted((tmp_path / "ta").glob("k10-*"))
    assert [f.name for f in folders] == ["k10-1", "k10-2"]
    near_rows = {
        r["id"]: r
        for p in (ROOT / "toolalpaca").glob("near-*.jsonl")
        for r in map(json.loads, p.read_text("utf-8").splitlines())
    }
    for folder in folders:
        servers = {s["name"] for s in json.loads((folder / "servers.json").read_text("utf-8"))}
        assert len(servers) == 10
        assert {t["server"] for t in json.loads((folder / "tools.json").read_text("utf-8"))} == servers
        queries = load_queries(check_dataset_dir(folder).queries)
        answerable = [q for q in queries if q.gold_tool_groups]
        assert 0 < len(answerable) <= 30
        assert all(t.split("::")[0] in servers for q in answerable for g in q.gold_tool_groups for t in g)
        origins = [q.origin for q in queries if not q.gold_tool_groups]
        assert origins.count("everyday") == 6 and 0 < origins.count("near") <= 12
        for q in queries:
            if q.origin == "near":
                assert near_rows[q.id.split(":", 1)[1]]["server"] in servers
    slices = {f: {r["id"] for r in check.everyday_slice(f)} for f in check.SOURCES}
    assert sum(len(s) for s in slices.values()) == len(set().union(*slices.values())) == 2000
    assert check.cuts("everyday", tmp_path / "e", 10, 1, 41, 30, 12, 6) == 2
