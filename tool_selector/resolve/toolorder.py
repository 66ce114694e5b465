"""The order of a power's tools, best first: which of its tools does what the request asks.

The powers are ranked by the fused hybrid scores (resolver.py). Within one power the keyword channel
often puts the wrong tool first: a word of the request that is another tool's name wins ("list the most
recent commits" -> ``git_commit``, where ``git_log`` lists them). So a power's tools (``PowerCandidate.
tools``, which the route stage turns into the activated decision's tools and the gateway into its next
call) are ordered by their own score, with the keyword channel's share lower than in the fused score:

    DENSE x the cosine + (1 - DENSE) x the keyword score      (each min-max scaled over the candidates)
    + ACTION x how well the request says one of the tool's action-entity pairs (its verb, its object)
    + the argument weight x the share of the request's specific arguments its parameters take

The weights were chosen by ``tool-selector lab tool-order`` (eval/quality/tool_order.py), leave one
dataset out (docs/measurements.md, "The order of a power's tools"). Only the order inside each power
changes: which powers are ranked, their scores, the ranked tools of the resolution and the confidence
are the fused search's, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tool_selector.core.arguments import Argument, fits
from tool_selector.core.models import PowerCandidate, SearchHit
from tool_selector.resolve.evidence import CatalogTerms, action_match

DENSE = 0.9  # the cosine's share of a tool's score inside its power (the fused search's: alpha, 0.5)
ACTION = 0.1  # what saying one of a tool's action-entity pairs, verb and object, adds


@dataclass(frozen=True, slots=True)
class ToolSignals:
    """What one candidate tool's score inside its power is made of, each on a 0-1 scale."""

    cosine: float  # min-max scaled over the query's candidates
    keyword: float  # min-max scaled over the candidates the words found; 0 when they did not
    action: float  # evidence.action_match of the tool's action-entity pairs and the request's words
    arguments: float  # the share of the request's specific arguments the tool's parameters take


@dataclass(frozen=True, slots=True)
class ToolOrder:
    """The weights of a tool's score inside its power."""

    dense: float = DENSE
    action: float = ACTION

    def score(self, signals: ToolSignals, argument_weight: float) -> float:
        return (
            self.dense * signals.cosine
            + (1.0 - self.dense) * signals.keyword
            + self.action * signals.action
            + argument_weight * signals.arguments
        )


def _scaled(values: Mapping[str, float]) -> dict[str, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high - low <= 1e-12:
        return dict.fromkeys(values, 1.0)
    return {k: (v - low) / (high - low) for k, v in values.items()}


def tool_signals(
    hits: Sequence[SearchHit], words: set[str], terms: CatalogTerms, arguments: Sequence[Argument] = ()
) -> dict[str, ToolSignals]:
    """Each candidate's signals (:class:`ToolSignals`): ``words`` are the request's tokens
    (search.text.tokenize of the matched text), ``arguments`` its specific arguments."""
    cosine = _scaled({h.id: h.vector_score for h in hits if h.vector_score is not None})
    keyword = _scaled({h.id: h.keyword_score for h in hits if h.keyword_score > 0})
    kinds, actions = terms.tool_kinds, terms.tool_actions
    return {
        h.id: ToolSignals(
            cosine=cosine.get(h.id, 0.0),
            keyword=keyword.get(h.id, 0.0),
            action=action_match(actions.get(h.id, ()), words),
            arguments=fits(arguments, kinds.get(h.id) or frozenset()) if arguments else 0.0,  # type: ignore[arg-type]
        )
        for h in hits
    }


def order_tools(powers: Sequence[PowerCandidate], scores: Mapping[str, float]) -> list[PowerCandidate]:
    """The same powers in the same order, each with its tools by ``scores``, best first (ties: the order
    they had); a tool without a score keeps its place after those with one."""
    ordered = []
    for power in powers:
        scored = [t for t in power.tools if t in scores]
        scored.sort(key=lambda t: -scores[t])  # stable: ties keep the fused order
        tools = scored + [t for t in power.tools if t not in scores]
        ordered.append(power if tools == power.tools else power.model_copy(update={"tools": tools}))
    return ordered
