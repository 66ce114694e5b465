"""Absolute confidence: two fitted probabilities read off a resolution's evidence.

Fused hybrid scores are rescaled per query (the best hit of any query scores ~1, nonsense included),
so they order candidates but cannot say how sure we are. The router reads two probabilities instead,
each fitted by ``tool-selector lab calibrate`` on labelled queries from catalogs of 5 to 491 servers in
three phrasing styles, unanswerable ones included:

- ``top``: P(the top power is right), the ``confidence`` every answer carries;
- ``top3``: P(a right power is among the top three), which separates "pick one of these" from
  "something may fit" from "nothing configured fits" (see ``tool_selector/route/tiers.py``).

Each is a gradient-boosted tree ensemble (fitted with scikit-learn, exported here as plain arrays)
followed by an isotonic map fitted on out-of-fold predictions, so that "0.9" means right nine times
in ten on catalogs the fit did not see. Evaluating both costs well under a millisecond, with numpy
only. The file is versioned JSON with its provenance (``tool_selector/calibration/``).
"""

from __future__ import annotations

import math
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tool_selector.core.errors import CalibrationError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES
from tool_selector.core.learned import read_model_file
from tool_selector.resolve.evidence import FEATURES

PACKAGED_CALIBRATION = "confidence-v2.json"
FORMAT: Literal["tool-selector-calibration/2"] = "tool-selector-calibration/2"


class Tree(BaseModel):
    """One regression tree as parallel arrays; a leaf has feature -1 and its value."""

    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> Tree:
        n = len(self.feature)
        if n == 0 or any(len(a) != n for a in (self.threshold, self.left, self.right, self.value)):
            raise ValueError("a tree's arrays must be non-empty and of one length")
        for i, f in enumerate(self.feature):  # children come after their parent: no cycles
            if f >= 0 and not (i < self.left[i] < n and i < self.right[i] < n):
                raise ValueError(f"node {i} points outside its tree or back up it")
        return self


class TreeEnsemble(BaseModel):
    """Gradient-boosted trees: p = sigmoid(baseline + the sum of each tree's leaf for x).

    A node sends x left when ``x[feature] <= threshold`` (scikit-learn's rule for numeric splits).
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["gradient_boosted_trees"] = "gradient_boosted_trees"
    baseline: float
    trees: list[Tree]

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, ...]:
        """Every tree's nodes in flat arrays (node ids offset per tree); a leaf points at itself, so
        walking ``depth`` steps from the roots lands every tree on its leaf at once."""
        offsets = np.cumsum([0] + [len(t.feature) for t in self.trees[:-1]])
        feature = np.concatenate([np.asarray(t.feature, dtype=np.int64) for t in self.trees])
        threshold = np.concatenate([np.asarray(t.threshold, dtype=np.float64) for t in self.trees])
        value = np.concatenate([np.asarray(t.value, dtype=np.float64) for t in self.trees])
        left = np.concatenate(
            [np.asarray(t.left, dtype=np.int64) + o for t, o in zip(self.trees, offsets, strict=True)]
        )
        right = np.concatenate(
            [np.asarray(t.right, dtype=np.int64) + o for t, o in zip(self.trees, offsets, strict=True)]
        )
        leaf = feature < 0
        own = np.arange(len(feature))
        left[leaf], right[leaf] = own[leaf], own[leaf]
        return feature.clip(min=0), threshold, left, right, value, offsets.astype(np.int64)

    @cached_property
    def depth(self) -> int:
        """The longest root-to-leaf path, in splits."""

        def walk(tree: Tree, node: int) -> int:
            if tree.feature[node] < 0:
                return 0
            return 1 + max(walk(tree, tree.left[node]), walk(tree, tree.right[node]))

        return max(walk(t, 0) for t in self.trees)

    def raw(self, x: np.ndarray) -> float:
        """The ensemble's log-odds for one feature vector."""
        feature, threshold, left, right, value, node = self._arrays
        for _ in range(self.depth):
            node = np.where(x[feature[node]] <= threshold[node], left[node], right[node])
        return self.baseline + float(value[node].sum())

    @cached_property
    def _children(self) -> np.ndarray:
        """Each node's left child at 2 x node, its right one at 2 x node + 1."""
        _, _, left, right, _, _ = self._arrays
        return np.ascontiguousarray(np.stack([left, right], axis=1)).ravel()

    def raw_many(self, rows: np.ndarray) -> np.ndarray:
        """The ensemble's raw output for each row of ``rows`` (n x features), all trees at once: one
        gather per level over the flat rows (right when not ``x <= threshold``, so NaN goes right)."""
        feature, threshold, _, _, value, roots = self._arrays
        children = self._children
        flat = np.ascontiguousarray(rows, dtype=np.float64).ravel()
        base = (np.arange(rows.shape[0], dtype=np.int64) * rows.shape[1])[:, None]
        node = np.broadcast_to(roots, (rows.shape[0], roots.shape[0])).copy()
        for _ in range(self.depth):
            node = children[2 * node + ~(flat[base + feature[node]] <= threshold[node])]
        return np.asarray(self.baseline + value[node].sum(axis=1), dtype=np.float64)

    def probability(self, x: np.ndarray) -> float:
        z = max(min(self.raw(x), 40.0), -40.0)
        return 1.0 / (1.0 + math.exp(-z))

    def features_used(self) -> set[int]:
        return {f for t in self.trees for f in t.feature if f >= 0}


