"""Measurement: how close two requests are when one rephrases the other, and when they are different
requests, as the gateway's memory compares them (services/gateway/memory/recording.py, ``REPHRASING``).

The vectors are the relevance model's (the product's default embedder), of each request with its
arguments taken out (what ``Resolution.vector`` holds). Pairs, on every personal setup that has a second
phrasing (eval/datasets/personal-setups/*/queries-rephrased.jsonl, written by the team before the
product was run on it):

- a request and its second phrasing (the same request in other words);
- two different requests of the setup that share a gold power;
- two different requests of different gold powers (or one that nothing serves).

A remembered choice is refuted by a rephrasing only when the agent then chooses another power for it,
so what a threshold must keep out is the third kind (a new request another power serves).

    OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python scripts/memory_closeness.py
"""

from __future__ import annotations

import json
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tool_selector.core.arguments import extract  # noqa: E402
from tool_selector.embedding.embedders import relevance_embedder  # noqa: E402

SETUPS = ROOT / "eval" / "datasets" / "personal-setups"
THRESHOLDS = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8)


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    embedder = relevance_embedder(threads=1)

    def vector(text: str) -> np.ndarray:
        return np.asarray(embedder.embed_query(extract(text).text))

    pairs: dict[str, list[float]] = {"second phrasing": [], "same power": [], "other power": []}
    for folder in sorted(p for p in SETUPS.iterdir() if (p / "queries-rephrased.jsonl").is_file()):
        queries = _lines(folder / "queries.jsonl")
        second = {str(r["rephrases"]): str(r["query"]) for r in _lines(folder / "queries-rephrased.jsonl")}
        vectors = {str(q["id"]): vector(str(q["query"])) for q in queries}
        for q in queries:
            if str(q["id"]) in second and q["gold_servers"]:
                pairs["second phrasing"].append(float(vectors[str(q["id"])] @ vector(second[str(q["id"])])))
        for a, b in combinations(queries, 2):
            if a["query"] == b["query"]:
                continue
            shared = set(a["gold_servers"]) & set(b["gold_servers"])  # type: ignore[call-overload]
            close = float(vectors[str(a["id"])] @ vectors[str(b["id"])])
            pairs["same power" if shared else "other power"].append(close)
    for name, values in pairs.items():
        found = np.array(values)
        p5, p25, p50, p75, p95 = np.percentile(found, [5, 25, 50, 75, 95])
        print(
            f"{name:<16} n={len(found):>6}  p5 {p5:.2f}  p25 {p25:.2f}  median {p50:.2f}  p75 {p75:.2f}  "
            f"p95 {p95:.2f}  max {found.max():.2f}"
        )
    for threshold in THRESHOLDS:
        shares = "  ".join(f"{name} {np.mean(np.array(v) >= threshold):.4f}" for name, v in pairs.items())
        print(f"at least {threshold}: {shares}")


if __name__ == "__main__":
    main()
