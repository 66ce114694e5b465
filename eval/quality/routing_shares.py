"""How a group of queries was routed: the tiers in routing order, and the shares the routing targets
are stated in (the rules are in ``eval.quality.metrics``), computed here for the eval report and calibrate
alike."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

TIER_ORDER: tuple[str, ...] = ("activated", "multiple_matches", "weak_matches", "not_found")
CAUGHT_TIERS: frozenset[str] = frozenset({"not_found", "weak_matches"})


class RoutedQuery(BaseModel):
    """What the routing figures read of one query: is it answerable, is its top server right, where
    did it come from (``gold-removed`` ...) and which tier it got."""

    answerable: bool
    right: bool
    origin: str | None
    tier: str


class RoutingShares(BaseModel):
    """The routing figures of a group (see ``eval.quality.metrics``); None where a denominator is empty."""

    activated_count: int
    answerable_activated: float | None
    activated_precision: float | None
    answerable_not_found: float | None
    gold_removed_activated: float | None
    unanswerable_caught: float | None


def routing_shares(queries: Sequence[RoutedQuery]) -> RoutingShares:
    """The shares the routing targets are stated in, for one group of routed queries."""
    answerable = [q for q in queries if q.answerable]
    unanswerable = [q for q in queries if not q.answerable]
    activated = [q for q in answerable if q.tier == "activated"]
    removed = [q for q in unanswerable if q.origin == "gold-removed"]
    return RoutingShares(
        activated_count=len(activated),
        answerable_activated=share(len(activated), len(answerable)),
        activated_precision=share(sum(1 for q in activated if q.right), len(activated)),
        answerable_not_found=share(sum(1 for q in answerable if q.tier == "not_found"), len(answerable)),
        gold_removed_activated=share(sum(1 for q in removed if q.tier == "activated"), len(removed)),
        unanswerable_caught=share(sum(1 for q in unanswerable if q.tier in CAUGHT_TIERS), len(unanswerable)),
    )


def tier_sort_key(tier: str) -> tuple[int, str]:
    """Canonical tiers first, in routing order, then any other name alphabetically."""
    return (TIER_ORDER.index(tier), "") if tier in TIER_ORDER else (len(TIER_ORDER), tier)


def share(hits: int, total: int) -> float | None:
    return hits / total if total else None
