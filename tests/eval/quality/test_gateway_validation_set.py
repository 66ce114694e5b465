"""The gateway validation set (eval/datasets/gateway-demo) is well formed and matches the demo servers."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from eval.quality.dataset import Query, check_dataset_dir, load_queries
from tests.support.paths import EXAMPLES, GATEWAY_DEMO
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.config.servers import load_servers

DATASET = GATEWAY_DEMO
DEMO_SERVERS = EXAMPLES / "demo-servers.json"

EXPECTED_TIER = {
    "activate": "activated",
    "ambiguous": "multiple_matches",
    "weak": "weak_matches",
    "none": "not_found",
}
COMPOSITION = {"activate": 20, "ambiguous": 20, "weak": 20, "none": 10}


@pytest.fixture(scope="module")
def queries() -> list[Query]:
    return load_queries(check_dataset_dir(DATASET).queries)


@pytest.fixture(scope="module")
def raw_lines() -> list[dict[str, Any]]:
    text = (DATASET / "queries.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tool_ids() -> set[str]:
    return {f"{t['server']}::{t['name']}" for t in json.loads((DATASET / "tools.json").read_text("utf-8"))}


def _servers(slot: list[str]) -> set[str]:
    return {tool_id.rsplit("::", 1)[0] for tool_id in slot}


def test_the_set_loads_with_the_eval_loader_and_every_query_carries_an_expected_tier(
    queries: list[Query],
) -> None:
    assert len(queries) >= 70
    assert all(q.expected_tier is not None for q in queries)


def test_the_categories_are_20_activate_20_ambiguous_20_weak_and_10_none(
    raw_lines: list[dict[str, Any]],
) -> None:
    assert Counter(line["category"] for line in raw_lines) == COMPOSITION


def test_each_query_expects_the_tier_of_its_category_unless_its_label_was_revised(
    raw_lines: list[dict[str, Any]],
) -> None:
    wrong = [
        line["id"]
        for line in raw_lines
        if line.get("expected_tier_before", line["expected_tier"]) != EXPECTED_TIER[line["category"]]
    ]
    assert wrong == []


def test_every_revised_label_says_why_and_is_listed_in_the_readme(raw_lines: list[dict[str, Any]]) -> None:
    """Issue 13 re-read the labels against the stated tier meanings; a changed label keeps its old tier
    and its reason on the line, and the dataset README lists it."""
    readme = (DATASET / "README.md").read_text(encoding="utf-8")
    revised = [line for line in raw_lines if "expected_tier_before" in line]
    assert len(revised) == 12
    for line in revised:
        assert line["revised"], line["id"]
        assert line["expected_tier"] == "activated", line["id"]
        assert f"`{line['id']}`" in readme, line["id"]


def test_every_gold_tool_id_exists_in_the_catalog(queries: list[Query], tool_ids: set[str]) -> None:
    unknown = {
        (q.id, tool_id)
        for q in queries
        for tool_id in [*q.gold_tools, *(t for slot in q.gold_tool_groups for t in slot)]
        if tool_id not in tool_ids
    }
    assert unknown == set()


def test_gold_servers_and_gold_tools_are_those_of_the_slots(queries: list[Query]) -> None:
    for q in queries:
        slot_tools = {t for slot in q.gold_tool_groups for t in slot}
        assert set(q.gold_tools) == slot_tools, q.id
        assert set(q.gold_servers) == _servers(sorted(slot_tools)), q.id


def test_activate_queries_name_one_server_and_ambiguous_ones_at_least_two(
    queries: list[Query], raw_lines: list[dict[str, Any]]
) -> None:
    category = {line["id"]: line["category"] for line in raw_lines}
    for q in queries:
        if category[q.id] == "activate":
            assert len(q.gold_tool_groups) == 1 and len(_servers(q.gold_tool_groups[0])) == 1, q.id
        elif category[q.id] == "ambiguous":
            assert any(len(_servers(slot)) >= 2 for slot in q.gold_tool_groups), q.id
        elif category[q.id] == "none":
            assert not q.answerable, q.id


def test_every_catalog_server_is_listed_in_servers_json_and_configured_in_the_demo_file() -> None:
    servers, tools = read_catalog_dir(DATASET)  # also rejects a tool whose server is not in servers.json
    catalog_names = {s.name for s in servers}
    configured = set(load_servers(DEMO_SERVERS).mcpServers)
    assert {t.server for t in tools} <= catalog_names
    assert catalog_names == configured
