"""The one typed answer an agent reads from the gateway, built in one place from the decision and the
gateway's facts.

    GatewayAnswer      status, confidence, power, one or two sentences (tool_selector/route/messages.py),
                       the best few tools as one line each ``name(param: type, opt?: type): what it does``,
                       the candidates (one approved line each), and ``next``: the calls to make, the
                       first one with the arguments the request gave
    resolve_answer     resolve_intent's answer (``Facts``: what the gateway knows beyond the decision)
    power_answer       activate_power's answer

Compact by design: an answer never carries a schema (the tool line names each parameter and its type; the
client's ``tools/list`` and ``catalog_query`` have the definitions), a power already active gets a short
answer, a tool whose line the session read (or whose complete call ``next`` gives) is not shown. Only
approved text is shown: tool descriptions come from the pinned definitions, a server's description from
its approved record, one line of each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp import types
from pydantic import BaseModel, PrivateAttr

from tool_selector.core.models import Decision, PowerSummary, StepMatch
from tool_selector.route import messages
from tool_selector.route.need import need_of
from tool_selector.route.steps import steps_sentence

TOOLS_SHOWN = 3  # the best few tools an activated answer shows: the best, and those close to it
CLOSE = 0.8  # a tool within this share of the best tool's score is shown beside it
POWER_TOOLS_SHOWN = 10  # activate_power's answer, when no request of the session named its tools
LINE_CHARS = 100  # one line of a tool's description
CANDIDATE_CHARS = 70  # one line of what a candidate power does
MATCHES_SHOWN = 3  # candidates a multiple_matches or weak_matches answer shows
AVAILABLE_SHOWN = 20  # power names a not_found answer lists
STEERING_CHARS = 300  # the operator's steering, once per session and power


class NextCall(BaseModel):
    """A call the agent can make next: the gateway tool and its arguments, and why (when the message does
    not say it)."""

    tool: str
    arguments: dict[str, Any]
    why: str | None = None


class Candidate(BaseModel):
    power: str
    does: str | None = None
    tools: list[str]
    runnable: bool | None = None  # shown only when False: it cannot be started here


class Step(BaseModel):
    step: str
    powers: list[str]
    tools: list[str]


class GatewayAnswer(BaseModel):
    """What resolve_intent, activate_power and deactivate_power answer (``as_json`` leaves out what is
    not set)."""

    status: str
    power: str | None = None
    confidence: float | None = None
    message: str
    ready: bool | None = None
    match_type: str | None = None  # "remembered": the session's principal confirmed this choice before
    tools: list[str] | None = None
    matches: list[Candidate] | None = None
    available: list[str] | None = None
    parts: list[Step] | None = None
    steering: str | None = None
    instructions_held: str | None = None
    held_tools: dict[str, str] | None = None
    stopped_to_make_room: list[str] | None = None
    hint: dict[str, Any] | None = None
    next: list[NextCall] = []
    _shown: list[str] = PrivateAttr(default_factory=list)  # the power's tools the answer names, best first

    @property
    def shown(self) -> list[str]:
        return self._shown

    def showing(self, tools: Sequence[types.Tool]) -> GatewayAnswer:
        self._shown = [t.name for t in tools]
        return self

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


# -- one line per tool and per power ---------------------------------------------------------------


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """The first sentence of ``text`` (its first line that is not a Markdown heading), cut at a word to
    ``limit`` characters."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    flat = " ".join((lines[0] if lines else "").split())
    first = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    return first[: limit - 1].rsplit(" ", 1)[0] + "…"


