"""The eval harness writes each step's ranked servers of a multi-step request (``parts``) and scores slot
recall from them: a tiny catalog indexed with the hashing embedder, the resolver's parts put in by hand
at the service layer until the resolver fills them itself (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval.quality.harness import run_eval
from tool_selector.config.settings import Settings
from tool_selector.core.models import QueryPart, Resolution
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
TWO_STEPS = "get the current time in Tokyo and then fetch the page https://example.com"


def _dataset(folder: Path) -> Path:
    folder.mkdir(parents=True)
    servers = [
        {"name": "time", "description": "current time in any time zone"},
        {"name": "fetch", "description": "fetch a web page by its URL"},
        {"name": "git", "description": "inspect a git repository"},
    ]
    tools = [
        {"server": "time", "name": "get_current_time", "description": "the current time in a time zone"},
        {"server": "fetch", "name": "fetch", "description": "fetch a URL and return its content"},
        {"server": "git", "name": "git_status", "description": "the working tree status"},
    ]
    queries = [
        {
            "id": "two",
            "query": TWO_STEPS,
            "gold_servers": ["fetch", "time"],
            "gold_tools": ["time::get_current_time", "fetch::fetch"],
            "gold_tool_groups": [["time::get_current_time"], ["fetch::fetch"]],
        },
        {
            "id": "one",
            "query": "what is the status of my git repository",
            "gold_servers": ["git"],
            "gold_tools": ["git::git_status"],
            "gold_tool_groups": [["git::git_status"]],
        },
    ]
    (folder / "servers.json").write_text(json.dumps(servers), encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    return folder


def test_the_harness_writes_each_steps_servers_and_scores_slot_recall_from_them(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Resolver.resolve

    def with_parts(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        resolution = original(self, query, terms, **kwargs)
        if query != TWO_STEPS:
            return resolution
        parts = [
            QueryPart(text="get the current time in Tokyo", powers=["time", "git"]),
            QueryPart(text="fetch the page https://example.com", powers=["git", "fetch"]),
        ]
        return resolution.model_copy(update={"parts": parts})

    monkeypatch.setattr(Resolver, "resolve", with_parts)
    settings = Settings(data_dir=tmp_path / "data", cache_dir=cache_dir)
    predictions = tmp_path / "p.jsonl"
    report, _ = run_eval(
        settings, _dataset(tmp_path / "steps"), predictions, embedder=HASHING, report_path=tmp_path / "r.md"
    )
    lines = {p["id"]: p for p in map(json.loads, predictions.read_text(encoding="utf-8").splitlines())}
    assert lines["two"]["parts"] == [["time", "git"], ["git", "fetch"]]
    assert lines["one"]["parts"] is None
    group = report.group("all")
    assert (group.multi_slot, group.multi_slot_split) == (1, 1.0)
    assert (group.slot_recall_at_1, group.slot_recall_at_3) == (0.5, 1.0)
    assert "| all | 1 | 1.000 | 0.500 | 1.000 |" in (tmp_path / "r.md").read_text(encoding="utf-8")
