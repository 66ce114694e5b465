"""Absolute confidence: a logistic model over query-independent evidence, fitted on labelled data.

Fused hybrid scores are rescaled per query (the best hit of any query scores ~1, nonsense included),
so they order candidates but cannot say how sure we are. The confidence instead reads evidence whose
scale does not depend on the query: the cosine of the best tool (our own vectors, so every backend
computes it identically), how far the best power stands above the next, and how much of the best
tool's and power's names the query actually mentions. A logistic model maps that evidence to the
probability that the top power is right; it is fitted by ``tool-selector calibrate`` on labelled
queries that include unanswerable ones, and shipped as a versioned JSON file.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from tool_selector.errors import CalibrationError
from tool_selector.models import PowerCandidate, SearchHit
from tool_selector.search.text import tokenize

FEATURES: tuple[str, ...] = (
    "top_cosine",
    "cosine_margin",
    "tool_name_overlap",
    "server_name_overlap",
    "query_terms_log",
)
PACKAGED_CALIBRATION = "confidence-v1.json"
_GENERIC_NAME_TOKENS = frozenset(tokenize("mcp server model context protocol tool tools api"))


class LogisticModel(BaseModel):
    """p = sigmoid(bias + sum(weight * (x - mean) / scale)) over named evidence."""

    features: list[str]
    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]

    def probability(self, evidence: dict[str, float]) -> float:
        z = self.bias
        for name, w, m, s in zip(self.features, self.weights, self.mean, self.scale, strict=True):
            z += w * (evidence.get(name, 0.0) - m) / s
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def check(self, where: str) -> None:
        unknown = set(self.features) - set(FEATURES)
        lengths = {len(self.features), len(self.weights), len(self.mean), len(self.scale)}
        if unknown or len(lengths) != 1 or any(s <= 0 for s in self.scale):
            raise CalibrationError(
                f"The confidence calibration {where} does not fit this version (unknown features "
                f"{sorted(unknown)}, lengths that differ, or a scale that is not positive).",
                hint="Re-run `tool-selector calibrate`.",
            )


class Calibration(BaseModel):
    """Two fitted models and how they combine into one confidence.

    ``answerable``: P(some configured power answers the query), fitted on answerable against
    unanswerable queries. ``correct``: P(the top power is right | answerable), fitted on answerable
    queries. Confidence = P(answerable) x P(correct | answerable), the probability that the top power
    is right, with one rule on top: when the query is more likely answerable than not, the
    confidence is at least ``floor`` (the weak_matches line), and when it is not, below it. So
    not_found means "nothing configured fits", never "something fits but we are unsure which".
    """

    version: str
    answerable: LogisticModel
    correct: LogisticModel
    floor: float = Field(default=0.3, ge=0.0, le=1.0)
    provenance: dict[str, Any] = Field(default_factory=dict)

    def probability(self, evidence: dict[str, float]) -> float:
        p_answerable = self.answerable.probability(evidence)
        joint = p_answerable * self.correct.probability(evidence)
        if p_answerable >= 0.5:
            return max(joint, self.floor)
        return min(joint, max(self.floor - 0.001, 0.0))


def load_calibration(path: Path | None = None) -> Calibration:
    """The calibration at ``path``, or the one packaged with tool-selector."""
    try:
        if path is None:
            text = resources.files("tool_selector.calibration").joinpath(PACKAGED_CALIBRATION).read_text()
            where = f"packaged {PACKAGED_CALIBRATION}"
        else:
            text = path.read_text(encoding="utf-8")
            where = str(path)
    except (OSError, FileNotFoundError) as exc:
        raise CalibrationError(
            f"Cannot read the confidence calibration {path or PACKAGED_CALIBRATION}: {exc}.",
            hint="Point calibration_file at a file written by `tool-selector calibrate`, or unset it.",
        ) from exc
    try:
        calibration = Calibration.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise CalibrationError(
            f"The confidence calibration {where} is malformed: {exc}.",
            hint="Re-run `tool-selector calibrate` to write a fresh one.",
        ) from exc
    calibration.answerable.check(where)
    calibration.correct.check(where)
    return calibration


def _overlap(name: str, query_tokens: set[str]) -> float:
    tokens = set(tokenize(name)) - _GENERIC_NAME_TOKENS
    if not tokens:
        return 0.0
    return len(tokens & query_tokens) / len(tokens)


def evidence_of(query: str, hits: list[SearchHit], powers: list[PowerCandidate]) -> dict[str, float]:
    """The confidence features of one resolution; every one of them is absolute."""
    query_tokens = set(tokenize(query))
    cosines = [h.vector_score for h in hits if h.vector_score is not None]
    top_cosine = max(cosines) if cosines else 0.0
    best_by_server: dict[str, float] = {}
    for hit in hits:
        if hit.vector_score is not None:
            best_by_server[hit.server] = max(best_by_server.get(hit.server, -1.0), hit.vector_score)
    margin = 0.0
    if powers:
        top = best_by_server.get(powers[0].name, 0.0)
        others = [v for k, v in best_by_server.items() if k != powers[0].name]
        margin = top - (max(others) if others else 0.0)
    top_tool = hits[0] if hits else None
    return {
        "top_cosine": float(top_cosine),
        "cosine_margin": float(margin),
        "tool_name_overlap": _overlap(top_tool.name, query_tokens) if top_tool else 0.0,
        "server_name_overlap": _overlap(powers[0].name, query_tokens) if powers else 0.0,
        "query_terms_log": math.log1p(len(query_tokens)),
    }


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    l2: float = 1.0,
    iterations: int = 50,
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """L2-regularised logistic regression by Newton's method on standardised features.

    Returns (weights, bias, mean, scale). Deterministic: same data, same model.
    """
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] < 2:
        raise ValueError("need a 2-D feature matrix with one label per row and at least two rows")
    if len(set(y.tolist())) < 2:
        raise ValueError("need both positive and negative examples to fit a calibration")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((x.shape[0], 1)), (x - mean) / scale])
    weight = np.ones(x.shape[0]) if sample_weight is None else sample_weight.astype(float)
    beta = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * l2
    penalty[0, 0] = 0.0  # the bias is not shrunk
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -40, 40)))
        gradient = z.T @ (weight * (p - y)) + penalty @ beta
        hessian = (z * (weight * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta[1:], float(beta[0]), mean, scale
