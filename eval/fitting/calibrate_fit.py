"""The fit of ``tool-selector lab calibrate`` (scikit-learn): per head, a gradient-boosted tree ensemble on
the evidence, then an isotonic map fitted on out-of-fold predictions, folds grouped by catalog so that
no catalog is both fitted on and scored; every dataset weighs the same. The ensembles are exported as
plain arrays, which is all the read path needs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eval.extras import lab_import
from eval.fitting.calibrate_evidence import Example
from tool_selector.core.errors import CalibrationError
from tool_selector.resolve.confidence import Calibration, Head, Isotonic, Logistic, Tree, TreeEnsemble
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


@dataclass(frozen=True)
class Recipe:
    """What a head is fitted on and how: its features; the learner (``trees``: gradient boosting with
    ``boosting`` and a direction each feature may move the probability, ``monotone``: +1 up only, -1
    down only, 0 free; ``logistic``: a logistic regression on standardised features); and the weighting
    (``halves``: the answerable and unanswerable halves of a dataset weigh the same; a number: the share
    its unanswerable requests weigh; ``natural``: a dataset's requests weigh alike, so its own share of
    requests nothing serves stands)."""

    name: str
    features: tuple[str, ...]
    learner: str = "trees"
    monotone: tuple[int, ...] = ()
    boosting: dict[str, Any] = field(default_factory=dict)
    weighting: str | float = "halves"


# every feature the evidence computes, free to move either way: the recipe of confidence-v2 (issue 30's
# "before"), kept to be measured against
ALL_FEATURES = Recipe("all features", FEATURES, "trees", (0,) * len(FEATURES), BOOSTING, "halves")
# a few features that read meaning (``lab calibrate-lodo`` judged them; docs/measurements.md)
FEW = (
    "cosine_margin",  # the relevance model's lead of the top power's best tool over the next power's
    "power_margin",  # the fused ranking's lead of the first power over the second
    "top_power_cosine",  # the relevance model's similarity of the request and the top power's best tool
    "catalog_coverage",  # the request's words (IDF-weighted) found anywhere in the catalog
    "action_match",  # capability fit: the top tool's verb and object said in the request
    "argument_fit",  # the request's typed arguments its top tool's parameters take
    "tool_coverage",  # the request's words the top tool's text holds
    "runner_up_coverage",  # ... that the second power holds: a second fit makes the first less sure
)
STURDY = Recipe(
    "few, monotone trees",
    FEW,
    "trees",
    (1, 1, 1, 1, 1, 1, 1, -1),
    {**BOOSTING, "max_depth": 2, "max_iter": 150},
)
LOGISTIC = Recipe("few, logistic", FEW, "logistic", weighting="natural")
# the same, each coefficient kept to the direction the feature means (runner-up coverage: down only)
SIGNED = Recipe("few, signed logistic", FEW, "logistic", (1, 1, 1, 1, 1, 1, 1, -1), weighting="natural")
# the same with the capability judge's verdict on the top tool (issue 41: tool_selector/resolve/judge.py)
JUDGED = Recipe("few + judge, logistic", (*FEW, "capability"), "logistic", weighting="natural")
RECIPES = {r.name: r for r in (ALL_FEATURES, STURDY, LOGISTIC, SIGNED, JUDGED)}
RECIPE = JUDGED  # what `lab calibrate` fits: chosen by `lab calibrate-lodo` (docs/measurements.md, issue 41)


def _matrix(examples: Sequence[Example], features: Sequence[str]) -> np.ndarray:
    return np.array([[e.evidence.get(f, 0.0) for f in features] for e in examples], dtype=np.float64)


def dataset_weights(examples: Sequence[Example], weighting: str | float = "halves") -> np.ndarray:
    """Every dataset weighs the same in total; within a dataset that has both answerable and
    unanswerable requests, the unanswerable ones weigh ``weighting`` of it (``halves``: 0.5, a prior of
    one half whatever the cut) or, with ``natural``, what their number makes them. The weights average
    1."""
    unanswerable = 0.5 if weighting == "halves" else weighting
    datasets = Counter(e.dataset for e in examples)
    halves = Counter((e.dataset, e.answerable) for e in examples)
    weight = []
    for e in examples:
        both = isinstance(unanswerable, float) and halves[(e.dataset, not e.answerable)] > 0
        if both and isinstance(unanswerable, float):
            part = unanswerable if not e.answerable else 1.0 - unanswerable
            share = part / halves[(e.dataset, e.answerable)]
        else:
            share = 1.0 / datasets[e.dataset]
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


def _boosted(x: np.ndarray, y: np.ndarray, weight: np.ndarray, recipe: Recipe = ALL_FEATURES) -> Any:
    """The recipe's learner fitted (scikit-learn: the fit only, never on the read path)."""
    trees = lab_import("sklearn.ensemble", "Fitting the confidence")

    if len(set(y.tolist())) < 2:
        raise CalibrationError(
            "Every request of the fit data resolves the same way (all right or all wrong), so a confidence "
            "cannot be fitted on it.",
            hint="Add datasets with unanswerable requests (gold-removed cuts of make_subcatalogs.py) and "
            "with answerable ones.",
        )
    if recipe.learner == "logistic":
        return SignedLogistic(recipe.monotone or (0,) * x.shape[1]).fit(x, y, weight)
    return trees.HistGradientBoostingClassifier(**recipe.boosting, monotonic_cst=list(recipe.monotone)).fit(
        x, y, sample_weight=weight
    )