def _type_of(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "any"
    kind = spec.get("type")
    if isinstance(kind, list):
        kinds = [str(k) for k in kind if k != "null"]
        kind = "|".join(kinds) if kinds else "null"
    if kind == "array":
        return f"{_type_of(spec.get('items'))}[]"
    if "enum" in spec and isinstance(spec["enum"], list) and len(spec["enum"]) <= 4:
        return "|".join(str(v) for v in spec["enum"])
    if not kind:
        variants = spec.get("anyOf") or spec.get("oneOf")
        if isinstance(variants, list):
            return "|".join(dict.fromkeys(_type_of(v) for v in variants if v != {"type": "null"}))
        return "object" if "properties" in spec else "any"
    return str(kind)


def parameters(schema: Mapping[str, Any]) -> str:
    """``name: type`` for each parameter, ``?`` after the optional ones, required first."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ""
    required = [r for r in schema.get("required") or [] if isinstance(r, str) and r in properties]
    optional = [p for p in properties if p not in required]
    return ", ".join(
        [f"{p}: {_type_of(properties[p])}" for p in required]
        + [f"{p}?: {_type_of(properties[p])}" for p in optional]
    )


def tool_line(tool: types.Tool) -> str:
    return f"{tool.name}({parameters(tool.input_schema)}): {one_line(tool.description or '')}"


# -- what the gateway knows beyond the decision ----------------------------------------------------


@dataclass(frozen=True)
class Filled:
    """The arguments the request gave for a tool, and its required parameters it did not give."""

    arguments: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


Fill = Callable[[str, types.Tool], Filled]  # (power, tool)


@dataclass(frozen=True)
class Started:
    """A power resolve_intent or activate_power has running: its approved tools (held ones left out),
    whether it ran before this call, who made room, and what the session has not read yet."""

    name: str
    tools: Sequence[types.Tool]
    already: bool
    evicted: Sequence[str] = ()
    steering: str = ""  # to show: empty when the session read it before
    held: Mapping[str, str] = field(default_factory=dict)
    instructions_held: bool = False


@dataclass(frozen=True)
class Facts:
    runnable: Collection[str]
    may_call: bool
    started: Started | None = None
    start_error: str | None = None
    seen: Collection[str] = ()  # the tools (power::tool) whose line the session already read
    fill: Fill = lambda _power, _tool: Filled()
    blurbs: Mapping[str, str] = field(default_factory=dict)  # power -> the operator's line for it
    fit: Mapping[str, float] = field(default_factory=dict)  # tool -> its score over the best tool's
    top3: float = 0.0  # P(a right power is among the first three)
    alternatives: Sequence[PowerSummary] = ()  # configured powers among the first three, when the best is not


def _call(power: str, tool: types.Tool, filled: Filled) -> NextCall:
    return NextCall(
        tool="call_tool", arguments={"power": power, "tool": tool.name, "arguments": filled.arguments}
    )


def _activate(power: str, why: str | None) -> NextCall:
    return NextCall(tool="activate_power", arguments={"name": power}, why=why)


BROWSE = NextCall(tool="catalog_query", arguments={"query_type": "servers"}, why="to browse")


def best_tools(tools: Sequence[types.Tool], order: Sequence[str]) -> list[types.Tool]:
    """``tools`` best match first: those ``order`` names (the decision's order), then the rest."""
    by_name = {t.name: t for t in tools}
    ranked = [by_name[n] for n in dict.fromkeys(order) if n in by_name]
    return ranked + [t for t in tools if t.name not in {r.name for r in ranked}]


def _lines(power: str, tools: Sequence[types.Tool], seen: Collection[str]) -> list[str] | None:
    lines = [tool_line(t) for t in tools if f"{power}::{t.name}" not in seen]
    return lines or None


def _candidate(summary: PowerSummary, facts: Facts, *, described: bool) -> Candidate:
    """A candidate power: its best tools, and (``described``: the agent chooses among them) one line of
    what it does: the operator's words for it (servers.json steering) when there are some, else its
    one-line purpose (trust/shown.py ``server_purpose``: never its instructions)."""
    runnable = facts.runnable
    text = facts.blurbs.get(summary.power) or summary.description
    does = one_line(text, CANDIDATE_CHARS) if described else ""
    return Candidate(
        power=summary.power,
        does=does or None,
        tools=summary.tools[: MATCHES_SHOWN if described else 2],
        runnable=None if summary.power in runnable else False,
    )


def _steps(parts: Sequence[StepMatch]) -> list[Step] | None:
    return [Step(step=p.step, powers=p.powers[:2], tools=p.tools[:2]) for p in parts] or None


def _step_calls(parts: Sequence[StepMatch], runnable: Collection[str], started: str | None) -> list[NextCall]:
    found: dict[str, NextCall] = {}
    for i, step in enumerate(parts, start=1):
        best = step.powers[0] if step.powers else None
        if best is not None and best in runnable and best != started and best not in found:
            found[best] = _activate(best, f"for step {i}")
    return list(found.values())


def _started_fields(started: Started) -> dict[str, Any]:
    return {
        "steering": started.steering or None,
        "instructions_held": messages.instructions_held() if started.instructions_held else None,
        "held_tools": dict(started.held) or None,
        "stopped_to_make_room": list(started.evicted) or None,
    }


def _activated(decision: Decision, facts: Facts, power: str) -> GatewayAnswer:
    confidence = round(decision.confidence, 2)
    base: dict[str, Any] = {"status": "activated", "power": power, "confidence": confidence}
    if decision.match_type == "remembered":
        base["match_type"] = "remembered"
    parts = decision.parts or []
    if power not in facts.runnable and facts.alternatives:
        others = list(facts.alternatives)
        top = PowerSummary(power=power, description="", tools=[t.name for t in decision.tools or []][:3])
        return GatewayAnswer(
            status="multiple_matches",
            confidence=confidence,
            message=messages.catalog_only_or(power, confidence, [a.power for a in others]),
            matches=[_candidate(m, facts, described=True) for m in [*others, top]],
            next=[_activate(a.power, None) for a in others],
        )
    if power not in facts.runnable:
        return GatewayAnswer(
            **base, ready=False, message=messages.catalog_only(power, confidence), next=[BROWSE]
        )
    if not facts.may_call:
        return GatewayAnswer(
            **base, ready=False, message=messages.lacks_call(power, confidence), next=[BROWSE]
        )
    started = facts.started
    if started is None:
        error = facts.start_error or "it did not start."
        retry = _activate(power, "retry the start")
        return GatewayAnswer(
            **base, ready=False, message=messages.start_failed(power, confidence, error), next=[retry]
        )
    order = [t.name for t in decision.tools or []]
    ranked = best_tools(started.tools, order)
    best = ranked[0] if ranked else None
    filled = facts.fill(power, best) if best is not None else Filled()
    calls = [_call(power, best, filled)] if best is not None else []
    calls += _step_calls(parts, facts.runnable, started=power)
    close = [t for t in ranked[1:TOOLS_SHOWN] if facts.fit.get(t.name, 0.0) >= CLOSE]
    named = ranked[:1] + close  # these join the client's tool list
    # running: the agent met it; a complete next call says what its line would: the line only when to fill
    shown = [] if started.already else (named if filled.missing or best is None else close)
    remembered = decision.match_type == "remembered"
    name = best.name if best else None
    if started.already:  # the short answer: the call to make (its tier says the match is sure)
        message = messages.already_active(power, name, filled.missing, remembered=remembered)
        base.pop("confidence")
    else:
        message = messages.activated(power, confidence, name, filled.missing, remembered=remembered)
    message += (" " + steps_sentence(parts, decision.status)) if parts else ""
    return GatewayAnswer(
        **base,
        message=message,
        tools=_lines(power, shown, facts.seen),
        parts=_steps(parts),
        next=calls,
        **_started_fields(started),
    ).showing(named)


def resolve_answer(decision: Decision, facts: Facts) -> GatewayAnswer:
    """resolve_intent's answer (see the module docstring)."""
    if decision.status == "activated" and decision.power is not None:
        return _activated(decision, facts, decision.power)
    runnable = facts.runnable
    parts = decision.parts or []
    confidence = round(decision.confidence, 2)
    if decision.status == "not_found":
        names = sorted(runnable)[:AVAILABLE_SHOWN]  # what the agent can use here
        return GatewayAnswer(
            status="not_found",
            confidence=confidence,
            message=messages.nothing_fits(need_of(decision.query)),
            available=names,
        )
    matches, status = (decision.matches or [])[:MATCHES_SHOWN], decision.status
    shown = [m.power for m in matches] + [s.powers[0] for s in parts if s.powers]
    idle = [p for p in dict.fromkeys(shown) if p not in runnable]
    weak = decision.status == "weak_matches" and bool(matches)
    gap = weak and decision.message.startswith(f"'{matches[0].power}' shares")  # judged: none of its tools
    if weak:
        message = messages.weak(matches[0].power, gap)
    else:
        message = messages.choose(max(decision.confidence, facts.top3))
    message += (" " + steps_sentence(parts, decision.status)) if parts else ""
    message += messages.not_runnable(idle) if idle and not gap else ""  # none shown: none named
    calls: list[NextCall] = []
    if decision.status == "multiple_matches":
        calls = _step_calls(parts, runnable, started=None)
        offered = {c.arguments.get("name") for c in calls}
        calls += [_activate(m.power, None) for m in matches if m.power in runnable and m.power not in offered]
    else:
        calls = [NextCall(tool="resolve_intent", arguments={"query": "..."}, why="after the user clarifies")]
    return GatewayAnswer(
        status=decision.status,
        confidence=confidence,
        message=message,
        matches=None if gap else [_candidate(m, facts, described=status != "weak_matches") for m in matches],
        parts=_steps(parts),
        next=calls or [BROWSE],
    )


def power_answer(
    started: Started, order: Sequence[str], facts: Facts, hint: dict[str, Any] | None
) -> GatewayAnswer:
    """activate_power's answer: the tools the session's last request named for this power, best first
    (else its first ``POWER_TOOLS_SHOWN``), and the call of the best one when that request named one. A
    power already running shows at most that best tool's line: the agent has met the power before."""
    ranked = best_tools(started.tools, order)
    named = ranked[: TOOLS_SHOWN if order else POWER_TOOLS_SHOWN]
    shown = [] if started.already else named  # running: the session met it, the next call says the rest
    calls: list[NextCall] = []
    if order and ranked:
        filled = facts.fill(started.name, ranked[0])
        calls = [_call(started.name, ranked[0], filled)]
    best = ranked[0].name if order and ranked else None
    message = messages.power_started(started.name, started.already, len(ranked), len(named), best)
    return GatewayAnswer(
        status="activated",
        power=started.name,
        message=message,
        tools=_lines(started.name, shown, facts.seen),
        hint=hint,
        next=calls,
        **_started_fields(started),
    ).showing(named)
