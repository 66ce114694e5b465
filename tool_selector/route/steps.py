"""The steps of a multi-step request in the decision: ``route`` adds them, so a decision leaves the route
stage whole and every adapter only renders it.

The resolver splits a request such as "get the time in Tokyo and then fetch example.com" into parts
and ranks powers and tools for each (``Resolution.parts``, three of each). The decision then carries
the parts (``Decision.parts``, one ``StepMatch`` each) and its message names the best power of every
step: a multi-step request needs one power per step, not one of the whole request's matches.

- Only a request of two parts or more has steps; a one-step answer is unchanged.
- A ``not_found`` answer shows no steps: the router is sure that nothing configured fits.
- A step lists only powers and tools the catalog holds now (``known_parts``, the rule the router applies
  to the whole request's powers): a stale index never offers a power that is gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from tool_selector.core.models import Decision, QueryPart, Resolution, StepMatch, ToolSummary
from tool_selector.core.names import server_of, tool_of
from tool_selector.route import messages


class ListedPower(Protocol):
    """A power as the router's directory lists it (``tiers.PowerInfo``): its tools, by name."""

    @property
    def tools(self) -> Sequence[ToolSummary]: ...


def known_parts(parts: Sequence[QueryPart], powers: Mapping[str, ListedPower]) -> list[QueryPart]:
    """``parts`` with only the powers and tools of ``powers`` (the current catalog's directory)."""

    def known(tool_id: str) -> bool:
        power, name = server_of(tool_id), tool_of(tool_id)
        info = powers.get(power)
        return info is not None and any(tool.name == name for tool in info.tools)

    return [
        QueryPart(
            text=part.text,
            powers=[p for p in part.powers if p in powers],
            tools=[t for t in part.tools if known(t)],
        )
        for part in parts
    ]


def with_known_parts(resolution: Resolution, powers: Mapping[str, ListedPower]) -> Resolution:
    """``resolution`` with ``known_parts`` (itself when it has no parts)."""
    if not resolution.parts:
        return resolution
    return resolution.model_copy(update={"parts": known_parts(resolution.parts, powers)})


def step_matches(resolution: Resolution, decision: Decision) -> list[StepMatch]:
    """The steps an answer shows: none for a one-step request or a ``not_found`` decision."""
    if len(resolution.parts) < 2 or decision.status == "not_found":
        return []
    return [StepMatch(step=part.text, powers=part.powers, tools=part.tools) for part in resolution.parts]


def steps_sentence(steps: Sequence[StepMatch], status: str) -> str:
    """What the message adds for a multi-step request: the best power of each step, and what to do."""
    if not steps:
        return ""
    best = [(i, s.powers[0] if s.powers else None) for i, s in enumerate(steps, start=1)]
    return messages.steps_sentence(best, len(steps), status == "weak_matches")


def with_steps(decision: Decision, steps: Sequence[StepMatch]) -> Decision:
    """``decision`` with its ``parts`` and the steps' sentence after its message (itself when there are
    no steps): the one place steps are computed; every adapter renders them from the decision."""
    if not steps:
        return decision
    sentence = steps_sentence(steps, decision.status)
    return decision.model_copy(update={"message": f"{decision.message} {sentence}", "parts": list(steps)})
