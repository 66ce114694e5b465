"""The fit of ``tool-selector lab calibrate`` (scikit-learn): per head, a gradient-boosted tree ensemble on
the evidence, then an isotonic map fitted on out-of-fold predictions, folds grouped by catalog so that
no catalog is both fitted on and scored; every dataset weighs the same. The ensembles are exported as
plain arrays, which is all the read path needs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.fitting.calibrate_evidence import Example
from tool_selector.core.errors import CalibrationError
from tool_selector.resolve.confidence import Calibration, Head, Isotonic, Tree, TreeEnsemble
from tool_selector.resolve.evidence import FEATURES

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
