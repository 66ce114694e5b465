"""The gateway's not_found answer (issue 41): short, the powers it can run, the need the request states
(so the agent can tell the user what is missing rather than only that something is), and what to do
with a request no tool is for (advice, small talk: the agent answers it)."""

from __future__ import annotations

import pytest

from services.gateway.answer import Facts, resolve_answer
from tool_selector.core.models import Decision

THEN = (
    " If it needs no tool (advice, conversation), answer it yourself; else tell the user it cannot be done "
    "here."
)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("book me a flight to Rome", 'No configured power can do "book a flight".'),
        ("what's on my calendar tomorrow?", "No configured power does this."),
    ],
)
def test_not_found_names_the_need_and_lists_what_runs_here(query: str, message: str) -> None:
    decision = Decision(status="not_found", message="(the router's)", confidence=0.0312, query=query)
    answer = resolve_answer(decision, Facts(runnable=["time", "memory", "fetch"], may_call=True))
    assert answer.status == "not_found"
    assert answer.message == message + THEN
    assert answer.available == ["fetch", "memory", "time"]
    assert answer.confidence == 0.03


def test_a_weak_match_whose_tools_cannot_do_it_does_not_send_the_agent_to_ask_a_clear_user() -> None:
    """Playing the agent, a helper read "none of its tools does what it asks. Ask the user what exactly they
    want done" for clear requests no tool here does: the answer now says to tell the user, unless unclear."""
    from tool_selector.core.models import PowerSummary

    match = PowerSummary(power="git", description="git", keywords=[], score=0.4, tools=["git_commit"])
    decision = Decision(
        status="weak_matches",
        message="'git' shares words with the request, but none of its tools is said to do what it asks. ...",
        confidence=0.31,
        query="push my branch to the remote",
        matches=[match],
    )
    answer = resolve_answer(decision, Facts(runnable=["git"], may_call=True))
    assert answer.message.startswith(
        "Nothing here fits surely; 'git' shares words with it, but none of its tools"
    )
    assert (
        "If the request is clear, tell the user it cannot be done here; else ask what they want."
        in answer.message
    )


def test_a_weak_match_whose_tools_cannot_do_it_lists_no_candidates_and_a_partial_one_does() -> None:
    """When the judge says the closest power's tools cannot do it, its tools (and the next powers') would
    only tempt the agent to call one, and every later model call carries them: the answer names the
    closest power in its message and lists none. A weak match without that verdict keeps its candidates."""
    from tool_selector.core.models import PowerSummary

    matches = [
        PowerSummary(power="git", description="git", keywords=[], score=0.4, tools=["git_commit", "git_log"]),
        PowerSummary(power="fetch", description="fetch", keywords=[], score=0.3, tools=["fetch"]),
    ]
    facts = Facts(runnable=["git", "fetch"], may_call=True)
    gap = Decision(
        status="weak_matches",
        message="'git' shares words with the request, but none of its tools is said to do what it asks. ...",
        confidence=0.31,
        query="push my branch to the remote",
        matches=matches,
    )
    unsure = gap.model_copy(update={"message": "Nothing fits surely; the closest is 'git'."})
    assert "matches" not in resolve_answer(gap, facts).as_json()
    assert [m["power"] for m in resolve_answer(unsure, facts).as_json()["matches"]] == ["git", "fetch"]
