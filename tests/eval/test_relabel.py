"""The second labeller's script (eval/datasets/relabel.py): ``compare`` prints the agreement on the tier
and on the servers and every disagreement with both labels; ``sample`` draws from every tier of every
setup and never writes a label."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import DATASETS
from tests.support.scripts import load_script

LABELS = ("expected_tier", "gold_servers", "gold_tools", "gold_tool_groups", "category", "kind")


@pytest.fixture(scope="module")
def relabel() -> ModuleType:
    return load_script(DATASETS / "relabel.py", "datasets_relabel")


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _line(id_: str, query: str, tier: str, servers: list[str]) -> dict[str, Any]:
    category = {"activated": "plain", "multiple_matches": "ambiguous", "not_found": "unanswerable"}[tier]
    return {
        "id": id_,
        "query": query,
        "gold_servers": servers,
        "gold_tools": [f"{s}::do" for s in servers],
        "gold_tool_groups": [[f"{s}::do" for s in servers]] if servers else [],
        "expected_tier": tier,
        "category": category,
    }


def test_compare_prints_the_agreement_and_each_disagreement_with_both_labels(
    relabel: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "small"
    _write_rows(
        dataset / "queries.jsonl",
        [
            _line("s-1", "what time is it in Lisbon", "activated", ["time"]),
            _line("s-2", "remember that Ana likes tea", "multiple_matches", ["filesystem", "memory"]),
            _line("s-3", "order me a pizza", "not_found", []),
            _line("s-4", "show the git log", "activated", ["git"]),
        ],
    )
    _write_rows(
        tmp_path / "labels.jsonl",
        [
            {"id": "s-1", "expected_tier": "activated", "gold_servers": ["time"]},
            {"id": "s-2", "expected_tier": "activated", "gold_servers": ["memory"], "why": "memory is it"},
            {"id": "s-3", "expected_tier": "not_found", "gold_servers": []},
            {"id": "s-4", "expected_tier": "activated", "gold_servers": ["git", "filesystem"]},
        ],
    )

    code = relabel.main(["compare", str(dataset), "queries.jsonl", str(tmp_path / "labels.jsonl")])

    assert code == 0  # a disagreement is a finding, not a failure
    assert capsys.readouterr().out == (
        "relabelled 4 lines of queries.jsonl\n"
        "tier agreement     3/4 = 0.750\n"
        "servers agreement  2/4 = 0.500\n"
        "\n2 disagreements:\n"
        "s-2: 'remember that Ana likes tea'\n"
        "    first:  multiple_matches ['filesystem', 'memory']\n"
        "    second: activated ['memory']\n"
        "    why:    memory is it\n"
        "s-4: 'show the git log'\n"
        "    first:  activated ['git']\n"
        "    second: activated ['git', 'filesystem']\n"
    )


def test_compare_names_a_label_whose_line_is_not_in_the_file(
    relabel: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_rows(tmp_path / "small" / "queries.jsonl", [_line("s-1", "time in Oslo", "activated", ["time"])])
    _write_rows(tmp_path / "labels.jsonl", [{"id": "s-9", "expected_tier": "activated"}])

    relabel.main(["compare", str(tmp_path / "small"), "queries.jsonl", str(tmp_path / "labels.jsonl")])

    assert capsys.readouterr().out.splitlines()[0] == "s-9: no such line in queries.jsonl"


def test_sample_draws_every_tier_of_every_setup_and_never_writes_a_label(
    relabel: ModuleType, tmp_path: Path
) -> None:
    tiers = {"activated": ["time"], "multiple_matches": ["time", "clock"], "not_found": []}
    for setup in ("alpha", "beta"):
        _write_rows(tmp_path / setup / "servers.json", [])
        rows = [
            _line(f"{setup}-{tier}-{n}", f"{setup} request {n} for {tier}", tier, servers)
            for tier, servers in tiers.items()
            for n in range(4)
        ]
        _write_rows(tmp_path / setup / "queries.jsonl", rows)
    out = tmp_path / "sample.jsonl"

    code = relabel.main(
        ["sample", str(tmp_path), "queries.jsonl", "--per-setup", "3", "--seed", "7", "--out", str(out)]
    )

    assert code == 0
    drawn = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(set(d) == {"id", "setup", "query"} for d in drawn), drawn
    text = out.read_text(encoding="utf-8")
    assert not any(label in text for label in LABELS)
    assert {(d["setup"], d["id"].split("-")[1]) for d in drawn} == {
        (setup, tier) for setup in ("alpha", "beta") for tier in tiers
    }
    assert all(d["id"].startswith(d["setup"] + "-") for d in drawn)
