"""Metrics over predictions and gold, as pure functions; every result is a pydantic model.

This module scores each prediction and aggregates groups into the report; the figures it reads live
by concern: ranking against the gold slots in ``eval.quality.ranking``, the routing shares in
``eval.quality.routing_shares``, AUROC and ECE in ``eval.quality.reliability``.

Scoring rules, for all of them (``shared/benchmarks/README.md``):

- tool recall@k: per answerable query, the share of its slots with at least one id in the top k
  tools, averaged over queries. server recall@k: the same with each slot mapped to the servers of its
  ids (``rsplit("::", 1)[0]``), over the ranked server list.
- tool MRR: reciprocal rank of the first tool that fills any slot (0 when none does).
- slot recall@k, on the multi-slot queries (answerable, at least two slots) only: the share of a query's
  slots whose servers meet the union of the top k powers of its parts (the whole request's top k when
  the resolver did not split it), averaged over those queries. Beside it, on the same queries: how many
  there are, the share the resolver split, tool recall@5 and server recall@3.
- activated precision: of the answerable queries routed to ``activated``, the share whose top server
  fills a slot. unanswerable caught: of the queries with empty gold, the share routed to
  ``not_found`` or ``weak_matches``. answerable not found: of the answerable queries, the share routed
  to ``not_found``.
- confidence AUROC: how well the confidence separates answerable (positive) from unanswerable
  (negative) queries; Mann-Whitney, ties count one half.
- answerable activated: of the answerable queries, the share routed to ``activated``. gold removed
  activated: of the small-catalog requests whose gold servers were removed, the share activated.
- ECE: the confidence claims the probability that the top power is right; binned in tenths, the
  query-weighted mean gap between a bin's mean confidence and how often its top power was right
  (unanswerable queries are never right).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from eval.quality.dataset import Query
from eval.quality.ranking import (
    server_recall_at_k,
    slot_recall_at_k,
    tool_recall_at_k,
    tool_reciprocal_rank,
    top_server_fills_a_slot,
)
from eval.quality.reliability import ReliabilityBin, auroc, ece, reliability_bins
from eval.quality.routing_shares import RoutedQuery, routing_shares, share, tier_sort_key

ANSWERABLE_LEVELS: tuple[int, ...] = (1, 2, 3, 4)
ANSWERABLE_LEVELS_GROUP = "L1-4"
ALL_GROUP = "all"
_MAX_IDS_IN_MESSAGE = 20


# --------------------------------------------------------------------------- predictions


class ServerScore(BaseModel):
    name: str
    score: float


class ToolScore(BaseModel):
    id: str
    score: float


class Prediction(BaseModel):
    """One line of a predictions file: ranked servers and tools, best first, plus routing."""

    model_config = ConfigDict(extra="ignore")

    id: str
    servers: list[ServerScore]
    tools: list[ToolScore]
    confidence: float
    top3_confidence: float | None = None
    tier: str
    latency_ms: float = Field(ge=0.0)
    dataset: str | None = Field(default=None, description="the DATASET argument the query came from")
    catalog: str | None = Field(default=None, description="the dataset folder (catalog) it came from")
    catalog_servers: int | None = Field(default=None, description="servers in the query's catalog")
    parts: list[list[str]] | None = Field(
        default=None,
        description="a request the resolver split into steps: each step's ranked server names, best first",
    )

    @property
    def server_names(self) -> list[str]:
        return [s.name for s in self.servers]

    @property
    def tool_ids(self) -> list[str]:
        return [t.id for t in self.tools]


# --------------------------------------------------------------------------- scoring


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) by linear interpolation between closest ranks.

    Same as ``numpy.percentile(values, q)`` with the default ``"linear"`` method: the value at
    fractional position ``(n - 1) * q / 100`` of the sorted list. None for no values.
    """
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    lower = math.floor(position)
    upper = math.ceil(position)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _ordered_counts(counter: Counter[str]) -> dict[str, int]:
    return {tier: counter[tier] for tier in sorted(counter, key=tier_sort_key)}


