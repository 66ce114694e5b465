"""``tool-selector eval``: resolve every query of a benchmark-format folder and score the predictions.

The resolver only ever sees (id, query text): gold fields are read after all predictions are written.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from eval.dataset import Query, check_dataset_dir, load_queries, query_texts
from eval.metrics import EvalReport, Prediction, ServerScore, ToolScore, evaluate
from eval.report import format_markdown
from eval.workspace import open_workspace
from services.resolving import ResolveService
from tool_selector.embedding import Embedder
from tool_selector.settings import Settings

logger = logging.getLogger(__name__)

RANKED = 10


def predict(
    service: ResolveService,
    items: list[tuple[str, str]],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Prediction]:
    """One prediction per (id, text): 10 servers and 10 tools ranked, confidence, tier, latency."""
    if items:  # warm up: model session, keyword index; not timed
        service.resolve_and_route(items[0][1])
    predictions = []
    for done, (query_id, text) in enumerate(items, start=1):
        started = time.perf_counter()
        resolution, decision = service.resolve_and_route(text, tools=RANKED, powers=RANKED)
        latency = (time.perf_counter() - started) * 1000
        predictions.append(
            Prediction(
                id=query_id,
                servers=[ServerScore(name=p.name, score=p.score) for p in resolution.powers],
                tools=[ToolScore(id=t.id, score=t.score) for t in resolution.tools],
                confidence=resolution.confidence,
                tier=decision.status,
                latency_ms=round(latency, 3),
            )
        )
        if progress is not None:
            progress(done, len(items))
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
    dataset_dir: Path,
    predictions_path: Path,
    *,
    report_path: Path | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
    enricher: str | None = None,
) -> tuple[EvalReport, list[Query]]:
    paths = check_dataset_dir(dataset_dir)
    queries = load_queries(paths.queries)  # validated before anything is built
    container, built = open_workspace(settings, paths, embedder=embedder, enricher=enricher)
    with container:
        service = ResolveService(container)
        predictions = predict(service, query_texts(queries), progress=progress)
        write_jsonl(predictions_path, predictions)
        report = evaluate(queries, predictions)
        if report_path is not None:
            report_path.parent.mkdir(parents=True, exist_ok=True)
            report_path.write_text(
                format_markdown(
                    report,
                    title=f"tool-selector eval: {paths.queries.parent.name}",
                    settings_summary={
                        "dataset": str(paths.queries.parent),
                        "backend": settings.backend,
                        "embedding": f"{container.embedder.model_id} ({settings.embedding_engine})",
                        "enricher": enricher or settings.enricher,
                        "alpha": settings.alpha,
                        "field_boosts": settings.field_boosts,
                        "thresholds": settings.thresholds.model_dump(),
                        "calibration": container.calibration.version,
                        "index": "built" if built else "reused",
                    },
                ),
                encoding="utf-8",
            )
    return report, queries
