"""``tool-selector lab conversation``'s pure parts, without a served gateway: the requests it reads from a
dataset, the call it takes from an answer's next step, how it judges that step (right tool, required
arguments filled, gold values matched) and the figures of its report (the context against the
all-tools baseline, the shares)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval.bench.conversation import Agent, Request, Turn, _next_call, _report, read_requests

SCHEMAS = {
    "git::git_log": {"type": "object", "required": ["repo_path"], "properties": {"repo_path": {}}},
    "git::git_status": {"type": "object", "required": ["repo_path"], "properties": {"repo_path": {}}},
    "time::get_current_time": {"type": "object", "required": ["timezone"]},
}


class _NoClient:
    """Stands in for the mcp Client: judging a step must not reach the gateway."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"judge_next used the client ({name})")


def _request(
    slot: list[str] | None = None, gold_arguments: dict[str, Any] | None = None, id_: str = "r-1"
) -> Request:
    slot = ["git::git_log"] if slot is None else slot
    return Request(
        id=id_,
        query="what changed lately in my project?",
        agent_query="show recent commits of the repository",
        tier="activated" if slot else "not_found",
        gold_servers=sorted({g.split("::")[0] for g in slot}),
        gold_slot=slot,
        gold_arguments=gold_arguments or {},
    )


def _judged(request: Request, step: tuple[str, str, dict[str, Any]] | None) -> Turn:
    turn = Turn(request.id)
    Agent(_NoClient(), "agent", SCHEMAS).judge_next(turn, request, step)  # type: ignore[arg-type]
    return turn


def test_read_requests_takes_the_first_gold_slot_and_falls_back_to_the_persons_words(tmp_path: Path) -> None:
    rows = [
        {
            "id": "dc-1-01",
            "query": "anything uncommitted?",
            "agent_query": "show working tree status",
            "expected_tier": "activated",
            "gold_servers": ["git"],
            "gold_tool_groups": [["git::git_status", "git::git_diff"], ["git::git_log"]],
            "gold_arguments": {"repo_path": "/tmp/tsdemo/project"},
        },
        {"id": "dc-1-02", "query": "order a pizza", "expected_tier": "not_found", "gold_servers": []},
    ]
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")

    first, second = read_requests(tmp_path)

    assert first == Request(
        id="dc-1-01",
        query="anything uncommitted?",
        agent_query="show working tree status",
        tier="activated",
        gold_servers=["git"],
        gold_slot=["git::git_status", "git::git_diff"],
        gold_arguments={"repo_path": "/tmp/tsdemo/project"},
    )
    assert first.answerable
    assert second.agent_query == "order a pizza"
    assert second.gold_slot == [] and second.gold_arguments == {}
    assert not second.answerable


def test_next_call_is_the_first_suggested_call_tool_step_with_its_arguments() -> None:
    answer = {
        "status": "activated",
        "suggested_next_actions": [
            "read the tools first",
            {"tool": "catalog_query", "arguments": {"power": "git"}},
            {"tool": "call_tool", "arguments": {"power": "git"}},  # names no tool: skipped
            {
                "tool": "call_tool",
                "arguments": {"power": "git", "tool": "git_log", "arguments": {"repo_path": "/p"}},
            },
            {"tool": "call_tool", "arguments": {"power": "git", "tool": "git_status"}},
        ],
    }

    assert _next_call(answer) == ("git", "git_log", {"repo_path": "/p"})


def test_next_call_reads_the_short_next_key_and_is_none_without_a_call() -> None:
    step = {"tool": "call_tool", "arguments": {"power": "time", "tool": "get_current_time"}}
    assert _next_call({"next": [step]}) == ("time", "get_current_time", {})
    assert _next_call({"suggested_next_actions": [{"tool": "activate_power"}]}) is None
    assert _next_call({"status": "not_found"}) is None


def test_a_next_step_naming_a_gold_tool_with_the_gold_values_is_judged_right_filled_and_matched() -> None:
    request = _request(gold_arguments={"repo_path": "/tmp/tsdemo/project", "max_count": 3})
    # the same path in another case with a trailing slash is the same value
    turn = _judged(request, ("git", "git_log", {"repo_path": "/TMP/tsdemo/project/", "max_count": 3}))
    assert (turn.next_tool, turn.next_right, turn.required_filled, turn.gold_values_matched) == (
        "git::git_log",
        True,
        True,
        True,
    )


def test_a_next_step_with_a_gold_value_missing_or_different_is_not_matched() -> None:
    request = _request(gold_arguments={"repo_path": "/tmp/tsdemo/project", "max_count": 3})
    assert (
        _judged(request, ("git", "git_log", {"repo_path": "/tmp/tsdemo/project"})).gold_values_matched
        is False
    )
    different = _judged(request, ("git", "git_log", {"repo_path": "/tmp/other", "max_count": 3}))
    assert different.gold_values_matched is False
    assert different.required_filled is True


