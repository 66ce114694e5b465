"""``tool-selector calibrate``: fit the two confidence heads on labelled queries of many catalogs.

Each DATASET argument is a dataset folder or a small-catalog root (``k<servers>-<n>/`` folders, as
``shared/benchmarks/make_subcatalogs.py`` cuts them); every argument weighs the same in the fit, so a
set of 2,400 short requests does not drown one of 100 long tasks. For every query the resolver runs as
in production (it sees only the query text); afterwards each resolution is labelled: ``correct`` when
its top power fills a gold slot, ``top3`` when one of its first three does (every unanswerable query is
0 on both).

The fit (scikit-learn): per head, a gradient-boosted tree ensemble on the evidence, then an isotonic
map fitted on out-of-fold predictions, folds grouped by catalog so that no catalog is both fitted on
and scored. The cross-validated figures are those out-of-fold predictions through that map; the
``--holdout`` sets are never fitted on and are scored with the final calibration. The result is a
versioned JSON file with its provenance, plus a gzipped CSV of the evidence beside it (ids, labels and
features; no query text).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from eval.dataset import (
    DatasetArg,
    catalog_size,
    check_dataset_dir,
    expand_datasets,
    load_queries,
    query_texts,
)
from eval.metrics import (
    RoutedQuery,
    calibration_error,
    routing_shares,
    server_recall_at_k,
    top_server_fills_a_slot,
)
from eval.workspace import catalog_files_hash, open_workspace
from services.shared.resolving import ResolveService
from tool_selector.confidence import Calibration, Head, Isotonic, Tree, TreeEnsemble
from tool_selector.embedding import Embedder
from tool_selector.errors import CalibrationError, InvalidInputError
from tool_selector.evidence import FEATURES
from tool_selector.indexing import cached_tool_vectors
from tool_selector.routing import tier_of
from tool_selector.settings import Settings, TierThresholds

logger = logging.getLogger(__name__)

FOLDS = 5
HEADS = ("top", "top3")
# Gradient boosting, chosen by grouped cross-validation on the fit sets (README, "Confidence"): shallow
# trees, enough of them, leaves of at least 40 queries. Deterministic: no early-stopping split.
BOOSTING: dict[str, Any] = {
    "max_depth": 3,
    "learning_rate": 0.05,
    "max_iter": 300,
    "min_samples_leaf": 40,
    "l2_regularization": 1.0,
    "early_stopping": False,
    "random_state": 0,
}
Progress = Callable[[str, int, int], None]


class Example(BaseModel):
    dataset: str
    catalog: str
    catalog_servers: int
    id: str
    level: int | None
    origin: str | None
    answerable: bool
    correct: bool
    top3: bool
    evidence: dict[str, float]

    def label(self, head: str) -> bool:
        return self.correct if head == "top" else self.top3


def neutral_calibration(reference: np.ndarray) -> Calibration:
    """A calibration that says 0.5 for everything: evidence is collected with it (the fit must not
    depend on an earlier fit), carrying the reference centroid the evidence reads."""
    flat = Head(
        ensemble=TreeEnsemble(
            baseline=0.0, trees=[Tree(feature=[-1], threshold=[0.0], left=[0], right=[0], value=[0.0])]
        ),
        isotonic=Isotonic(x=[0.0, 1.0], y=[0.0, 1.0]),
    )
    return Calibration(
        version="neutral",
        features=list(FEATURES),
        reference=[float(v) for v in reference],
        top=flat,
        top3=flat,
    )


def reference_centroid(
    settings: Settings, folders: Sequence[Path], *, embedder: Embedder | None = None
) -> tuple[np.ndarray, int]:
    """The mean vector of every distinct tool of these catalogs (their workspaces are built on the way),
    and how many tools it averages."""
    vectors: dict[str, np.ndarray] = {}
    for folder in folders:
        container, _ = open_workspace(settings, check_dataset_dir(folder), embedder=embedder)
        with container:
            vectors.update(cached_tool_vectors(container.store, container.embedder.model_id))
    if not vectors:
        raise CalibrationError(
            "The fit catalogs hold no tool, so there is nothing to fit the confidence against.",
            hint="Give dataset folders whose tools.json lists tools.",
        )
    return np.mean(np.stack(list(vectors.values())), axis=0), len(vectors)


def collect_examples(
    settings: Settings,
    folder: Path,
    *,
    dataset: str,
    reference: np.ndarray,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> list[Example]:
    """Resolve every query of one dataset folder as production does, then label each resolution."""
    paths = check_dataset_dir(folder)
    queries = {q.id: q for q in load_queries(paths.queries)}
    servers = catalog_size(paths)
    container, _ = open_workspace(
        settings, paths, embedder=embedder, calibration=neutral_calibration(reference)
    )
    resolutions = {}
    with container:
        service = ResolveService(container)
        items = query_texts(queries.values())
        for done, (query_id, text) in enumerate(items, start=1):
            resolutions[query_id] = service.resolve(text)
            if progress is not None:
                progress(f"{dataset}/{folder.name}", done, len(items))
    examples = []
    for query_id, resolution in resolutions.items():  # gold is read only from here on
        query = queries[query_id]
        names = [p.name for p in resolution.powers]
        examples.append(
            Example(
                dataset=dataset,
                catalog=f"{dataset}/{folder.name}",
                catalog_servers=servers,
                id=query_id,
                level=query.level,
                origin=query.origin,
                answerable=query.answerable,
                correct=query.answerable and top_server_fills_a_slot(query.gold_tool_groups, names),
                top3=query.answerable and server_recall_at_k(query.gold_tool_groups, names, 3) > 0,
                evidence=resolution.features,
            )
        )
    return examples


def _collect_in_worker(job: tuple[Settings, Path, str, np.ndarray]) -> list[Example]:
    settings, folder, dataset, reference = job
    return collect_examples(settings, folder, dataset=dataset, reference=reference)


# ---------------------------------------------------------------------------------------- fitting


def _matrix(examples: Sequence[Example], features: Sequence[str]) -> np.ndarray:
    return np.array([[e.evidence.get(f, 0.0) for f in features] for e in examples], dtype=np.float64)


def dataset_weights(examples: Sequence[Example]) -> np.ndarray:
    """Every dataset weighs the same in total; within a dataset that has both answerable and
    unanswerable requests, each half weighs the same (a prior of one half, whatever the cut); the
    weights average 1."""
    datasets = Counter(e.dataset for e in examples)
    halves = Counter((e.dataset, e.answerable) for e in examples)
    weight = []
    for e in examples:
        both = halves[(e.dataset, not e.answerable)] > 0
        share = 0.5 / halves[(e.dataset, e.answerable)] if both else 1.0 / datasets[e.dataset]
        weight.append(share / len(datasets))
    out = np.asarray(weight, dtype=np.float64)
    return np.asarray(out * len(out) / out.sum(), dtype=np.float64)


def grouped_folds(examples: Sequence[Example], folds: int = FOLDS) -> list[int]:
    """A fold per example; all examples of one catalog share it (folds balanced by size, greedily)."""
    sizes = Counter(e.catalog for e in examples)
    load = [0] * folds
    fold_of: dict[str, int] = {}
    for catalog, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        fold = min(range(folds), key=lambda f: (load[f], f))
        fold_of[catalog] = fold
        load[fold] += n
    return [fold_of[e.catalog] for e in examples]


def _boosted(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier  # the fit only: not on the read path

    if len(set(y.tolist())) < 2:
        raise CalibrationError(
            "Every request of the fit data resolves the same way (all right or all wrong), so a confidence "
            "cannot be fitted on it.",
            hint="Add datasets with unanswerable requests (gold-removed cuts of make_subcatalogs.py) and "
            "with answerable ones.",
        )
    return HistGradientBoostingClassifier(**BOOSTING).fit(x, y, sample_weight=weight)


def export_ensemble(model: Any) -> TreeEnsemble:
    """scikit-learn's HistGradientBoostingClassifier (binary) as plain arrays. Thresholds keep 6
    decimals: they lie halfway between feature values, which have 4 (``Resolution.features``)."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        leaf = nodes["is_leaf"].astype(bool)
        trees.append(
            Tree(
                feature=[-1 if leaf[i] else int(nodes["feature_idx"][i]) for i in range(len(nodes))],
                threshold=[
                    0.0 if leaf[i] else round(float(nodes["num_threshold"][i]), 6) for i in range(len(nodes))
                ],
                left=[0 if leaf[i] else int(nodes["left"][i]) for i in range(len(nodes))],
                right=[0 if leaf[i] else int(nodes["right"][i]) for i in range(len(nodes))],
                value=[float(f"{nodes['value'][i]:.7g}") if leaf[i] else 0.0 for i in range(len(nodes))],
            )
        )
    return TreeEnsemble(baseline=float(np.ravel(model._baseline_prediction)[0]), trees=trees)


