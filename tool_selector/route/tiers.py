"""Stage 5, route: a resolution -> one of the design's four tiers, in its response shapes.

Two fitted probabilities decide (tool_selector/resolve/confidence.py): p1 = P(the top power is right), the
``confidence`` of every answer, and p3 = P(a right power is among the top three), never below p1.

p1 >= activated (0.85)                    activated         the top power is right with probability
                                                            >= 0.85: its tools, match type
otherwise p3 >= multiple_matches (0.7)    multiple_matches  the right power is very likely among the
                                                            top 3, not clearly first: call activate_power
otherwise p3 >= weak_matches (0.2)        weak_matches      some candidate fits in part, nothing clearly:
                                                            top 5, and which part fits (e.g. the words
                                                            meet but no tool does the action asked)
otherwise                                 not_found         at least 80 % sure nothing configured fits:
                                                            the available powers, and the need the request
                                                            states ("no configured power can book a
                                                            flight": need.py)

Every message names the candidates and the next call (``activate_power("...")`` or what to ask the user)
in one or two sentences; multiple_matches says how the first two differ (the tools only one has). A
message names powers and tools only: a server's own description, which may carry injected instructions,
stays in the answer's fields and never becomes the message's guidance. A multi-step request's steps are
added to the decision here too (steps.py): it leaves the route stage whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from tool_selector.config.confidence import TierThresholds
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import Decision, PowerSummary, Resolution, TierName, ToolSummary
from tool_selector.core.names import tool_of
from tool_selector.route import messages
from tool_selector.route.need import need_of
from tool_selector.route.steps import step_matches, with_known_parts, with_steps

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


def tools_hash(info: PowerInfo) -> str:
    """A power's tools as the agent is shown them (name, description, input schema), sorted by name."""
    return sha256_of(sorted(([t.name, t.description, t.input_schema] for t in info.tools), key=str))


def _twin(top: PowerInfo, others: list[PowerInfo]) -> PowerInfo | None:
    """A runner-up with exactly the top power's tools: the same server configured twice (two accounts,
    two projects), which no request's words can tell apart."""
    if not top.tools:
        return None
    mine = tools_hash(top)
    return next((o for o in others if o.tools and tools_hash(o) == mine), None)


def _difference(first: PowerInfo, second: PowerInfo) -> str:
    """How two powers differ, by the tools only one of them has (at most two names each)."""
    if first.tools and tools_hash(first) == tools_hash(second):
        return messages.twins(first.name, second.name)
    mine = [t.name for t in first.tools if t.name not in {u.name for u in second.tools}][:2]
    theirs = [t.name for t in second.tools if t.name not in {u.name for u in first.tools}][:2]
    if not mine or not theirs:
        return ""
    return messages.only_has(first.name, mine, second.name, theirs)


def _capability_gap(resolution: Resolution) -> bool:
    """The top power's words meet the request but none of its tools is said to do what it asks: the
    capability judge says its first tool cannot (judge.py), or, without a judge, the request's verb and
    object are not an action of the top tool."""
    features = resolution.features
    verdict = features.get("capability", 0.0)
    if verdict > 0.0:
        return verdict < 0.5
    return features.get("power_coverage", 0.0) > 0 and features.get("action_match", 0.0) < 0.5


def route(resolution: Resolution, powers: Mapping[str, PowerInfo], thresholds: TierThresholds) -> Decision:
    """The whole decision for a resolution: its tier and, for a multi-step request, its steps (steps.py);
    ``powers`` describes every configured power by name. Each message names the candidates and the next
    call in one or two sentences (a model reads it)."""
    resolution = with_known_parts(resolution, powers)
    decision = _tiered(resolution, powers, thresholds)
    return with_steps(decision, step_matches(resolution, decision))


def _tiered(resolution: Resolution, powers: Mapping[str, PowerInfo], thresholds: TierThresholds) -> Decision:
    ranked = [(p, powers[p.name]) for p in resolution.powers if p.name in powers]
    # a top power the directory no longer knows means a stale index: never promote the runner-up
    top_known = bool(resolution.powers) and resolution.powers[0].name in powers
    tier = tier_of(resolution.confidence, resolution.top3_confidence, thresholds) if ranked else "not_found"
    if tier == "activated" and not top_known:
        tier = "multiple_matches"
    if tier == "activated" and _twin(ranked[0][1], [info for _, info in ranked[1:3]]) is not None:
        tier = "multiple_matches"  # the words cannot choose between twins: the user must
    if tier == "activated":
        top, info = ranked[0]
        own = [t.name for t in info.tools]
        matched = [n for n in dict.fromkeys(tool_of(t) for t in top.tools) if n in own]  # best first
        ordered = matched + [n for n in own if n not in matched]
        by_name = {t.name: t for t in info.tools}
        return Decision(
            status="activated",
            power=info.name,
            match_type=top.match_type,
            tools=[by_name[n] for n in ordered],  # best match first
            message=messages.tier_activated(info.name, resolution.confidence, ordered),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    if tier == "multiple_matches":
        shown = ranked[:3]
        difference = _difference(shown[0][1], shown[1][1]) if len(shown) > 1 else ""
        return Decision(
            status="multiple_matches",
            matches=[_summary(info, p.score, p.tools) for p, info in shown],
            message=messages.tier_multiple(
                max(resolution.top3_confidence, resolution.confidence), [i.name for _, i in shown], difference
            ),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    if tier == "weak_matches":
        shown = ranked[:5]
        top_info = shown[0][1]
        return Decision(
            status="weak_matches",
            matches=[_summary(info, p.score, p.tools) for p, info in shown],
            message=messages.tier_weak(top_info.name, _capability_gap(resolution)),
            confidence=resolution.confidence,
            query=resolution.query,
        )
    listed = sorted(powers.values(), key=lambda i: i.name)[:MAX_AVAILABLE_POWERS]
    return Decision(
        status="not_found",
        available_powers=[_summary(info, None, []) for info in listed],
        message=messages.tier_not_found(len(powers), len(listed), need_of(resolution.query)),
        confidence=resolution.confidence,
        query=resolution.query,
    )
