"""``tool-selector lab bench``: speed and memory of the read path and of an index build, as figures."""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.quality.dataset import check_dataset_dir, load_queries, query_texts
from eval.quality.metrics import percentile
from eval.quality.workspace import open_workspace
from services.resolve.resolving import ResolveService
from services.shared.container import Container
from services.shared.indexing import build_index
from services.write.catalog import import_catalog_dir
from tool_selector.config.settings import Settings


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench(settings: Settings, dataset_dir: Path, *, queries: int = 300, build: bool = True) -> dict[str, Any]:
    paths = check_dataset_dir(dataset_dir)
    loaded = load_queries(paths.queries, limit_bytes=settings.max_file_bytes)
    texts = [t for _, t in query_texts(loaded)][:queries]
    figures: dict[str, Any] = {"dataset": dataset_dir.resolve().name, "queries": len(texts)}
    container, _ = open_workspace(settings, paths)
    with container:
        started = time.perf_counter()
        service = ResolveService(container)  # the power directory and the catalog's words
        figures["service_build_s"] = round(time.perf_counter() - started, 3)
        service.resolve(texts[0])
        figures["cold_start_s"] = round(time.perf_counter() - started, 3)
        for text in texts[:20]:  # warm-up, not measured
            service.decide(text)
        latencies = []
        for text in texts:
            t0 = time.perf_counter()
            service.decide(text)
            latencies.append((time.perf_counter() - t0) * 1000)
        resolver, judged = container.resolver, []
        for text in texts:  # the confidence alone: evidence and both heads, on a ranking made once
            ranking = resolver.rank(text)
            t0 = time.perf_counter()
            resolver.judge(ranking, service.terms)
            judged.append((time.perf_counter() - t0) * 1000)
        embed = []
        for text in texts:
            t0 = time.perf_counter()
            container.embedder.embed_query(text)
            embed.append((time.perf_counter() - t0) * 1000)
        figures.update(
            {
                "resolve_p50_ms": round(percentile(latencies, 50) or 0, 2),
                "resolve_p95_ms": round(percentile(latencies, 95) or 0, 2),
                "resolve_p99_ms": round(percentile(latencies, 99) or 0, 2),
                "embed_query_p50_ms": round(percentile(embed, 50) or 0, 2),
                "confidence_p50_ms": round(percentile(judged, 50) or 0, 3),
                "confidence_p95_ms": round(percentile(judged, 95) or 0, 3),
                "tools_indexed": container.backend.count(),
                "embedding_model": container.embedder.model_id,
                "ranker": container.ranker.version if container.ranker is not None else None,
            }
        )
        if build:
            with tempfile.TemporaryDirectory(prefix="tool-selector-bench-") as tmp:
                fresh = Container(
                    settings,
                    embedder=container.embedder,
                    db_path=Path(tmp) / "c.db",
                    index_dir=Path(tmp) / "ix",
                )
                with fresh:
                    t0 = time.perf_counter()
                    import_catalog_dir(fresh, paths.servers.parent, approve=True, actor="eval")
                    summary = build_index(fresh)
                    figures["index_build_from_scratch_s"] = round(time.perf_counter() - t0, 2)
                    figures["index_build_embedded_docs"] = summary.embedded
    figures["peak_rss_mb"] = round(_rss_mb(), 1)
    return figures