def _isotonic(raw: np.ndarray, y: np.ndarray, weight: np.ndarray) -> Isotonic:
    from sklearn.isotonic import IsotonicRegression

    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, y, sample_weight=weight)
    return Isotonic(
        x=[round(float(v), 6) for v in fitted.X_thresholds_],
        y=[round(float(v), 6) for v in fitted.y_thresholds_],
    )


@dataclass
class Fit:
    calibration: Calibration
    out_of_fold: dict[str, np.ndarray]  # head -> calibrated out-of-fold probability per example


def fit_heads(examples: Sequence[Example], *, version: str, reference: np.ndarray, folds: int = FOLDS) -> Fit:
    """Both heads on the examples: grouped out-of-fold predictions, isotonic maps on them, final
    ensembles on everything."""
    features = list(FEATURES)
    x = _matrix(examples, features)
    weight = dataset_weights(examples)
    fold = np.array(grouped_folds(examples, folds))
    heads: dict[str, Head] = {}
    out_of_fold: dict[str, np.ndarray] = {}
    for head in HEADS:
        y = np.array([e.label(head) for e in examples], dtype=int)
        raw = np.zeros(len(examples))
        for f in range(folds):
            train, test = fold != f, fold == f
            if test.any():
                raw[test] = _boosted(x[train], y[train], weight[train]).predict_proba(x[test])[:, 1]
        isotonic = _isotonic(raw, y, weight)
        heads[head] = Head(ensemble=export_ensemble(_boosted(x, y, weight)), isotonic=isotonic)
        out_of_fold[head] = np.array([isotonic(p) for p in raw])
    calibration = Calibration(
        version=version,
        features=features,
        reference=[round(float(v), 7) for v in reference],
        top=heads["top"],
        top3=heads["top3"],
    )
    return Fit(calibration, out_of_fold)


