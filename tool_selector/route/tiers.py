"""Stage 5, route: a resolution -> one of the design's four tiers, in its response shapes.

Two fitted probabilities decide (tool_selector/resolve/confidence.py): p1 = P(the top power is right), the
``confidence`` of every answer, and p3 = P(a right power is among the top three), never below p1.

p1 >= activated (0.85)                    activated         the top power is right with probability
                                                            >= 0.85: its tools, match type
otherwise p3 >= multiple_matches (0.7)    multiple_matches  the right power is very likely among the
                                                            top 3, not clearly first: call activate_power
otherwise p3 >= weak_matches (0.1)        weak_matches      something may fit, nothing clearly: top 5;
                                                            ask the user to clarify
otherwise                                 not_found         at least 90 % sure nothing configured fits:
                                                            the available powers
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from tool_selector.config.settings import TierThresholds
from tool_selector.core.models import Decision, PowerSummary, Resolution, TierName, ToolSummary
from tool_selector.core.names import tool_of

MAX_AVAILABLE_POWERS = 20


class PowerInfo(BaseModel):
    """What the router may show of a power: original descriptions only, never enriched text."""

    name: str
    description: str
    keywords: list[str] = Field(default_factory=list)
    tools: list[ToolSummary] = Field(default_factory=list)


def tier_of(top: float, top3: float, thresholds: TierThresholds) -> TierName:
    """The tier for P(top power right) and P(a right power in the top three)."""
    top3 = max(top3, top)
    if top >= thresholds.activated:
        return "activated"
    if top3 >= thresholds.multiple_matches:
        return "multiple_matches"
    if top3 >= thresholds.weak_matches:
        return "weak_matches"
    return "not_found"


def _summary(info: PowerInfo, score: float | None, tools: list[str]) -> PowerSummary:
    return PowerSummary(
        power=info.name,
        description=info.description,
        keywords=info.keywords,
        score=score,
        tools=[tool_of(t) for t in tools[:5]],
    )


def route(resolution: Resolution, powers: Mapping[str, PowerInfo], thresholds: TierThresholds) -> Decision:
    """The decision for a resolution; ``powers`` describes every configured power by name."""
    ranked = [(p, powers[p.name]) for p in resolution.powers if p.name in powers]
    # a top power the directory no longer knows means a stale index: never promote the runner-up
    top_known = bool(resolution.powers) and resolution.powers[0].name in powers
    tier = tier_of(resolution.confidence, resolution.top3_confidence, thresholds) if ranked else "not_found"
    if tier == "activated" and not top_known:
        tier = "multiple_matches"
    if tier == "activated":
        top, info = ranked[0]
        return Decision(
            status="activated",
            power=info.name,
            match_type=top.match_type,
            tools=info.tools,
            message=(
                f"Activated '{info.name}' ({resolution.confidence:.0%} sure). "
                "Its tools are listed; call one of them."
            ),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    if tier == "multiple_matches":
        return Decision(
            status="multiple_matches",
            matches=[_summary(info, p.score, p.tools) for p, info in ranked[:3]],
            message=(
                f"The right power is very likely one of these {min(len(ranked), 3)} "
                f"({max(resolution.top3_confidence, resolution.confidence):.0%} sure), but not clearly "
                "the first. Pick the one that fits and call activate_power(name) with its name."
            ),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    if tier == "weak_matches":
        return Decision(
            status="weak_matches",
            matches=[_summary(info, p.score, p.tools) for p, info in ranked[:5]],
            message=(
                "Only weak matches. Ask the user to clarify what they want to do, or rephrase the "
                "request with the action and the thing it acts on, then call resolve_intent again."
            ),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    listed = sorted(powers.values(), key=lambda i: i.name)[:MAX_AVAILABLE_POWERS]
    more = len(powers) - len(listed)
    return Decision(
        status="not_found",
        available_powers=[_summary(info, None, []) for info in listed],
        message=(
            "No configured power fits this request. "
            + (f"{len(powers)} powers are configured; {len(listed)} are listed. " if more > 0 else "")
            + "Tell the user it cannot be done with the configured tools, or rephrase and try again."
        ),
        confidence=resolution.confidence,
        query=resolution.query,
    )
