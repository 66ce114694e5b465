"""Whether the confidence means what it says (the rules are in ``eval.quality.metrics``): how well it
separates
answerable from unanswerable queries (AUROC), and how close it stays to how often the top power was
right (reliability bins, expected calibration error)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Area under the ROC curve (Mann-Whitney U / (n_pos * n_neg)); a tied pair counts 0.5.

    None when either class is empty.
    """
    if not positives or not negatives:
        return None
    labelled = sorted([(v, 1) for v in positives] + [(v, 0) for v in negatives], key=lambda p: p[0])
    rank_sum_pos = 0.0
    i = 0
    while i < len(labelled):
        j = i
        while j + 1 < len(labelled) and labelled[j + 1][0] == labelled[i][0]:
            j += 1
        average_rank = (i + j) / 2.0 + 1.0  # ranks are 1-based; ties share their average rank
        rank_sum_pos += average_rank * sum(label for _, label in labelled[i : j + 1])
        i = j + 1
    n_pos, n_neg = len(positives), len(negatives)
    u = rank_sum_pos - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


class ReliabilityBin(BaseModel):
    """One bin of a reliability diagram: its lower edge, the mean confidence in it, the share of its
    queries whose top power was right, and how many queries it holds."""

    lower: float
    confidence: float
    right: float
    count: int


def reliability_bins(
    confidences: Sequence[float], outcomes: Sequence[bool], bins: int = 10
) -> list[tuple[float, float, float, int]]:
    """Per non-empty bin of equal width (tenths by default; a confidence of exactly 1 falls in the last):
    (lower edge, mean confidence, share right, count)."""
    if len(confidences) != len(outcomes):
        raise ValueError("one outcome per confidence")
    cells: dict[int, list[float]] = {}
    for c, right in zip(confidences, outcomes, strict=True):
        cell = cells.setdefault(min(int(c * bins), bins - 1), [0.0, 0.0, 0.0])
        cell[0] += 1
        cell[1] += c
        cell[2] += float(right)
    return [(b / bins, c / n, r / n, int(n)) for b, (n, c, r) in sorted(cells.items())]


def calibration_error(confidences: Sequence[float], outcomes: Sequence[bool], bins: int = 10) -> float:
    """Expected calibration error (ECE): the mean over bins (see :func:`reliability_bins`), weighted by
    each bin's share of the queries, of |the bin's mean confidence - how often it was right|. 0 for none."""
    return ece(reliability_bins(confidences, outcomes, bins), len(confidences))


def ece(cells: Sequence[tuple[float, float, float, int]], total: int) -> float:
    """ECE from the bins of :func:`reliability_bins` over ``total`` queries."""
    return sum(n / total * abs(c - r) for _, c, r, n in cells)
