"""Slot recall of multi-step requests (issue 16): the pure figure in eval/quality/ranking.py, its
aggregation over
the multi-slot queries of each group, and how the console and Markdown reports show it."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from eval.quality.dataset import Query
from eval.quality.metrics import Prediction, ServerScore, ToolScore, evaluate
from eval.quality.ranking import server_of, server_recall_at_k, slot_recall_at_k
from eval.quality.report import format_console, format_markdown

# --------------------------------------------------------------------------- slot recall@k, pure


def test_slot_recall_of_a_request_that_did_not_split_is_server_recall_over_its_whole_ranking() -> None:
    groups = [["time::now"], ["fetch::get"]]
    servers = ["time", "git", "fetch"]
    for k in (1, 2, 3):
        assert slot_recall_at_k(groups, servers, None, k) == server_recall_at_k(groups, servers, k)
    assert slot_recall_at_k(groups, servers, None, 1) == 0.5
    assert slot_recall_at_k(groups, servers, None, 3) == 1.0


def test_an_empty_parts_list_counts_as_a_request_that_did_not_split() -> None:
    groups = [["time::now"], ["fetch::get"]]
    assert slot_recall_at_k(groups, ["time", "fetch"], [], 1) == 0.5
    assert slot_recall_at_k(groups, ["time", "fetch"], [], 2) == 1.0


def test_slot_recall_with_parts_counts_the_union_of_each_parts_top_k_powers() -> None:
    groups = [["time::now"], ["fetch::get"]]
    parts = [["time", "git", "memory"], ["git", "fetch", "time"]]
    assert slot_recall_at_k(groups, ["git"], parts, 1) == 0.5  # time (part 1), git (part 2)
    assert slot_recall_at_k(groups, ["git"], parts, 2) == 1.0  # fetch is second in part 2
    # with parts the whole request's ranking is not read, even where it would fill a slot
    assert slot_recall_at_k(groups, ["fetch", "time"], [["git"], ["memory"]], 1) == 0.0


def test_a_slot_of_several_interchangeable_servers_is_filled_by_any_of_them_in_any_part() -> None:
    groups = [["Brave::search", "FetchSERP::search"], ["time::now"]]
    assert slot_recall_at_k(groups, [], [["FetchSERP"], ["time"]], 1) == 1.0
    assert slot_recall_at_k(groups, [], [["time"], ["Brave"]], 1) == 1.0
    assert slot_recall_at_k(groups, [], [["time"], ["git"]], 1) == 0.5


def test_a_server_filling_two_slots_fills_both_from_one_part() -> None:
    groups = [["git::status"], ["git::diff"], ["fetch::get"]]
    assert slot_recall_at_k(groups, [], [["git"], ["memory"]], 1) == pytest.approx(2 / 3)


def test_slot_recall_rejects_an_unanswerable_query_and_a_k_below_one() -> None:
    with pytest.raises(ValueError, match="no gold slots"):
        slot_recall_at_k([], ["a"], [["a"], ["b"]], 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        slot_recall_at_k([["a::x"], ["b::y"]], ["a"], [["a"], ["b"]], 0)


# --------------------------------------------------------------------------- aggregation


def _query(qid: str, groups: list[list[str]]) -> Query:
    tools = sorted({t for slot in groups for t in slot})
    return Query(
        id=qid,
        query=f"text of {qid}",
        gold_servers=sorted({server_of(t) for t in tools}),
        gold_tools=tools,
        gold_tool_groups=groups,
    )


def _pred(
    qid: str, tools: Sequence[str], *, parts: list[list[str]] | None = None, dataset: str | None = None
) -> Prediction:
    servers = list(dict.fromkeys(server_of(t) for t in tools))
    return Prediction(
        id=qid,
        servers=[ServerScore(name=s, score=1.0 - i / 10) for i, s in enumerate(servers)],
        tools=[ToolScore(id=t, score=1.0 - i / 10) for i, t in enumerate(tools)],
        confidence=0.5,
        tier="multiple_matches",
        latency_ms=5.0,
        dataset=dataset,
        parts=parts,
    )


def _mixed() -> tuple[list[Query], list[Prediction]]:
    """Two multi-slot requests (one split, one not), a one-slot request and an unanswerable one."""
    queries = [
        _query("split", [["time::now"], ["fetch::get"]]),
        _query("whole", [["time::now"], ["git::diff"]]),
        _query("single", [["git::diff"]]),
        _query("none", []),
    ]
    predictions = [
        _pred("split", ["time::now", "git::diff"], parts=[["time", "git"], ["git", "fetch"]], dataset="a"),
        _pred("whole", ["time::now", "memory::read", "fetch::get", "git::diff"], dataset="b"),
        _pred("single", ["fetch::get"], dataset="a"),
        _pred("none", ["time::now"], dataset="b"),
    ]
    return queries, predictions


def test_multi_slot_figures_cover_only_answerable_queries_with_two_or_more_slots() -> None:
    report = evaluate(*_mixed())
    everything = report.group("all")
    assert everything.multi_slot == 2
    assert everything.multi_slot_split == 0.5
    assert everything.slot_recall_at_1 == pytest.approx((0.5 + 0.5) / 2)  # split: time; whole: time
    assert everything.slot_recall_at_3 == pytest.approx((1.0 + 0.5) / 2)  # whole: git is 4th
    assert everything.multi_slot_tool_recall_at_5 == pytest.approx((0.5 + 1.0) / 2)
    assert everything.multi_slot_server_recall_at_3 == pytest.approx((0.5 + 0.5) / 2)
    scores = {s.id: s for s in report.per_query}
    assert (scores["split"].slots, scores["split"].split) == (2, True)
    assert scores["single"].slot_recall_at_1 is None and scores["none"].slot_recall_at_3 is None


def test_each_dataset_gets_its_own_multi_slot_figures() -> None:
    report = evaluate(*_mixed())
    a, b = report.group("a"), report.group("b")
    assert (a.multi_slot, a.multi_slot_split, a.slot_recall_at_3) == (1, 1.0, 1.0)
    assert (b.multi_slot, b.multi_slot_split, b.slot_recall_at_3) == (1, 0.0, 0.5)


def test_a_group_without_multi_slot_queries_has_no_slot_figures() -> None:
    report = evaluate([_query("q", [["a::x"]])], [_pred("q", ["a::x"])])
    group = report.group("all")
    assert group.multi_slot == 0
    assert group.multi_slot_split is None and group.slot_recall_at_1 is None
    assert group.multi_slot_tool_recall_at_5 is None and group.multi_slot_server_recall_at_3 is None


def test_a_prediction_line_written_before_parts_existed_still_parses_as_not_split() -> None:
    line = json.dumps(
        {"id": "q", "servers": [], "tools": [], "confidence": 0.1, "tier": "not_found", "latency_ms": 1.0}
    )
    assert Prediction.model_validate_json(line).parts is None


# --------------------------------------------------------------------------- rendering


def test_the_console_shows_slot_recall_per_group_holding_multi_slot_queries() -> None:
    text = format_console(evaluate(*_mixed()))
    section = text.split("multi-step requests (answerable, two or more slots)", 1)[1].splitlines()
    header = "group  multi-slot n  split  slot R@1  slot R@3  tool R@5  srv R@3"
    assert section[1].split() == header.split()
    rows = {line.split()[0]: line.split()[1:] for line in section[3:]}
    assert rows["all"] == ["2", "0.500", "0.500", "0.750", "0.750", "0.500"]
    assert rows["a"] == ["1", "1.000", "0.500", "1.000", "0.500", "0.500"]
    assert set(rows) == {"all", "a", "b"}


def test_the_console_says_when_no_query_has_two_or_more_slots() -> None:
    text = format_console(evaluate([_query("q", [["a::x"]])], [_pred("q", ["a::x"])]))
    assert "multi-step requests: none (no answerable query has two or more slots)" in text


def test_the_markdown_report_has_a_multi_step_section_and_defines_slot_recall() -> None:
    text = format_markdown(evaluate(*_mixed()), title="t", settings_summary={})
    section = text.split("## Multi-step requests", 1)[1].split("## Calibration", 1)[0]
    assert "| group | multi-slot n | split | slot R@1 | slot R@3 | tool R@5 | srv R@3 |" in section
    assert "| all | 2 | 0.500 | 0.500 | 0.750 | 0.750 | 0.500 |" in section
    assert "**slot recall@k**" in text.split("## Definitions", 1)[1]