def test_a_next_step_leaving_a_required_argument_empty_is_not_filled() -> None:
    turn = _judged(_request(), ("git", "git_log", {"repo_path": ""}))
    assert turn.next_right is True
    assert turn.required_filled is False
    assert turn.gold_values_matched is None  # the request gives no values to match


def test_a_next_step_naming_another_tool_is_wrong_and_its_values_are_not_judged() -> None:
    request = _request(gold_arguments={"repo_path": "/p"})
    turn = _judged(request, ("git", "git_status", {"repo_path": "/p"}))
    assert (turn.next_tool, turn.next_right, turn.required_filled) == ("git::git_status", False, True)
    assert turn.gold_values_matched is None


def test_an_answer_without_a_next_step_is_judged_wrong_and_unfilled() -> None:
    turn = _judged(_request(), None)
    assert (turn.next_tool, turn.next_right, turn.required_filled) == (None, False, False)


def _turn(request: Request, status: str, context: int, **fields: Any) -> Turn:
    return Turn(request.id, status=status, context_tokens=context, **fields)


def test_the_report_sets_the_context_against_all_tools_loaded_for_every_call() -> None:
    requests = [
        _request(["git::git_log"], id_="a"),
        _request(["git::git_status"], id_="b"),
        _request(["time::get_current_time"], id_="c"),
        _request([], id_="d"),
    ]
    turns = [
        _turn(requests[0], "activated", 30, answer_tokens=[40], next_right=True, required_filled=True,
              gold_values_matched=True, called="git::git_log"),
        _turn(requests[1], "activated", 20, answer_tokens=[30], next_right=False, required_filled=True,
              called="git::git_status"),
        _turn(requests[2], "multiple_matches", 15, answer_tokens=[20, 25], already_active_tokens=[25]),
        _turn(requests[3], "not_found", 5, answer_tokens=[10], call_error=True),
    ]  # fmt: skip

    report = _report(requests, turns, [], 100, phrasing="agent", beside=False)

    # three requests it can serve cost two model calls each with every tool loaded, the fourth one
    assert report["all_tools_baseline_tokens"] == 100 * 2 * 3 + 100
    assert report["context_tokens"] == 70
    assert report["context_vs_all_tools"] == round(70 / 700, 3)
    assert report["answers"] == {
        "count": 5,
        "total": 125,
        "p50": 25,
        "max": 40,
        "already_active_max": 25,
        "already_active_count": 1,
    }
    assert report["statuses"] == {"activated": 2, "multiple_matches": 1, "not_found": 1}
    # the next step is judged on the activations of requests it can serve; filled and matched only
    # where it named a right tool
    assert report["next_step"] == {
        "activations": 2,
        "right_tool": 0.5,
        "required_filled": 1.0,
        "gold_values_matched": 1.0,
    }
    assert report["served"] == round(2 / 3, 3)
    assert report["unanswerable"] == {"count": 1, "activated": 0, "not_found": 1}
    assert report["calls_failed"] == 1
    assert report["tools_listed_at_end"] == {"count": 0, "tokens": 0}
    assert [t["id"] for t in report["turns"]] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("status", ["weak_matches", "not_found"])
def test_the_report_leaves_a_share_with_nothing_to_judge_empty(status: str) -> None:
    request = _request(["git::git_log"])
    report = _report([request], [_turn(request, status, 10)], [], 0, phrasing="user", beside=True)
    assert report["context_vs_all_tools"] is None  # no tools to load: no baseline
    assert report["next_step"]["right_tool"] is None
    assert report["next_step"]["required_filled"] is None
    assert report["served"] == 0.0


def test_a_tool_called_before_that_left_the_list_is_recalled_with_the_values_passed_before() -> None:
    """As the helper playing the agent did: a tool it called without an error earlier in the conversation,
    no longer listed (gateway.max_listed), is called again through call_tool, not asked for; and a call it
    makes without asking carries the required value it passed that power before (the project's path)."""
    from mcp import types

    agent = Agent(_NoClient(), "user", SCHEMAS)  # type: ignore[arg-type]
    listed = types.Tool(name="git__git_status", input_schema={"type": "object"})
    agent.tools = [listed]
    agent.called = {("git", "git_log")}
    agent.passed = {"git": {"repo_path": "/tmp/tsdemo/project", "max_count": 3}}
    assert agent.direct_hit(_request(["git::git_status"])) == ("git", "git_status", "direct")
    assert agent.direct_hit(_request(["git::git_log"])) == ("git", "git_log", "recalled")
    assert agent.direct_hit(_request(["time::get_current_time"])) is None  # never called: resolve_intent
    assert agent.own_arguments("git", "git_log", {"max_count": 5}) == {
        "repo_path": "/tmp/tsdemo/project",
        "max_count": 5,
    }
    assert agent.own_arguments("time", "get_current_time", {}) == {}
