"""The steps an answer shows for a multi-step request (tool_selector/route/steps.py), as pure functions,
and the route stage adding them to the decision it makes."""

from __future__ import annotations

from tool_selector.config.settings import TierThresholds
from tool_selector.core.models import (
    Decision,
    MatchType,
    PowerCandidate,
    QueryPart,
    Resolution,
    StepMatch,
    ToolSummary,
)
from tool_selector.route.steps import known_parts, step_matches, steps_sentence, with_steps
from tool_selector.route.tiers import PowerInfo, route


def _resolution(parts: list[QueryPart]) -> Resolution:
    return Resolution(query="q", mode="hybrid", tools=[], powers=[], confidence=0.5, parts=parts)


def _decision(status: str = "multiple_matches") -> Decision:
    return Decision.model_validate(
        {"status": status, "confidence": 0.5, "query": "q", "message": "Pick one."}
    )


def test_a_request_of_one_part_or_none_has_no_steps_and_its_message_is_unchanged() -> None:
    for parts in ([], [QueryPart(text="only", powers=["a"])]):
        assert step_matches(_resolution(parts), _decision()) == []
    assert with_steps(_decision(), []).message == "Pick one."


def test_each_step_shows_what_its_part_ranked_in_order_and_the_decision_carries_the_steps() -> None:
    part = QueryPart(text="one", powers=["a", "b", "c"], tools=["a::1", "a::2", "b::1"])
    steps = step_matches(_resolution([part, QueryPart(text="two")]), _decision())
    assert steps[0] == StepMatch(step="one", powers=["a", "b", "c"], tools=["a::1", "a::2", "b::1"])
    assert steps[1] == StepMatch(step="two")
    decided = with_steps(_decision(), steps)
    assert decided.parts == steps and decided.model_dump()["parts"][1] == {
        "step": "two",
        "powers": [],
        "tools": [],
    }
    assert "parts" not in _decision().model_dump()  # a one-step answer has no parts at all


def test_known_parts_keep_only_the_powers_and_tools_of_the_directory() -> None:
    directory = {"a": PowerInfo(name="a", description="", tools=[ToolSummary(name="t", description="")])}
    (part,) = known_parts([QueryPart(text="x", powers=["z", "a"], tools=["a::t", "a::u", "z::t"])], directory)
    assert (part.powers, part.tools) == (["a"], ["a::t"])


def test_the_sentence_names_each_steps_best_power_and_says_when_none_fits() -> None:
    steps = [StepMatch(step="one", powers=["a", "b"]), StepMatch(step="two")]
    sentence = steps_sentence(steps, "multiple_matches")
    assert "This request has 2 steps (see parts)" in sentence
    assert "step 1: 'a'; step 2: no power fits" in sentence and "activate_power" in sentence
    weak = steps_sentence(steps, "weak_matches")
    assert "none matched surely" in weak and "activate_power" not in weak
    assert with_steps(_decision(), steps).message == f"Pick one. {sentence}"


def test_the_route_stage_adds_the_steps_to_its_decision_with_only_the_powers_the_directory_holds() -> None:
    tools = [ToolSummary(name="t", description="")]
    directory = {name: PowerInfo(name=name, description="", tools=tools) for name in ("a", "b")}
    candidates = [PowerCandidate(name=name, score=0.5, match_type=MatchType.HYBRID) for name in ("a", "b")]
    parts = [
        QueryPart(text="one", powers=["gone", "a"], tools=["gone::t", "a::t"]),
        QueryPart(text="two", powers=["b"]),
    ]
    resolution = Resolution(
        query="q",
        mode="hybrid",
        tools=[],
        powers=candidates,
        confidence=0.5,
        top3_confidence=0.9,
        parts=parts,
    )
    decision = route(resolution, directory, TierThresholds())
    assert decision.status == "multiple_matches"
    assert decision.parts == [
        StepMatch(step="one", powers=["a"], tools=["a::t"]),
        StepMatch(step="two", powers=["b"]),
    ]
    assert decision.message.endswith(f" {steps_sentence(decision.parts, 'multiple_matches')}")
    one_step = resolution.model_copy(update={"parts": parts[:1]})
    assert route(one_step, directory, TierThresholds()).parts is None
