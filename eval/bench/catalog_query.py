"""Latency of the gateway's ``catalog_query`` over a catalog view, per query type."""

from __future__ import annotations

import statistics
import time
from typing import Any

from services.gateway.catalog_query.filters import QUERY_TYPES
from services.gateway.catalog_query.view import CatalogView


def bench_catalog_query(view: CatalogView, n: int = 200) -> dict[str, dict[str, float]]:
    """Per query type: p50, p95 and max milliseconds over ``n`` queries (real server names, common
    verbs and nouns; misses included, which make check_tool scan every tool for other servers)."""
    names = sorted(view.servers)
    if not names:
        return {}
    verbs = ["create", "get", "list", "search", "delete", "update", "send", "run"]
    nouns = ["file", "issue", "weather", "user", "message", "database", "image", "price", "branch"]

    def filters(kind: str, i: int) -> dict[str, Any]:
        server, verb, noun = names[(i * 37) % len(names)], verbs[i % len(verbs)], nouns[i % len(nouns)]
        shapes: dict[str, list[dict[str, Any]]] = {
            "servers": [{"keyword": noun}, {"domain": noun, "limit": 100}, {"keyword": f"{verb} {noun}"}],
            "tools": [{"action": verb}, {"action": verb, "entity": noun}, {"name_pattern": f"*{noun}*"}],
            "check_tool": [{"server": server, "action": verb, "entity": noun}],
            "profile": [{"server": server}],
        }
        return shapes[kind][i % len(shapes[kind])]

    report: dict[str, dict[str, float]] = {}
    for kind in QUERY_TYPES:
        times: list[float] = []
        for i in range(n):
            args = filters(kind, i)
            started = time.perf_counter()
            view.query(kind, args)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        report[kind] = {
            "p50_ms": round(statistics.median(times), 3),
            "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 3),
            "max_ms": round(times[-1], 3),
        }
    return report
