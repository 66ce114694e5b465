"""``tool-selector lab calibrate``: fit the two confidence heads on labelled queries of many catalogs.

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

This module runs the command and computes its figures; the evidence is collected in
``eval.fitting.calibrate_evidence``, fitted in ``eval.fitting.calibrate_fit`` and written by
``eval.fitting.calibrate_file``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.fitting.calibrate_evidence import (
    Example,
    Progress,
    collect_examples,
    collect_in_worker,
    reference_centroid,
    with_judge,
)
from eval.fitting.calibrate_fit import FOLDS, RECIPE, fit_heads
from eval.quality.dataset import DatasetArg, check_dataset_dir, named_datasets
from eval.quality.reliability import calibration_error
from eval.quality.routing_shares import RoutedQuery, routing_shares
from eval.quality.workspace import catalog_files_hash
from tool_selector.config.settings import Settings, TierThresholds
from tool_selector.core.errors import InvalidInputError
from tool_selector.core.files import read_bytes_limited
from tool_selector.embedding.embedders import Embedder
from tool_selector.resolve.confidence import Calibration
from tool_selector.route.tiers import tier_of

# ---------------------------------------------------------------------------------------- figures


def tier_figures(
    examples: Sequence[Example], top: Sequence[float], top3: Sequence[float], thresholds: TierThresholds
) -> dict[str, Any]:
    """The routing figures the targets are stated in (``eval.quality.routing_shares``), for one group."""
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


def add_folder(digest: Any, folder: Path, limit_bytes: int) -> None:
    """Feed a dataset folder's catalog hash and query file into ``digest`` (what a fit is made from)."""
    paths = check_dataset_dir(folder)
    digest.update(catalog_files_hash(paths, limit_bytes).encode())
    digest.update(read_bytes_limited(paths.queries, limit_bytes=limit_bytes, what="query file"))


def _fingerprints(args: Sequence[DatasetArg], limit_bytes: int) -> list[dict[str, Any]]:
    out = []
    for arg in args:
        digest = hashlib.sha256()
        for folder in arg.folders:
            add_folder(digest, folder, limit_bytes)
        out.append({"dataset": arg.name, "catalogs": len(arg.folders), "sha256": digest.hexdigest()})
    return out


def calibrate(
    settings: Settings,
    datasets: Sequence[str | Path],
    *,
    version: str,
    holdout: Sequence[str | Path] = (),
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    folds: int = FOLDS,
    jobs: int = 1,
    judges: Mapping[str, Path] | None = None,
) -> tuple[Calibration, list[Example], list[Example]]:
    """Fit on ``datasets``; score the fit's cross-validation and the ``holdout`` sets. ``jobs`` > 1
    resolves the catalogs in that many worker processes (each loads its own model; no progress). A
    dataset ``judges`` names is read with that capability judge (one trained without its family)."""
    fit_args, holdout_args = named_datasets(datasets), named_datasets(holdout)
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
                    with_judge(settings, judges or {}, name),
                    f,
                    dataset=name,
                    reference=reference,
                    embedder=embedder,
                    progress=progress,
                )
                for f, name in work
            ]
        else:  # one model per worker process; results come back in order
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                found = list(
                    pool.map(
                        collect_in_worker,
                        [(with_judge(settings, judges or {}, name), f, name, reference) for f, name in work],
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
    thresholds = settings.confidence.thresholds
    calibration = fit.calibration
    calibration.provenance = {
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "fit": {
            "recipe": RECIPE.name,
            "features": list(RECIPE.features),
            "learner": RECIPE.learner,
            "monotone": list(RECIPE.monotone),
            "boosting": RECIPE.boosting,
            "weighting": RECIPE.weighting,
            "isotonic": "out-of-fold",
            "folds": folds,
            "grouped_by": "catalog",
        },
        "weighting": "every dataset argument weighs the same; within one that has both answerable and "
        f"unanswerable requests, the unanswerable ones weigh {RECIPE.weighting} of it",
        "reference": f"mean vector of the {reference_tools} distinct tools of the fit catalogs",
        "fit_datasets": _fingerprints(fit_args, settings.max_file_bytes),
        "holdout_datasets": _fingerprints(holdout_args, settings.max_file_bytes),
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
