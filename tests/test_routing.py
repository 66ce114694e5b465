"""The router: confidence -> one of four tiers, each in the design's response shape."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tool_selector.models import MatchType, PowerCandidate, Resolution, ToolSummary
from tool_selector.routing import MAX_AVAILABLE_POWERS, PowerInfo, route, tier_of
from tool_selector.settings import Settings, TierThresholds

DEFAULTS = TierThresholds()


def _info(name: str, tools: int = 2) -> PowerInfo:
    return PowerInfo(
        name=name,
        description=f"Original description of {name}",
        keywords=[f"{name.lower()}-keyword"],
        tools=[
            ToolSummary(name=f"tool_{i}", description=f"{name} tool {i}, as the server wrote it")
            for i in range(tools)
        ],
    )


POWERS = {name: _info(name) for name in ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf")}


def _resolution(confidence: float, names: list[str] | None = None) -> Resolution:
    names = list(POWERS) if names is None else names
    return Resolution(
        query="do the thing",
        mode="hybrid",
        tools=[],
        powers=[
            PowerCandidate(
                name=name,
                score=round(1.0 - 0.1 * rank, 3),
                match_type=MatchType.HYBRID if rank % 2 == 0 else MatchType.SEMANTIC,
                tools=[f"{name}::tool_{i}" for i in range(7)],
            )
            for rank, name in enumerate(names)
        ],
        confidence=confidence,
    )


# --------------------------------------------------------------------------- tiers


@pytest.mark.parametrize(
    ("confidence", "tier"),
    [
        (1.0, "activated"),
        (0.85, "activated"),
        (0.8499, "multiple_matches"),
        (0.5, "multiple_matches"),
        (0.4999, "weak_matches"),
        (0.3, "weak_matches"),
        (0.2999, "not_found"),
        (0.0, "not_found"),
    ],
)
def test_default_thresholds_are_inclusive_lower_bounds(confidence: float, tier: str) -> None:
    assert tier_of(confidence, DEFAULTS) == tier
    assert route(_resolution(confidence), POWERS, DEFAULTS).status == tier


def test_the_default_thresholds_are_the_designs() -> None:
    assert Settings().thresholds == TierThresholds(activated=0.85, multiple_matches=0.5, weak_matches=0.3)


@pytest.mark.parametrize(
    ("confidence", "tier"),
    [
        (0.95, "activated"),
        (0.9499, "multiple_matches"),
        (0.7, "multiple_matches"),
        (0.6999, "weak_matches"),
        (0.1, "weak_matches"),
        (0.0999, "not_found"),
    ],
)
def test_custom_thresholds_move_the_boundaries(confidence: float, tier: str) -> None:
    custom = TierThresholds(activated=0.95, multiple_matches=0.7, weak_matches=0.1)
    assert tier_of(confidence, custom) == tier
    assert route(_resolution(confidence), POWERS, custom).status == tier


@pytest.mark.parametrize(
    "values",
    [
        {"activated": 0.4, "multiple_matches": 0.5, "weak_matches": 0.3},
        {"activated": 0.85, "multiple_matches": 0.2, "weak_matches": 0.3},
        {"activated": 1.2},
        {"weak_matches": -0.1},
    ],
)
def test_thresholds_out_of_order_are_refused(values: dict[str, float]) -> None:
    with pytest.raises(ValidationError, match="0 <= weak_matches <= multiple_matches <= activated <= 1"):
        TierThresholds(**values)


def test_thresholds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_THRESHOLDS__ACTIVATED", "0.9")
    assert Settings().thresholds.activated == 0.9


# --------------------------------------------------------------------------- shapes


def test_activated_carries_the_power_its_match_type_and_its_original_tools() -> None:
    decision = route(_resolution(0.9, ["Charlie", "Alpha"]), POWERS, DEFAULTS)
    assert decision.status == "activated"
    assert decision.power == "Charlie"
    assert decision.match_type == MatchType.HYBRID
    assert decision.tools == POWERS["Charlie"].tools
    assert decision.tools is not None
    assert decision.tools[1].description == "Charlie tool 1, as the server wrote it"
    assert decision.confidence == 0.9
    assert decision.query == "do the thing"
    assert "Charlie" in decision.message
    assert decision.matches is None
    assert decision.available_powers is None


def test_multiple_matches_lists_the_top_three_and_points_to_activate_power() -> None:
    decision = route(_resolution(0.6), POWERS, DEFAULTS)
    assert decision.status == "multiple_matches"
    assert decision.matches is not None
    assert [m.power for m in decision.matches] == ["Alpha", "Bravo", "Charlie"]
    first = decision.matches[0]
    assert first.description == "Original description of Alpha"
    assert first.keywords == ["alpha-keyword"]
    assert first.score == 1.0
    assert first.tools == [f"tool_{i}" for i in range(5)]  # names, not ids; five at most
    assert "activate_power" in decision.message
    assert decision.power is None
    assert decision.tools is None


def test_weak_matches_lists_the_top_five_and_asks_to_clarify() -> None:
    decision = route(_resolution(0.35), POWERS, DEFAULTS)
    assert decision.status == "weak_matches"
    assert decision.matches is not None
    assert [m.power for m in decision.matches] == ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]
    assert [m.score for m in decision.matches] == [1.0, 0.9, 0.8, 0.7, 0.6]
    assert "clarify" in decision.message


def test_not_found_lists_the_available_powers() -> None:
    decision = route(_resolution(0.1), POWERS, DEFAULTS)
    assert decision.status == "not_found"
    assert decision.available_powers is not None
    assert [p.power for p in decision.available_powers] == sorted(POWERS)
    assert decision.available_powers[0].description == "Original description of Alpha"
    assert all(p.score is None and p.tools == [] for p in decision.available_powers)
    assert decision.matches is None
    assert "cannot be done" in decision.message


def test_not_found_caps_the_list_at_twenty_and_says_how_many_are_configured() -> None:
    many = {f"Power {i:02d}": _info(f"Power {i:02d}", tools=0) for i in range(25)}
    decision = route(_resolution(0.05, ["Power 07"]), many, DEFAULTS)
    assert decision.status == "not_found"
    assert decision.available_powers is not None
    assert MAX_AVAILABLE_POWERS == 20
    assert [p.power for p in decision.available_powers] == [f"Power {i:02d}" for i in range(20)]
    assert "25 powers are configured" in decision.message
    assert "20 are listed" in decision.message


def test_a_resolution_without_powers_is_not_found_whatever_its_confidence() -> None:
    decision = route(_resolution(0.99, []), POWERS, DEFAULTS)
    assert decision.status == "not_found"
    assert decision.confidence == 0.99
    assert decision.available_powers is not None
    assert len(decision.available_powers) == len(POWERS)


@pytest.mark.parametrize("confidence", [0.95, 0.6, 0.35])
def test_a_resolution_naming_only_powers_unknown_to_the_directory_is_not_found(confidence: float) -> None:
    """A stale index can rank a server the catalog no longer has; that is no match, and no crash."""
    decision = route(_resolution(confidence, ["Removed Server"]), POWERS, DEFAULTS)
    assert decision.status == "not_found"
    assert decision.available_powers is not None
    assert [p.power for p in decision.available_powers] == sorted(POWERS)
