"""The capability judge's training examples (eval/relevance/judge.py, issue 41): built from the team's
requests only, right pairs from each request's gold tool, wrong ones from near and everyday requests and
sibling tools; a family left out and the setups' servers leave nothing behind."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np

from eval.relevance.judge import FAMILIES, build_examples, everyday_of, setup_servers
from tests.support.paths import DATASETS
from tool_selector.search.text import split_identifiers

TEAM = DATASETS / "team-requests"


def _embed(texts: list[str]) -> np.ndarray:
    """A stand-in for the relevance model: a fixed unit vector per text."""
    rows = [
        np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:16].astype(float) for t in texts
    ]
    out = np.asarray(rows) - 127.5
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _lines(pattern: str) -> list[dict[str, str]]:
    return [
        json.loads(line) for p in sorted((TEAM / "demo").glob(pattern)) for line in p.read_text().splitlines()
    ]


def test_the_demo_familys_examples_are_its_requests_near_requests_and_everyday_slice(tmp_path: Path) -> None:
    examples = build_examples(Path("unused"), _embed, families=["demo"])
    kinds = Counter(e.kind for e in examples)
    assert kinds["right"] == len(_lines("requests-*.jsonl"))
    near = _lines("near-*.jsonl")
    assert len(near) <= kinds["near"] <= 2 * len(near)  # the two closest tools of its own server
    assert kinds["everyday"] == len(everyday_of("demo"))
    assert 0 < kinds["sibling"] < kinds["right"]
    assert all((e.label == 1) == (e.kind == "right") for e in examples)
    tools = {
        f"{t['server']}::{t['name']}"
        for t in json.loads((DATASETS / "gateway-demo" / "tools.json").read_text())
    }
    gold = {r["request"]: r["tool"] for r in _lines("requests-*.jsonl")}
    for e in examples:
        if e.kind == "near":
            assert e.text.split(" (")[1].startswith(f"{e.server})")  # a tool of the near request's own server
    for e in examples:
        if e.kind == "right":  # the request beside its own gold tool's text
            server, name = gold[e.request].split("::")
            assert (
                gold[e.request] in tools and e.server == server and e.text.startswith(split_identifiers(name))
            )


def test_left_out_servers_and_families_leave_no_example_behind() -> None:
    banned = {"memory", "git"}
    examples = build_examples(Path("unused"), _embed, families=["demo"], banned_servers=banned)
    assert examples and not {e.server for e in examples} & banned
    assert all("(memory)" not in e.text and "(git)" not in e.text for e in examples)
    slices = [{r["id"] for r in everyday_of(f)} for f in FAMILIES]
    assert sum(map(len, slices)) == len(set().union(*slices)) == 2000  # each family its own everyday lines
    assert len(setup_servers()) >= 30  # every server of the six personal setups