class SignedLogistic:
    """A logistic regression on standardised features whose every coefficient keeps the sign its recipe
    gives it (+1: at least 0, -1: at most 0, 0: free), so that more of a feature never moves the
    probability the wrong way on a catalog the fit never saw: scipy's L-BFGS-B on the weighted log-loss
    plus scikit-learn's L2 penalty at C = 1."""

    def __init__(self, signs: Sequence[int]) -> None:
        self.signs = tuple(signs)
        self.intercept = 0.0
        self.coefficients = np.zeros(len(self.signs))
        self.mean = np.zeros(len(self.signs))
        self.scale = np.ones(len(self.signs))

    def fit(self, x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> SignedLogistic:
        minimize = lab_import("scipy.optimize", "Fitting the confidence").minimize  # the fit only

        self.mean = x.mean(axis=0)
        self.scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        z = (x - self.mean) / self.scale
        target = y.astype(np.float64)

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            t = theta[0] + z @ theta[1:]
            p = 1.0 / (1.0 + np.exp(-np.clip(t, -40, 40)))
            value = float(weight @ (np.logaddexp(0.0, t) - target * t)) + 0.5 * float(theta[1:] @ theta[1:])
            residual = weight * (p - target)
            return value, np.concatenate([[residual.sum()], z.T @ residual + theta[1:]])

        bounds = [(None, None)] + [
            (0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in self.signs
        ]
        found = minimize(loss, np.zeros(len(self.signs) + 1), jac=True, method="L-BFGS-B", bounds=bounds)
        self.intercept, self.coefficients = float(found.x[0]), found.x[1:]
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        t = self.intercept + ((x - self.mean) / self.scale) @ self.coefficients
        p = 1.0 / (1.0 + np.exp(-np.clip(t, -40, 40)))
        return np.stack([1.0 - p, p], axis=1)


def export_model(model: Any) -> TreeEnsemble | Logistic:
    """A fitted learner as the plain arrays the read path scores with."""
    if not isinstance(model, SignedLogistic):
        return export_ensemble(model)
    return Logistic(
        intercept=round(model.intercept, 7),
        coefficients=[round(float(v), 7) for v in model.coefficients],
        mean=[round(float(v), 7) for v in model.mean],
        scale=[round(float(v), 7) for v in model.scale],
    )


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
    """The isotonic map of raw probabilities to calibrated ones, centred: each flat block of the fitted
    step function becomes one point at its weighted mean raw value, joined by straight lines, from (0, 0)
    to (1, 1). A step function gives every raw value of a block the same probability (seven unrelated
    answers all read 0.1468); the centred map keeps the fit's calibration and still tells them apart."""
    isotonic = lab_import("sklearn.isotonic", "Fitting the confidence")

    fitted = isotonic.IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
        raw, y, sample_weight=weight
    )
    return Isotonic(**centred_points(raw, fitted.predict(raw), weight))


def centred_points(raw: np.ndarray, fitted: np.ndarray, weight: np.ndarray) -> dict[str, list[float]]:
    """The points of a centred isotonic map (see :func:`_isotonic`) from the raw values, their fitted
    isotonic values and their weights: one point per block of equal fitted value, strictly increasing in
    both coordinates, with (0, 0) and (1, 1) at the ends."""
    order = np.argsort(raw, kind="stable")
    raw, fitted, weight = raw[order], fitted[order], weight[order]
    xs: list[float] = []
    ys: list[float] = []
    start = 0
    for end in range(1, len(raw) + 1):
        if end < len(raw) and fitted[end] == fitted[start]:
            continue
        w = weight[start:end]
        x = float(np.average(raw[start:end], weights=w)) if w.sum() > 0 else float(raw[start:end].mean())
        if not xs or (x > xs[-1] and fitted[start] > ys[-1]):
            xs.append(x)
            ys.append(float(fitted[start]))
        start = end
    # the ends: a block fitted at 0 (or 1) starts (ends) the line at the origin (at (1, 1)) rather than
    # giving every raw value below (above) its centre the same 0 (1)
    if xs and ys[0] <= 0.0:
        xs.pop(0), ys.pop(0)
    if xs and ys[-1] >= 1.0:
        xs.pop(), ys.pop()
    xs, ys = [0.0, *xs, 1.0], [0.0, *ys, 1.0]
    return {"x": [round(v, 6) for v in xs], "y": [round(v, 6) for v in ys]}


@dataclass
class Fit:
    calibration: Calibration
    out_of_fold: dict[str, np.ndarray]  # head -> calibrated out-of-fold probability per example


def fit_heads(
    examples: Sequence[Example],
    *,
    version: str,
    reference: np.ndarray,
    folds: int = FOLDS,
    recipe: Recipe = RECIPE,
) -> Fit:
    """Both heads on the examples by ``recipe``: grouped out-of-fold predictions, isotonic maps on them,
    final ensembles on everything."""
    features = list(recipe.features)
    x = _matrix(examples, features)
    weight = dataset_weights(examples, recipe.weighting)
    fold = np.array(grouped_folds(examples, folds))
    heads: dict[str, Head] = {}
    out_of_fold: dict[str, np.ndarray] = {}
    for head in HEADS:
        y = np.array([e.label(head) for e in examples], dtype=int)
        raw = np.zeros(len(examples))
        for f in range(folds):
            train, test = fold != f, fold == f
            if test.any():
                raw[test] = _boosted(x[train], y[train], weight[train], recipe).predict_proba(x[test])[:, 1]
        isotonic = _isotonic(raw, y, weight)
        heads[head] = Head(ensemble=export_model(_boosted(x, y, weight, recipe)), isotonic=isotonic)
        out_of_fold[head] = np.array([isotonic(p) for p in raw])
    calibration = Calibration(
        version=version,
        features=features,
        reference=[round(float(v), 7) for v in reference],
        top=heads["top"],
        top3=heads["top3"],
    )
    return Fit(calibration, out_of_fold)