class Logistic(BaseModel):
    """A logistic regression on standardised features: p = sigmoid(intercept + sum_i w_i (x_i - mean_i)
    / scale_i). Few features and one direction each: what carries over to catalogs the fit never saw."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["logistic"] = "logistic"
    intercept: float
    coefficients: list[float]
    mean: list[float]
    scale: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> Logistic:
        n = len(self.coefficients)
        if n == 0 or len(self.mean) != n or len(self.scale) != n or any(v <= 0 for v in self.scale):
            raise ValueError("a logistic head needs as many means and positive scales as coefficients")
        return self

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.asarray(self.coefficients, dtype=np.float64),
            np.asarray(self.mean, dtype=np.float64),
            np.asarray(self.scale, dtype=np.float64),
        )

    def raw(self, x: np.ndarray) -> float:
        w, mean, scale = self._arrays
        return self.intercept + float(w @ ((x[: len(w)] - mean) / scale))

    def probability(self, x: np.ndarray) -> float:
        z = max(min(self.raw(x), 40.0), -40.0)
        return 1.0 / (1.0 + math.exp(-z))

    def features_used(self) -> set[int]:
        return {i for i, w in enumerate(self.coefficients) if w != 0}


class Isotonic(BaseModel):
    """A non-decreasing map from a raw probability to a calibrated one, linear between its points
    and flat beyond them (scikit-learn's IsotonicRegression with out_of_bounds='clip')."""

    x: list[float]
    y: list[float]

    @model_validator(mode="after")
    def _monotone(self) -> Isotonic:
        if not self.x or len(self.x) != len(self.y):
            raise ValueError("an isotonic map needs as many y as x values, at least one")
        if any(b < a for a, b in zip(self.x, self.x[1:], strict=False)) or any(
            b < a for a, b in zip(self.y, self.y[1:], strict=False)
        ):
            raise ValueError("an isotonic map must be non-decreasing")
        return self

    def __call__(self, p: float) -> float:
        return float(np.interp(p, self.x, self.y))


class Head(BaseModel):
    """One fitted probability: the model's output (trees, or a logistic regression) through its isotonic
    map."""

    ensemble: TreeEnsemble | Logistic
    isotonic: Isotonic

    def probability(self, x: np.ndarray) -> float:
        return min(max(self.isotonic(self.ensemble.probability(x)), 0.0), 1.0)


class Calibration(BaseModel):
    """The two fitted heads, the features they read (in order) and the reference centroid.

    ``reference`` is the mean of the tool vectors of every catalog the fit saw; the evidence measures
    how close a query is to it (a generic request is close to every tool). ``probabilities`` keeps
    P(top three) >= P(top): the first is an event that includes the second.
    """

    format: Literal["tool-selector-calibration/2"] = FORMAT
    version: str
    features: list[str]
    reference: list[float] = Field(default_factory=list)
    top: Head
    top3: Head
    provenance: dict[str, Any] = Field(default_factory=dict)

    @cached_property
    def reference_vector(self) -> np.ndarray:
        return np.asarray(self.reference, dtype=np.float32)

    def vector_of(self, evidence: dict[str, float]) -> np.ndarray:
        return np.array([evidence.get(name, 0.0) for name in self.features])

    def probabilities(self, evidence: dict[str, float]) -> tuple[float, float]:
        """(P(top power right), P(a right power in the top three)) for one resolution's evidence."""
        x = self.vector_of(evidence)
        top = self.top.probability(x)
        return top, max(self.top3.probability(x), top)

    def check(self, where: str) -> None:
        unknown = set(self.features) - set(FEATURES)
        used = self.top.ensemble.features_used() | self.top3.ensemble.features_used()
        heads = (self.top.ensemble, self.top3.ensemble)
        sizes = {len(h.coefficients) for h in heads if isinstance(h, Logistic)} - {len(self.features)}
        if unknown or (used and max(used) >= len(self.features)) or sizes:
            raise CalibrationError(
                f"The confidence calibration {where} does not fit this version of tool-selector "
                f"(features it reads that this version does not compute: {sorted(unknown) or 'none'}; "
                f"or trees that read past its {len(self.features)} features).",
                hint="Re-run `tool-selector lab calibrate`, or unset calibration_file to use the packaged "
                "one.",
            )


def load_calibration(path: Path | None = None, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Calibration:
    """The calibration at ``path`` (at most ``limit_bytes``: the ``max_file_bytes`` setting), or the one
    packaged with tool-selector."""
    calibration, where = read_model_file(
        Calibration,
        path,
        packaged=PACKAGED_CALIBRATION,
        package="tool_selector.calibration",
        what="confidence calibration",
        expected_format=FORMAT,
        remedy="`tool-selector lab calibrate`",
        setting="calibration_file",
        limit_bytes=limit_bytes,
    )
    calibration.check(where)
    return calibration