class QueryScore(BaseModel):
    """Per-query figures, kept in the report for error analysis. Recall fields are None if unanswerable."""

    id: str
    level: int | None
    answerable: bool
    tool_recall_at_1: float | None
    tool_recall_at_3: float | None
    tool_recall_at_5: float | None
    server_recall_at_1: float | None
    server_recall_at_3: float | None
    server_recall_at_5: float | None
    reciprocal_rank: float | None
    top_server_hit: bool | None
    top3_server_hit: bool | None
    tier: str
    expected_tier: str | None
    confidence: float
    latency_ms: float
    origin: str | None = None
    dataset: str | None = None
    catalog_servers: int | None = None
    slots: int = Field(default=0, description="gold slots")
    split: bool = Field(default=False, description="the resolver split the request into parts")
    slot_recall_at_1: float | None = Field(default=None, description="multi-slot queries only")
    slot_recall_at_3: float | None = Field(default=None, description="multi-slot queries only")

    @property
    def multi_slot(self) -> bool:
        """Answerable with at least two slots: a request that needs several tools."""
        return self.answerable and self.slots >= 2


def score_query(query: Query, prediction: Prediction) -> QueryScore:
    """All per-query figures of one prediction against its query's gold."""
    if query.id != prediction.id:
        raise ValueError(f"prediction {prediction.id!r} does not belong to query {query.id!r}")
    groups = query.gold_tool_groups
    tools, servers = prediction.tool_ids, prediction.server_names
    answerable = query.answerable

    def tool_r(k: int) -> float | None:
        return tool_recall_at_k(groups, tools, k) if answerable else None

    def server_r(k: int) -> float | None:
        return server_recall_at_k(groups, servers, k) if answerable else None

    def slot_r(k: int) -> float | None:
        return slot_recall_at_k(groups, servers, prediction.parts, k) if len(groups) >= 2 else None

    server_r3 = server_r(3)
    return QueryScore(
        id=query.id,
        level=query.level,
        answerable=answerable,
        tool_recall_at_1=tool_r(1),
        tool_recall_at_3=tool_r(3),
        tool_recall_at_5=tool_r(5),
        server_recall_at_1=server_r(1),
        server_recall_at_3=server_r3,
        server_recall_at_5=server_r(5),
        reciprocal_rank=tool_reciprocal_rank(groups, tools) if answerable else None,
        top_server_hit=top_server_fills_a_slot(groups, servers) if answerable else None,
        top3_server_hit=(server_r3 is not None and server_r3 > 0.0) if answerable else None,
        tier=prediction.tier,
        expected_tier=query.expected_tier,
        confidence=prediction.confidence,
        latency_ms=prediction.latency_ms,
        origin=query.origin,
        dataset=prediction.dataset,
        catalog_servers=prediction.catalog_servers,
        slots=len(groups),
        split=bool(prediction.parts),
        slot_recall_at_1=slot_r(1),
        slot_recall_at_3=slot_r(3),
    )


