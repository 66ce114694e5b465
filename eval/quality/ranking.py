"""The ranking figures of one query against its gold slots (the rules are in ``eval.quality.metrics``):
tool and
server recall@k, slot recall@k of a multi-step request, the reciprocal rank of the first right tool,
whether the top server fills a slot."""

from __future__ import annotations

from collections.abc import Sequence

from tool_selector.core import names


def server_of(tool_id: str) -> str:
    """The server part of ``"server::tool"`` (tool_selector/core/names.py splits ids)."""
    return names.server_of(tool_id)


def slot_servers(slot: Sequence[str]) -> set[str]:
    """The servers that fill a slot: the server of each of its interchangeable tool ids."""
    return {server_of(tool_id) for tool_id in slot}


def _check(gold_tool_groups: Sequence[Sequence[str]], k: int | None = None) -> None:
    if not gold_tool_groups:
        raise ValueError("recall is undefined for a query with no gold slots (an unanswerable query)")
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def tool_recall_at_k(gold_tool_groups: Sequence[Sequence[str]], tools: Sequence[str], k: int) -> float:
    """Share of slots with at least one of their ids among the first ``k`` predicted tools."""
    _check(gold_tool_groups, k)
    top = set(tools[:k])
    filled = sum(1 for slot in gold_tool_groups if top.intersection(slot))
    return filled / len(gold_tool_groups)


def server_recall_at_k(gold_tool_groups: Sequence[Sequence[str]], servers: Sequence[str], k: int) -> float:
    """Share of slots whose servers (see :func:`slot_servers`) meet the first ``k`` predicted servers."""
    _check(gold_tool_groups, k)
    top = set(servers[:k])
    filled = sum(1 for slot in gold_tool_groups if top & slot_servers(slot))
    return filled / len(gold_tool_groups)


def slot_recall_at_k(
    gold_tool_groups: Sequence[Sequence[str]],
    servers: Sequence[str],
    parts: Sequence[Sequence[str]] | None,
    k: int,
) -> float:
    """Share of slots whose servers (see :func:`slot_servers`) meet the union of the first ``k`` powers
    of each part (each part's ranked server names); the first ``k`` of ``servers``, the whole request's
    ranking, when the request did not split (``parts`` None or empty)."""
    _check(gold_tool_groups, k)
    top = set().union(*(part[:k] for part in parts)) if parts else set(servers[:k])
    filled = sum(1 for slot in gold_tool_groups if top & slot_servers(slot))
    return filled / len(gold_tool_groups)


def tool_reciprocal_rank(gold_tool_groups: Sequence[Sequence[str]], tools: Sequence[str]) -> float:
    """``1 / rank`` of the first predicted tool that fills any slot; 0 when none does."""
    _check(gold_tool_groups)
    gold = {tool_id for slot in gold_tool_groups for tool_id in slot}
    for rank, tool_id in enumerate(tools, start=1):
        if tool_id in gold:
            return 1.0 / rank
    return 0.0


def top_server_fills_a_slot(gold_tool_groups: Sequence[Sequence[str]], servers: Sequence[str]) -> bool:
    """True when the first predicted server is a server of some slot."""
    return bool(gold_tool_groups) and server_recall_at_k(gold_tool_groups, servers, 1) > 0.0
