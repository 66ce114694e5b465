"""``tool-selector lab bench-scale``: how the product behaves from ~2k to 100k tools.

For each size a catalog is built from the shared benchmarks (``eval/bench/scale_catalog.py``: msc_bench_dev's
catalog, the other catalogs as distractors, distractor copies under new names where more are needed),
and measured in a child process of its own, so that its peak memory is its own:

- import (approved), offline enrichment and the index build, each timed, from scratch: a fresh data
  folder and a fresh enrichment cache (only the model export is shared); tools/s over all three;
- the data folder's size on disk (catalog.db with its vector cache, and the index);
- resolve p50/p95/p99, warm, in-process, over msc_bench_dev's queries (all 622, or an even sample), and
  msc L1-4 tool R@5 and server R@3 with the distractors present (eval's ``predict`` and ``evaluate``);
- distractor copies take their original's vectors from the vector cache (``seed_copy_vectors``), unless
  told to embed them: the build then embeds each distinct text once, and ``full_build_s_estimate``
  says what embedding every copy too would have cost at the measured rate;
- the cost of one tool registration through the REST API's write service (``Operations.write`` and
  ``registry.register_tool``, which refreshes enrichment and the index), then the first resolve after
  it, which loads the new index as the running API does: the tool is searchable then. Median of a few,
  each tool deleted again the same way. Registrations run under ``trust.registered = tofu``: under the
  default ``approve`` the tool waits for an approval, which costs one more refresh.
- peak RSS (VmHWM) of the child, and the peak so far after each build stage; the child's CPU seconds
  of each build stage (every thread's: steadier than the wall on a shared machine). A size that runs
  past ``timeout_s`` is cut off and reported as such.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from eval.bench.api import peak_rss_mb
from eval.bench.scale_catalog import SCORED, ScaleCatalog, build_scale_catalog
from eval.bench.scale_report import write_outputs
from eval.quality.dataset import Query, check_dataset_dir, load_queries, query_texts
from eval.quality.harness import predict
from eval.quality.metrics import ANSWERABLE_LEVELS_GROUP, percentile
from eval.quality.metrics import evaluate as score
from services.access.keys import Principal
from services.api.operations import Operations
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write import registry
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import build_index
from tool_selector.config.settings import Settings
from tool_selector.core.hashing import sha256_of
from tool_selector.core.logs import configure_logging
from tool_selector.core.models import CreationMethod, ToolSpec
from tool_selector.embedding.embedders import Embedder
from tool_selector.index.build import embedding_text, server_embedding_text

logger = logging.getLogger(__name__)

SIZES = (2000, 10000, 30000, 100000)
WARM_UP = 20
ACTOR = "bench-scale"
LOCAL = Principal(actor=ACTOR, scopes=frozenset())  # a local writer: no key to check again
PROBE = "Translate semaphore flag positions number {n} into Morse code beeps for a ship-to-shore drill."


@dataclass(frozen=True)
class SizeJob:
    """What a child process measures: one catalog folder in a fresh data folder."""

    settings: Settings
    catalog: Path
    queries: int | None
    registrations: int
    probe_server: str
    embedder: Embedder | None = None
    reuse_copy_vectors: bool = True


def _folder_mb(path: Path) -> float:
    files = [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()] if path.exists() else []
    return round(sum(p.stat().st_size for p in files) / 2**20, 1)


def sample(queries: Sequence[Query], n: int | None) -> list[Query]:
    """``n`` queries spread evenly over the file (msc's are sorted by level), or all of them."""
    if n is None or n >= len(queries):
        return list(queries)
    return [queries[i * len(queries) // n] for i in range(n)]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def _registration_cost(container: Container, server: str, count: int) -> dict[str, Any]:
    """Register a new tool into ``server`` through the REST API's write service, resolve its own
    description (the first read loads the new index, as the running API does), delete it; ``count``
    times. Medians in ms."""
    ops = Operations(container)
    register, searchable, unregister, found = [], [], [], 0
    try:
        ops.resolve(PROBE.format(n=0), "hybrid", 10)  # the service a running API holds
        for n in range(1, count + 1):
            spec = ToolSpec(
                server=server,
                name=f"bench_scale_probe_{n}",
                description=PROBE.format(n=n),
                input_schema={"type": "object", "properties": {"flags": {"type": "string"}}},
            )
            started = time.perf_counter()
            outcome = ops.write(
                "tool registration",
                functools.partial(
                    registry.register_tool,
                    container,
                    spec,
                    mode="auto",
                    method=CreationMethod.MANUAL_API,
                    actor=ACTOR,
                ),
                LOCAL,
            )
            written = time.perf_counter()
            resolution, _ = ops.resolve(spec.description, "hybrid", 10)
            read = time.perf_counter()
            if outcome.outcome != "created" or outcome.held:
                raise RuntimeError(
                    f"the probe tool was {outcome.outcome} (held: {outcome.held}), not created"
                )
            found += spec.id in [t.id for t in resolution.tools]
            ops.write(
                "tool deletion",
                functools.partial(registry.delete_tool, container, spec.id, actor=ACTOR),
                LOCAL,
            )
            ops.resolve(PROBE.format(n=0), "hybrid", 10)  # the index without it is loaded again
            register.append(written - started)
            searchable.append(read - started)
            unregister.append(time.perf_counter() - read)
    finally:
        ops.close()
    return {
        "registrations": count,
        "register_ms": _ms(statistics.median(register)),
        "register_searchable_ms": _ms(statistics.median(searchable)),
        "unregister_ms": _ms(statistics.median(unregister)),
        "registered_found_top10": found,
    }


COPY = re.compile(r"^(?P<original>.+) \(copy \d+\)$")


def seed_copy_vectors(container: Container) -> int:
    """Put each distractor copy's vectors in the vector cache: those of its original, whose texts differ
    from the copy's only by the server name's " (copy k)". The build then embeds each distinct text
    once, as the distractors are the same tools under other names. Returns how many documents of
    copies will not be embedded (the build time of as many distinct tools is extrapolated from the
    measured rate: ``full_build_s_estimate``)."""
    store, embedder = container.store, container.embedder
    servers = {s.name: s for s in store.list_servers()}
    pairs: list[tuple[str, str]] = []  # (the copy's text, its original's text)
    for name, server in servers.items():
        match = COPY.match(name)
        original = servers.get(match["original"]) if match else None
        if original is None:
            continue
        tools = store.list_tools(name, cleared_only=True)  # one server's records held at a time
        pairs.extend((embedding_text(t, server), embedding_text(t, original)) for t in tools)
        pairs.append((server_embedding_text(server, tools), server_embedding_text(original, tools)))

    def key(text: str) -> str:
        return sha256_of([embedder.model_id, text])

    originals = sorted({o for _, o in pairs})
    known = store.get_vectors(embedder.model_id, [key(o) for o in originals])
    missing = [o for o in originals if key(o) not in known]
    for start in range(0, len(missing), 256):
        chunk = missing[start : start + 256]
        fresh = dict(zip((key(o) for o in chunk), embedder.embed_documents(chunk), strict=True))
        store.put_vectors(embedder.model_id, fresh)
        known.update(fresh)
    seeded = list({key(c): known[key(o)] for c, o in pairs}.items())
    for start in range(0, len(seeded), 5000):
        store.put_vectors(embedder.model_id, dict(seeded[start : start + 5000]))
    return len(pairs)


def _seconds_per_document(container: Container, sample: int = 64) -> float:
    """The embedding time of one tool document here, timed on a sample of the catalog's own texts."""
    store, texts = container.store, []
    for server in store.list_servers():  # the catalog's first tools, without reading all of them
        texts += [embedding_text(t, server) for t in store.list_tools(server.name)]
        if len(texts) >= sample:
            break
    texts = texts[:sample]
    started = time.perf_counter()
    container.embedder.embed_documents(texts)
    return (time.perf_counter() - started) / max(1, len(texts))


def measure_size(job: SizeJob) -> dict[str, Any]:
    """Every figure of one size, in this process (``run_isolated`` runs it in a child)."""
    settings = job.settings
    figures: dict[str, Any] = {}
    paths = check_dataset_dir(job.catalog)
    with Container(settings, embedder=job.embedder) as container:
        cpu = [time.process_time()]  # the child's CPU seconds (every thread's) after each stage
        started = time.perf_counter()
        imported = import_catalog_dir(container, job.catalog, approve=True, actor=ACTOR)
        imported_at, rss_imported = time.perf_counter(), peak_rss_mb()
        cpu.append(time.process_time())
        enrich_catalog(container, container.enrichers("offline"))
        enriched_at, rss_enriched = time.perf_counter(), peak_rss_mb()
        cpu.append(time.process_time())
        reused = seed_copy_vectors(container) if job.reuse_copy_vectors else 0
        seeded_at = time.perf_counter()
        indexed = build_index(container)
        built_at = time.perf_counter()
        cpu.append(time.process_time())
        tools = container.backend.count()
        embedded = indexed.embedded + indexed.servers_embedded
        index_s = (built_at - seeded_at) + (seeded_at - enriched_at)  # the originals' vectors included
        per_doc = _seconds_per_document(container) if reused else 0.0  # what each copy would have cost
        figures.update(
            {
                "copy_documents_not_embedded": reused,
                "full_build_s_estimate": round((built_at - started) + reused * per_doc, 1),
                "tools_indexed": tools,
                "tools_held": len(imported.held),
                "import_s": round(imported_at - started, 2),
                "enrich_s": round(enriched_at - imported_at, 2),
                "index_s": round(index_s, 2),
                "build_s": round(built_at - started, 2),
                "build_tools_per_s": round(imported.tools_added / (built_at - started), 1),
                "import_cpu_s": round(cpu[1] - cpu[0], 1),  # on a busy machine, steadier than the wall
                "enrich_cpu_s": round(cpu[2] - cpu[1], 1),
                "index_cpu_s": round(cpu[3] - cpu[2], 1),
                "build_cpu_s": round(cpu[3] - cpu[0], 1),
                "rss_after_import_mb": rss_imported,  # the peak so far, after each stage
                "rss_after_enrich_mb": rss_enriched,
                "documents_embedded": embedded,
                "data_mb": _folder_mb(settings.data_dir),
                "index_mb": _folder_mb(settings.index_dir),
                "enrichment_cache_mb": _folder_mb(settings.enrichment_cache_dir),
                "rss_after_build_mb": peak_rss_mb(),
            }
        )
        started = time.perf_counter()
        read_path = ReadPath.fixed(container)
        figures["service_build_s"] = round(time.perf_counter() - started, 2)
        queries = sample(load_queries(paths.queries, limit_bytes=settings.max_file_bytes), job.queries)
        items = query_texts(queries)
        for _, text in items[:WARM_UP]:  # warm-up, not measured
            read_path.decide(text)
        predictions = predict(read_path, items)
        latencies = [p.latency_ms for p in predictions]
        group = score(queries, predictions).groups.get(ANSWERABLE_LEVELS_GROUP)
        figures.update(
            {
                "queries": len(items),
                "resolve_p50_ms": round(percentile(latencies, 50) or 0, 2),
                "resolve_p95_ms": round(percentile(latencies, 95) or 0, 2),
                "resolve_p99_ms": round(percentile(latencies, 99) or 0, 2),
                "l1_4_queries": group.answerable if group else 0,
                "tool_r5_l1_4": _rounded(group.tool_recall_at_5 if group else None),
                "server_r3_l1_4": _rounded(group.server_recall_at_3 if group else None),
            }
        )
        if job.registrations > 0:
            figures.update(_registration_cost(container, job.probe_server, job.registrations))
    figures["peak_rss_mb"] = peak_rss_mb()
    return figures


def _child(conn: Connection, job: SizeJob) -> None:
    configure_logging(job.settings.log_level)
    try:
        result = measure_size(job)
    except Exception as exc:  # reported to the parent, which prints it in the size's row
        logger.exception("bench-scale: the size of %s failed", job.catalog)
        result = {"error": f"{type(exc).__name__}: {exc}"}
    conn.send(result)
    conn.close()


def run_isolated(job: SizeJob, timeout_s: float | None) -> dict[str, Any]:
    """``measure_size`` in a spawned child process, cut off after ``timeout_s``."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job), name="bench-scale-size", daemon=True)
    started = time.perf_counter()
    process.start()
    send.close()
    result: dict[str, Any] | None = None
    try:
        if receive.poll(timeout_s):
            result = receive.recv()
    except EOFError:  # it died without a word (killed, out of memory)
        process.join(5)
        result = {"error": f"the child process died (exit code {process.exitcode})"}
    finally:
        receive.close()
    wall = round(time.perf_counter() - started, 1)
    if result is not None:
        process.join(30)
        return {"finished": "error" not in result, **result, "wall_s": wall}
    peak = peak_rss_mb(process.pid) if process.pid is not None else None  # until it was cut off
    process.terminate()
    process.join(10)
    if process.is_alive():
        process.kill()
        process.join()
    return {
        "finished": False,
        "error": f"did not finish in {timeout_s:g} s",
        "peak_rss_mb": peak,
        "wall_s": wall,
    }


def _size_settings(settings: Settings, work: Path, catalog: Path) -> Settings:
    """Fresh data and cache folders (the model export shared through a link), the offline enricher,
    registrations trusted as written, and a file limit that fits the catalog."""
    models = settings.cache_dir / "models"
    models.mkdir(parents=True, exist_ok=True)
    cache = work / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "models").symlink_to(models.resolve(), target_is_directory=True)
    biggest = max(p.stat().st_size for p in catalog.iterdir())
    return settings.model_copy(
        update={
            "data_dir": work / "data",
            "cache_dir": cache,
            "max_file_bytes": max(settings.max_file_bytes, biggest + 2**20),
            "trust": settings.trust.model_copy(update={"registered": "tofu"}),
        }
    ).changed("sync", enricher="offline")


def bench_scale(
    settings: Settings,
    benchmarks: Path,
    sizes: Sequence[int] = SIZES,
    *,
    out: Path,
    queries: int | None = None,
    timeout_s: float | None = None,
    registrations: int = 3,
    embedder: Embedder | None = None,
    reuse_copy_vectors: bool = True,
    on_start: Callable[[ScaleCatalog], None] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Measure each size in turn (``on_start`` hears each catalog before it is measured, ``on_row``
    each row as it finishes); write ``scale.json`` and ``scale.png`` into ``out``. ``embedder``
    replaces the configured model (tests)."""
    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="ts-bench-scale-") as tmp:
            work = Path(tmp)
            catalog = build_scale_catalog(benchmarks, size, work / "catalog")
            if on_start is not None:
                on_start(catalog)
            job = SizeJob(
                settings=_size_settings(settings, work, catalog.folder),
                catalog=catalog.folder,
                queries=queries,
                registrations=registrations,
                probe_server=catalog.first_scored_server,
                embedder=embedder,
                reuse_copy_vectors=reuse_copy_vectors,
            )
            row = {"size": size, **catalog.summary(), **run_isolated(job, timeout_s)}
        rows.append(row)
        if on_row is not None:
            on_row(row)
    write_outputs(rows, out, {"benchmarks": str(benchmarks), "scored": SCORED, "timeout_s": timeout_s})
    return rows