# ---------------------------------------------------------------------------------------- figures


def tier_figures(
    examples: Sequence[Example], top: Sequence[float], top3: Sequence[float], thresholds: TierThresholds
) -> dict[str, Any]:
    """The routing figures the targets are stated in (``eval.metrics.routing_shares``), for one group."""
    routed = [
        RoutedQuery(answerable=e.answerable, right=e.correct, origin=e.origin, tier=tier_of(a, b, thresholds))
        for e, a, b in zip(examples, top, top3, strict=True)
    ]
    shares = routing_shares(routed).model_dump(exclude={"activated_count"})
    answerable = [e for e in examples if e.answerable]
    return {
        "queries": len(examples),
        "answerable": len(answerable),
        **{k: None if v is None else round(v, 4) for k, v in shares.items()},
        "top_power_right": round(sum(e.correct for e in answerable) / len(answerable), 4)
        if answerable
        else None,
        "ece": round(calibration_error(list(top), [e.correct for e in examples]), 4),
    }


def grouped_figures(
    examples: Sequence[Example], top: Sequence[float], top3: Sequence[float], thresholds: TierThresholds
) -> dict[str, dict[str, Any]]:
    """Figures for all examples, per dataset, and per catalog size."""
    groups: dict[str, list[int]] = {"all": list(range(len(examples)))}
    for i, e in enumerate(examples):
        groups.setdefault(f"dataset {e.dataset}", []).append(i)
    for i, e in enumerate(examples):
        groups.setdefault(f"{e.catalog_servers} servers", []).append(i)
    return {
        name: tier_figures(
            [examples[i] for i in idx], [top[i] for i in idx], [top3[i] for i in idx], thresholds
        )
        for name, idx in groups.items()
    }


def score_with(calibration: Calibration, examples: Sequence[Example]) -> tuple[list[float], list[float]]:
    pairs = [calibration.probabilities(e.evidence) for e in examples]
    return [p for p, _ in pairs], [q for _, q in pairs]


# ---------------------------------------------------------------------------------------- command


def _fingerprints(args: Sequence[DatasetArg]) -> list[dict[str, Any]]:
    out = []
    for arg in args:
        digest = hashlib.sha256()
        for folder in arg.folders:
            paths = check_dataset_dir(folder)
            digest.update(catalog_files_hash(paths).encode())
            digest.update(paths.queries.read_bytes())
        out.append({"dataset": arg.name, "catalogs": len(arg.folders), "sha256": digest.hexdigest()})
    return out