class GroupMetrics(BaseModel):
    """Aggregate figures for a group of queries. A figure is None when its denominator is empty."""

    name: str
    count: int
    answerable: int
    unanswerable: int
    tool_recall_at_1: float | None
    tool_recall_at_3: float | None
    tool_recall_at_5: float | None
    server_recall_at_1: float | None
    server_recall_at_3: float | None
    server_recall_at_5: float | None
    mrr: float | None
    tiers_answerable: dict[str, int]
    tiers_unanswerable: dict[str, int]
    activated_count: int = Field(description="answerable queries routed to activated")
    activated_precision: float | None
    answerable_activated: float | None = None
    unanswerable_caught: float | None
    answerable_not_found: float | None
    gold_removed_activated: float | None = None
    confidence_auroc: float | None
    ece: float | None = None
    reliability: list[ReliabilityBin] = Field(default_factory=list, description="the bins ECE is read from")
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    # Only when queries carry expected_tier:
    tier_accuracy: float | None = None
    tier_confusion: dict[str, dict[str, int]] | None = Field(
        default=None, description="expected tier -> predicted tier -> count"
    )
    top3_server_accuracy: float | None = None
    # Multi-slot queries (answerable, at least two slots) only:
    multi_slot: int = Field(default=0, description="answerable queries with at least two slots")
    multi_slot_split: float | None = Field(default=None, description="share of them the resolver split")
    slot_recall_at_1: float | None = None
    slot_recall_at_3: float | None = None
    multi_slot_tool_recall_at_5: float | None = None
    multi_slot_server_recall_at_3: float | None = None


def group_metrics(name: str, scores: Sequence[QueryScore]) -> GroupMetrics:
    """Aggregate per-query scores into a group's figures (see the module docstring for definitions)."""
    answerable = [s for s in scores if s.answerable]
    unanswerable = [s for s in scores if not s.answerable]

    def mean_of(field: str) -> float | None:
        return _mean([float(getattr(s, field)) for s in answerable])

    routed = routing_shares(
        [
            RoutedQuery(answerable=s.answerable, right=bool(s.top_server_hit), origin=s.origin, tier=s.tier)
            for s in scores
        ]
    )
    cells = reliability_bins([s.confidence for s in scores], [bool(s.top_server_hit) for s in scores])
    pairs: dict[str, Counter[str]] = {}
    for s in scores:
        if s.expected_tier is not None:
            pairs.setdefault(s.expected_tier, Counter())[s.tier] += 1
    tier_accuracy: float | None = None
    confusion: dict[str, dict[str, int]] | None = None
    top3: float | None = None
    if pairs:
        with_expected = sum(sum(c.values()) for c in pairs.values())
        tier_accuracy = sum(c[expected] for expected, c in pairs.items()) / with_expected
        confusion = {
            expected: _ordered_counts(pairs[expected]) for expected in sorted(pairs, key=tier_sort_key)
        }
        top3 = share(sum(1 for s in answerable if s.top3_server_hit), len(answerable))

    multi = [s for s in answerable if s.multi_slot]

    def multi_mean(field: str) -> float | None:
        return _mean([float(getattr(s, field)) for s in multi])

    latencies = [s.latency_ms for s in scores]
    return GroupMetrics(
        name=name,
        count=len(scores),
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        tool_recall_at_1=mean_of("tool_recall_at_1"),
        tool_recall_at_3=mean_of("tool_recall_at_3"),
        tool_recall_at_5=mean_of("tool_recall_at_5"),
        server_recall_at_1=mean_of("server_recall_at_1"),
        server_recall_at_3=mean_of("server_recall_at_3"),
        server_recall_at_5=mean_of("server_recall_at_5"),
        mrr=mean_of("reciprocal_rank"),
        tiers_answerable=_ordered_counts(Counter(s.tier for s in answerable)),
        tiers_unanswerable=_ordered_counts(Counter(s.tier for s in unanswerable)),
        **routed.model_dump(),
        confidence_auroc=auroc([s.confidence for s in answerable], [s.confidence for s in unanswerable]),
        ece=ece(cells, len(scores)) if scores else None,
        reliability=[ReliabilityBin(lower=lo, confidence=c, right=r, count=n) for lo, c, r, n in cells],
        latency_p50_ms=percentile(latencies, 50.0),
        latency_p95_ms=percentile(latencies, 95.0),
        tier_accuracy=tier_accuracy,
        tier_confusion=confusion,
        top3_server_accuracy=top3,
        multi_slot=len(multi),
        multi_slot_split=share(sum(1 for s in multi if s.split), len(multi)),
        slot_recall_at_1=multi_mean("slot_recall_at_1"),
        slot_recall_at_3=multi_mean("slot_recall_at_3"),
        multi_slot_tool_recall_at_5=multi_mean("tool_recall_at_5"),
        multi_slot_server_recall_at_3=multi_mean("server_recall_at_3"),
    )


