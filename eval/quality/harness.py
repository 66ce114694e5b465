"""``tool-selector lab eval``: resolve every query of a benchmark-format folder and score the predictions.

The resolver only ever sees (id, query text): gold fields are read after all predictions are written.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from eval.quality.choices import Phrasing
from eval.quality.dataset import Asked, Query, catalog_size, check_dataset_dir, expand_datasets, load_phrased
from eval.quality.metrics import EvalReport, Prediction, ServerScore, ToolScore, evaluate
from eval.quality.readings import PRODUCT, Reading, resolve_and_route_asked
from eval.quality.report import write_report_files
from eval.quality.workspace import open_workspace
from services.resolve.read_path import ReadPath
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import Embedder

logger = logging.getLogger(__name__)

RANKED = 10


def predict(
    read_path: ReadPath,
    items: Sequence[tuple[str, str] | Asked],
    *,
    progress: Callable[[int, int], None] | None = None,
    reading: Reading = PRODUCT,
) -> list[Prediction]:
    """One prediction per (id, text) or asked request (eval/quality/readings.py: with the person's words
    beside the agent's query, read as ``reading`` says): 10 servers and 10 tools ranked, confidence,
    tier, latency; for a request the resolver split into steps, each step's ranked servers (``parts``)."""
    asked = [item if isinstance(item, Asked) else Asked(*item) for item in items]
    if asked:  # warm up: model session, keyword index; not timed
        resolve_and_route_asked(read_path, asked[0], reading=reading)
    predictions = []
    for done, item in enumerate(asked, start=1):
        started = time.perf_counter()
        resolution, decision = resolve_and_route_asked(read_path, item, reading=reading, limit=RANKED)
        latency = (time.perf_counter() - started) * 1000
        predictions.append(
            Prediction(
                id=item.id,
                servers=[ServerScore(name=p.name, score=p.score) for p in resolution.powers],
                tools=[ToolScore(id=t.id, score=t.score) for t in resolution.tools],
                confidence=resolution.confidence,
                top3_confidence=resolution.top3_confidence,
                tier=decision.status,
                latency_ms=round(latency, 3),
                parts=[part.powers for part in resolution.parts] or None,
            )
        )
        if progress is not None:
            progress(done, len(asked))
    return predictions


def write_jsonl(path: Path, predictions: list[Prediction]) -> None:
    """Written to a temporary file and renamed, so an interrupted run leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in predictions:
            fh.write(json.dumps(p.model_dump(mode="json"), ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def run_eval(
    settings: Settings,
    datasets: Path | Sequence[Path],
    predictions_path: Path,
    *,
    report_path: Path | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
    enricher: str | None = None,
    phrasing: Phrasing = "user",
    reading: Reading = PRODUCT,
) -> tuple[EvalReport, list[Query]]:
    """Resolve every query of every dataset folder (a DATASET is a folder or a small-catalog root) and
    score them together. With several DATASETs, query ids become ``<dataset>/<id>``. ``phrasing``: the
    person's words, the agent's, or the agent's query with the person's words beside it, read as
    ``reading`` says (eval/quality/dataset.py ``load_phrased``, eval/quality/readings.py)."""
    given = [datasets] if isinstance(datasets, Path) else list(datasets)
    args = expand_datasets(given)
    prefix = len(args) > 1
    work = []  # every queries file is validated before anything is built
    for arg in args:
        for folder in arg.folders:
            paths = check_dataset_dir(folder)
            limit = settings.max_file_bytes
            loaded, asked = load_phrased(paths, phrasing, limit_bytes=limit)
            work.append((arg.name, paths, loaded, asked, catalog_size(paths, limit_bytes=limit)))
    total = sum(len(queries) for _, _, queries, _, _ in work)
    all_queries: list[Query] = []
    predictions: list[Prediction] = []
    built = 0
    calibration = ""
    for name, paths, queries, asked, servers in work:
        container, was_built = open_workspace(settings, paths, embedder=embedder, enricher=enricher)
        built += was_built
        with container:
            read_path = ReadPath.fixed(container)
            calibration = container.calibration.version
            done = len(predictions)

            def step(n: int, _: int, done: int = done) -> None:
                if progress is not None:
                    progress(done + n, total)

            found = predict(read_path, asked, progress=step, reading=reading)
        for query, prediction in zip(queries, found, strict=True):
            scored = query.model_copy(update={"id": f"{name}/{query.id}"}) if prefix else query
            prediction.id = scored.id
            prediction.dataset, prediction.catalog_servers = name, servers
            prediction.catalog = paths.queries.parent.name
            all_queries.append(scored)
            predictions.append(prediction)
    write_jsonl(predictions_path, predictions)
    report = evaluate(all_queries, predictions)
    if report_path is not None:
        title = f"tool-selector lab eval: {', '.join(a.name for a in args)}"
        summary = {
            "datasets": [str(p) for p in given],
            "catalogs": len(work),
            "backend": settings.backend,
            "embedding": f"{settings.embedding.model} ({settings.embedding.engine})",
            "enricher": enricher or settings.sync.enricher,
            "alpha": settings.search.alpha,
            "field_boosts": settings.search.field_boosts,
            "thresholds": settings.confidence.thresholds.model_dump(),
            "calibration": calibration,
            "phrasing": phrasing if phrasing != "both" else f"both (reading: {reading})",
            "indexes": f"{built} built, {len(work) - built} reused",
        }
        write_report_files(report, report_path, title=title, settings_summary=summary)
    return report, all_queries