def calibrate(
    settings: Settings,
    datasets: Sequence[Path],
    *,
    version: str,
    holdout: Sequence[Path] = (),
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    folds: int = FOLDS,
    jobs: int = 1,
) -> tuple[Calibration, list[Example], list[Example]]:
    """Fit on ``datasets``; score the fit's cross-validation and the ``holdout`` sets. ``jobs`` > 1
    resolves the catalogs in that many worker processes (each loads its own model; no progress)."""
    fit_args, holdout_args = expand_datasets(datasets), expand_datasets(holdout)
    fitted = {f.resolve() for a in fit_args for f in a.folders}
    both = sorted(str(f) for a in holdout_args for f in a.folders if f.resolve() in fitted)
    if both:
        raise InvalidInputError(
            f"{len(both)} catalogs are both fitted on and held out, e.g. {both[0]}; their hold-out figures "
            "would flatter the fit.",
            hint="Pass each dataset either as a DATASET argument or after --holdout, not both.",
        )
    reference, reference_tools = reference_centroid(
        settings, [f for a in fit_args for f in a.folders], embedder=embedder
    )

    def collect(args: Sequence[DatasetArg]) -> list[Example]:
        work = [(folder, arg.name) for arg in args for folder in arg.folders]
        if jobs <= 1:
            found = [
                collect_examples(
                    settings, f, dataset=name, reference=reference, embedder=embedder, progress=progress
                )
                for f, name in work
            ]
        else:  # one model per worker process; results come back in order
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                found = list(
                    pool.map(
                        _collect_in_worker,
                        [(settings, f, name, reference) for f, name in work],
                    )
                )
        return [example for examples in found for example in examples]

    fit_examples, holdout_examples = collect(fit_args), collect(holdout_args)
    if len({e.catalog for e in fit_examples}) < folds:
        raise InvalidInputError(
            f"The fit data has {len({e.catalog for e in fit_examples})} catalogs; cross-validating by "
            f"catalog in {folds} folds needs at least {folds}.",
            hint="Give more catalogs (a small-catalog root holds many) or lower --folds.",
        )
    fit = fit_heads(fit_examples, version=version, reference=reference, folds=folds)
    thresholds = settings.thresholds
    calibration = fit.calibration
    calibration.provenance = {
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "learner": {"boosting": BOOSTING, "isotonic": "out-of-fold", "folds": folds, "grouped_by": "catalog"},
        "weighting": "every dataset argument weighs the same; answerable and unanswerable halves of a "
        "dataset that has both weigh the same",
        "reference": f"mean vector of the {reference_tools} distinct tools of the fit catalogs",
        "fit_datasets": _fingerprints(fit_args),
        "holdout_datasets": _fingerprints(holdout_args),
        "thresholds": thresholds.model_dump(),
        "examples": len(fit_examples),
        "cross_validated": grouped_figures(
            fit_examples, list(fit.out_of_fold["top"]), list(fit.out_of_fold["top3"]), thresholds
        ),
    }
    if holdout_examples:
        top, top3 = score_with(calibration, holdout_examples)
        calibration.provenance["holdout"] = grouped_figures(holdout_examples, top, top3, thresholds)
    return calibration, fit_examples, holdout_examples


def write_calibration(
    calibration: Calibration,
    fitted: Sequence[Example],
    held_out: Sequence[Example],
    out: Path,
    provenance: dict[str, Any],
) -> Path:
    """Write the calibration JSON and, beside it, the gzipped evidence CSV of the examples it was fitted
    on and of the hold-out (the ``role`` column says which); both atomically."""
    calibration.provenance = {**provenance, **calibration.provenance}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(compact_json(calibration.model_dump()), encoding="utf-8")
    evidence_path = out.with_name(out.stem + ".evidence.csv.gz")
    tmp_csv = evidence_path.with_name(f".{evidence_path.name}.tmp-{os.getpid()}")
    with (
        tmp_csv.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,  # mtime 0: same data, same bytes
        io.TextIOWrapper(packed, encoding="utf-8", newline="") as fh,
    ):
        writer = csv.writer(fh)
        writer.writerow(
            [
                "role",
                "dataset",
                "catalog",
                "servers",
                "id",
                "level",
                "origin",
                "answerable",
                "correct",
                "top3",
                *FEATURES,
            ]
        )
        for role, examples in (("fit", fitted), ("holdout", held_out)):
            for e in examples:
                writer.writerow(
                    [
                        role,
                        e.dataset,
                        e.catalog,
                        e.catalog_servers,
                        e.id,
                        e.level,
                        e.origin or "",
                        int(e.answerable),
                        int(e.correct),
                        int(e.top3),
                        *(_short(e.evidence.get(f, 0.0)) for f in FEATURES),
                    ]
                )
    os.replace(tmp_csv, evidence_path)
    os.replace(tmp, out)
    return evidence_path


_NUMBER_LIST = re.compile(r"\[\s*(-?[0-9.eE+-]+(?:,\s*-?[0-9.eE+-]+)*)\s*\]")


def compact_json(data: Any) -> str:
    """Indented JSON whose lists of numbers (the trees) sit on one line each: readable provenance,
    a file a tenth the size."""
    text = json.dumps(data, indent=1)
    return (
        _NUMBER_LIST.sub(lambda m: "[" + ",".join(v.strip() for v in m.group(1).split(",")) + "]", text)
        + "\n"
    )


def _short(value: float) -> str:
    """The value as the fit saw it (features carry 4 decimals), without trailing zeros."""
    return "0" if value == 0 or math.isnan(value) else repr(round(value, 4))
