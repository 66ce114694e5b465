"""``tool-selector calibrate``: fit the absolute confidence on labelled queries.

For every query of the given benchmark folders the resolver runs as in production (it sees only the
query text); afterwards each resolution is labelled 1 when its top power fills a gold slot and 0
otherwise (every unanswerable query is a 0). A logistic model is fitted on the evidence, with the
two models: P(answerable) on the best cosine, and P(top power right | answerable) on all the evidence
(see tool_selector/confidence.py for how they combine). Five-fold cross-validation
reports how the tiers behave on queries the fit did not see. The result is a versioned JSON file,
plus a CSV of the evidence it was fitted on (ids, levels, labels and features; no query text).
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from eval.dataset import Query, check_dataset_dir, load_queries, query_texts
from eval.metrics import top_server_fills_a_slot
from eval.workspace import catalog_files_hash, open_workspace
from services.resolving import ResolveService
from tool_selector.confidence import FEATURES, Calibration, LogisticModel, fit_logistic
from tool_selector.embedding import Embedder
from tool_selector.routing import tier_of
from tool_selector.settings import Settings, TierThresholds

logger = logging.getLogger(__name__)

FOLDS = 5
_FLAT = LogisticModel(
    features=list(FEATURES),
    weights=[0.0] * len(FEATURES),
    bias=0.0,
    mean=[0.0] * len(FEATURES),
    scale=[1.0] * len(FEATURES),
)
NEUTRAL = Calibration(version="neutral", answerable=_FLAT, correct=_FLAT)


class Example(BaseModel):
    dataset: str
    id: str
    level: int | None
    answerable: bool
    correct: bool
    evidence: dict[str, float]


def collect_examples(
    settings: Settings,
    dataset_dir: Path,
    *,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Example]:
    paths = check_dataset_dir(dataset_dir)
    queries = {q.id: q for q in load_queries(paths.queries)}
    # the fit must not depend on an earlier fit: resolve with a neutral model (its confidence is unused)
    container, _ = open_workspace(settings, paths, embedder=embedder, calibration=NEUTRAL)
    resolutions = {}
    with container:
        service = ResolveService(container)
        items = query_texts(queries.values())
        for done, (query_id, text) in enumerate(items, start=1):
            resolutions[query_id] = service.resolve(text)
            if progress is not None:
                progress(done, len(items))
    examples = []
    for query_id, resolution in resolutions.items():  # gold is read only from here on
        query: Query = queries[query_id]
        servers = [p.name for p in resolution.powers]
        examples.append(
            Example(
                dataset=paths.queries.parent.name,
                id=query_id,
                level=query.level,
                answerable=query.answerable,
                correct=query.answerable and top_server_fills_a_slot(query.gold_tool_groups, servers),
                evidence=resolution.features,
            )
        )
    return examples


ANSWERABLE_FEATURES = ("top_cosine",)
UNANSWERABLE_WEIGHT = 0.25  # x the class-balancing weight; chosen by 5-fold CV on msc_bench_dev (README)
CORRECT_L2 = 30.0


def _matrix(examples: list[Example], features: tuple[str, ...]) -> np.ndarray:
    return np.array([[e.evidence[f] for f in features] for e in examples])


def _model(
    fitted: tuple[np.ndarray, float, np.ndarray, np.ndarray], features: tuple[str, ...]
) -> LogisticModel:
    weights, bias, mean, scale = fitted
    return LogisticModel(
        features=list(features),
        weights=[round(float(w), 6) for w in weights],
        bias=round(bias, 6),
        mean=[round(float(m), 6) for m in mean],
        scale=[round(float(s), 6) for s in scale],
    )


def _fit(examples: list[Example], version: str, l2: float) -> Calibration:
    answerable = np.array([1.0 if e.answerable else 0.0 for e in examples])
    negatives = max(1.0, float(len(examples) - answerable.sum()))
    weight = np.where(answerable == 1, 1.0, UNANSWERABLE_WEIGHT * answerable.sum() / negatives)
    p_answerable = fit_logistic(
        _matrix(examples, ANSWERABLE_FEATURES), answerable, sample_weight=weight, l2=l2
    )
    positives = [e for e in examples if e.answerable]
    correct = np.array([1.0 if e.correct else 0.0 for e in positives])
    p_correct = fit_logistic(_matrix(positives, FEATURES), correct, l2=CORRECT_L2)
    return Calibration(
        version=version,
        answerable=_model(p_answerable, ANSWERABLE_FEATURES),
        correct=_model(p_correct, FEATURES),
    )


def tier_figures(
    examples: list[Example], confidences: list[float], thresholds: TierThresholds
) -> dict[str, Any]:
    tiers = [tier_of(c, thresholds) for c in confidences]
    answerable = [(e, t) for e, t in zip(examples, tiers, strict=True) if e.answerable]
    unanswerable = [t for e, t in zip(examples, tiers, strict=True) if not e.answerable]
    activated = [e for e, t in answerable if t == "activated"]

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    return {
        "activated_precision": share(sum(e.correct for e in activated), len(activated)),
        "answerable_activated": share(len(activated), len(answerable)),
        "answerable_not_found": share(sum(t == "not_found" for _, t in answerable), len(answerable)),
        "unanswerable_caught": share(
            sum(t in ("not_found", "weak_matches") for t in unanswerable), len(unanswerable)
        ),
    }


def _fold(example_id: str) -> int:
    return int(hashlib.sha256(example_id.encode()).hexdigest(), 16) % FOLDS


def fit_calibration(
    examples: list[Example], *, version: str, thresholds: TierThresholds, l2: float = 1.0
) -> Calibration:
    calibration = _fit(examples, version, l2)
    in_sample = [calibration.probability(e.evidence) for e in examples]
    out_of_fold = [0.0] * len(examples)
    for fold in range(FOLDS):
        part = _fit([e for e in examples if _fold(f"{e.dataset}/{e.id}") != fold], "cv", l2)
        for i, e in enumerate(examples):
            if _fold(f"{e.dataset}/{e.id}") == fold:
                out_of_fold[i] = part.probability(e.evidence)
    calibration.provenance = {
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "examples": len(examples),
        "answerable": sum(e.answerable for e in examples),
        "unanswerable": sum(not e.answerable for e in examples),
        "l2": l2,
        "correct_l2": CORRECT_L2,
        "unanswerable_weight": UNANSWERABLE_WEIGHT,
        "thresholds": thresholds.model_dump(),
        "in_sample": tier_figures(examples, in_sample, thresholds),
        "cross_validated_5_fold": tier_figures(examples, out_of_fold, thresholds),
    }
    return calibration


def write_calibration(
    calibration: Calibration, examples: list[Example], out: Path, provenance: dict[str, Any]
) -> Path:
    """Write the calibration JSON and, beside it, the evidence CSV it was fitted on; both atomically."""
    calibration.provenance = {**provenance, **calibration.provenance}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(calibration.model_dump(), indent=2) + "\n", encoding="utf-8")
    evidence_path = out.with_suffix(".evidence.csv")
    tmp_csv = evidence_path.with_name(f".{evidence_path.name}.tmp-{os.getpid()}")
    with tmp_csv.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "id", "level", "answerable", "correct", *FEATURES])
        for e in examples:
            writer.writerow(
                [
                    e.dataset,
                    e.id,
                    e.level,
                    int(e.answerable),
                    int(e.correct),
                    *(e.evidence[f] for f in FEATURES),
                ]
            )
    os.replace(tmp_csv, evidence_path)
    os.replace(tmp, out)
    return evidence_path


def dataset_provenance(dataset_dirs: list[Path]) -> list[dict[str, Any]]:
    out = []
    for folder in dataset_dirs:
        paths = check_dataset_dir(folder)
        out.append(
            {
                "dataset": folder.resolve().name,
                "catalog_sha256": catalog_files_hash(paths),
                "queries_sha256": hashlib.sha256(paths.queries.read_bytes()).hexdigest(),
            }
        )
    return out
