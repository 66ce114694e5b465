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
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tool_selector.config.settings import Settings


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _memory_overhead(
    container: Container, read_path: ReadPath, texts: list[str], size: int
) -> dict[str, Any]:
    """The memory of confirmed choices on the read path: ``size`` remembered choices (seeded random
    request vectors; powers and tools of the catalog, so that each one is usable) in a copy of the
    catalog database, then per request the resolve alone and the memory's part of a gateway decision
    (the generation read, the recall and the judge; services/gateway/memory/recording.py), and on the requests
    where the recall runs, the memory's part again right after another API key confirmed a choice (its
    own memory: the remembered choices here are not read again)."""
    import shutil

    import numpy as np

    from services.gateway.memory.recording import ChoiceMemory
    from tool_selector.catalog import memory as rows
    from tool_selector.route.tiers import tools_hash

    with tempfile.TemporaryDirectory(prefix="tool-selector-bench-memory-") as tmp:
        db_path = Path(tmp) / "catalog.db"
        shutil.copy(container.store.path, db_path)
        copy = Container(
            container.settings, embedder=container.embedder, backend=container.backend, db_path=db_path
        )
        with copy:
            rng = np.random.default_rng(0)
            directory = read_path.snapshot().powers
            powers = [p for p in directory.values() if p.tools]
            hashes = {p.name: tools_hash(p) for p in powers}
            vectors = rng.normal(size=(size, container.embedder.dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            for i in range(size):  # one transaction each, as the gateway writes them
                power = powers[i % len(powers)]
                rows.remember(
                    copy.store.database,
                    request_hash=f"bench-{i}",
                    power=power.name,
                    tool=power.tools[0].name,
                    tools_hash=hashes[power.name],
                    model=container.embedder.model_id,
                    vector=vectors[i],
                    request=None,
                )
            memory = ChoiceMemory(copy)
            memory.index()  # loaded once, as a running gateway holds it
            resolved, remembered, undecided = [], [], []
            after_write: list[float] = []
            for text in texts:
                t0 = time.perf_counter()
                resolution, decision = read_path.decide(text)
                t1 = time.perf_counter()
                memory.decide("bench", resolution, decision, directory)
                t2 = time.perf_counter()
                resolved.append((t1 - t0) * 1000)
                remembered.append((t2 - t1) * 1000)
                if decision.status in ("multiple_matches", "weak_matches"):  # the recall runs for these
                    undecided.append((t2 - t1) * 1000)
                    # another API key confirms a choice (its own memory), then this request again
                    power = powers[len(after_write) % len(powers)]
                    rows.remember(
                        copy.store.database,
                        request_hash=f"other-{len(after_write)}",
                        power=power.name,
                        tool=power.tools[0].name,
                        tools_hash=hashes[power.name],
                        model=container.embedder.model_id,
                        vector=vectors[len(after_write) % size],
                        request=None,
                        principal="key:bench-other",
                    )
                    t3 = time.perf_counter()
                    memory.decide("bench", resolution, decision, directory)
                    after_write.append((time.perf_counter() - t3) * 1000)
    return {
        "remembered_choices": size,
        "resolve_p50_ms": round(percentile(resolved, 50) or 0, 3),
        "memory_p50_ms": round(percentile(remembered, 50) or 0, 3),
        "memory_p95_ms": round(percentile(remembered, 95) or 0, 3),
        "recalled_requests": len(undecided),
        "memory_p50_ms_where_recalled": round(percentile(undecided, 50) or 0, 3),
        "memory_p95_ms_where_recalled": round(percentile(undecided, 95) or 0, 3),
        "memory_p50_ms_where_recalled_after_another_keys_write": round(percentile(after_write, 50) or 0, 3),
        "memory_p95_ms_where_recalled_after_another_keys_write": round(percentile(after_write, 95) or 0, 3),
    }


def bench(
    settings: Settings, dataset_dir: Path, *, queries: int = 300, build: bool = True, memory: int = 0
) -> dict[str, Any]:
    paths = check_dataset_dir(dataset_dir)
    loaded = load_queries(paths.queries, limit_bytes=settings.max_file_bytes)
    texts = [t for _, t in query_texts(loaded)][:queries]
    figures: dict[str, Any] = {"dataset": dataset_dir.resolve().name, "queries": len(texts)}
    container, _ = open_workspace(settings, paths)
    with container:
        started = time.perf_counter()
        read_path = ReadPath.fixed(container)  # the power directory and the catalog's words
        figures["service_build_s"] = round(time.perf_counter() - started, 3)
        read_path.decide(texts[0])
        figures["cold_start_s"] = round(time.perf_counter() - started, 3)
        for text in texts[:20]:  # warm-up, not measured
            read_path.decide(text)
        latencies = []
        for text in texts:
            t0 = time.perf_counter()
            read_path.decide(text)
            latencies.append((time.perf_counter() - t0) * 1000)
        resolver, terms, judged = container.resolver, read_path.snapshot().terms, []
        for text in texts:  # the confidence alone: evidence and both heads, on a ranking made once
            ranking = resolver.rank(text)
            t0 = time.perf_counter()
            resolver.judge(ranking, terms)
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
        if memory:
            figures["memory"] = _memory_overhead(container, read_path, texts, memory)
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