class EvalReport(BaseModel):
    """Groups in display order: ``all``, then ``L1``..``Ln`` and ``L1-4`` when queries have levels."""

    groups: dict[str, GroupMetrics]
    per_query: list[QueryScore]

    def group(self, name: str) -> GroupMetrics:
        try:
            return self.groups[name]
        except KeyError:
            raise KeyError(f"no group {name!r}; groups are {', '.join(self.groups)}") from None


def _name_ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_MAX_IDS_IN_MESSAGE])
    more = len(ids) - _MAX_IDS_IN_MESSAGE
    return shown + (f" and {more} more" if more > 0 else "")


def _match(queries: Sequence[Query], predictions: Sequence[Prediction]) -> list[tuple[Query, Prediction]]:
    query_ids = Counter(q.id for q in queries)
    duplicate_queries = sorted(i for i, n in query_ids.items() if n > 1)
    if duplicate_queries:
        raise ValueError(f"duplicate query ids: {_name_ids(duplicate_queries)}")
    by_id: dict[str, Prediction] = {}
    duplicate_predictions: list[str] = []
    for p in predictions:
        if p.id in by_id:
            duplicate_predictions.append(p.id)
        by_id[p.id] = p
    if duplicate_predictions:
        raise ValueError(f"more than one prediction for ids: {_name_ids(sorted(set(duplicate_predictions)))}")
    missing = [q.id for q in queries if q.id not in by_id]
    extra = sorted(set(by_id) - set(query_ids))
    problems: list[str] = []
    if missing:
        problems.append(f"{len(missing)} queries have no prediction: {_name_ids(missing)}")
    if extra:
        problems.append(f"{len(extra)} predictions match no query: {_name_ids(extra)}")
    if problems:
        raise ValueError("; ".join(problems))
    return [(q, by_id[q.id]) for q in queries]


def evaluate(queries: Sequence[Query], predictions: Sequence[Prediction]) -> EvalReport:
    """Score predictions against queries, matched by id (a missing or extra prediction is a ValueError).

    Groups: ``all``; one per dataset when predictions name more than one; one per catalog size
    (``10 servers``) when they come from more than one catalog; when any query has a level, one group
    ``L<n>`` per level in ascending order and ``L1-4`` over the queries of levels 1 to 4 (MSC-Bench's
    answerable ones).
    """
    if not queries:
        raise ValueError("no queries to evaluate")
    scores = [score_query(q, p) for q, p in _match(queries, predictions)]
    groups: dict[str, GroupMetrics] = {ALL_GROUP: group_metrics(ALL_GROUP, scores)}
    datasets = sorted({s.dataset for s in scores if s.dataset is not None})
    if len(datasets) > 1:
        for dataset in datasets:
            groups[dataset] = group_metrics(dataset, [s for s in scores if s.dataset == dataset])
    catalogs = {(p.dataset, p.catalog) for p in predictions if p.catalog is not None}
    sizes = sorted({s.catalog_servers for s in scores if s.catalog_servers is not None})
    for size in sizes if len(catalogs) > 1 else []:
        name = f"{size} servers"
        groups[name] = group_metrics(name, [s for s in scores if s.catalog_servers == size])
    levels = sorted({s.level for s in scores if s.level is not None})
    for level in levels:
        name = f"L{level}"
        groups[name] = group_metrics(name, [s for s in scores if s.level == level])
    combined = [s for s in scores if s.level in ANSWERABLE_LEVELS]
    if combined:
        groups[ANSWERABLE_LEVELS_GROUP] = group_metrics(ANSWERABLE_LEVELS_GROUP, combined)
    return EvalReport(groups=groups, per_query=scores)
