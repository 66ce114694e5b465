"""The learned ranker: gradient-boosted trees that reorder the fused search's top candidates.

Fitted by ``tool-selector lab train-ranker`` (LightGBM's lambdarank, eval/fitting/train_ranker.py) and
exported here as plain arrays, so that scoring needs numpy only. The file is versioned JSON with its
provenance (datasets and their hashes, the retrieval settings the candidates came from, the learner) and
the figures of the held-back folds it was measured on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from tool_selector.core.errors import CalibrationError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES
from tool_selector.core.learned import read_model_file
from tool_selector.resolve.confidence import TreeEnsemble
from tool_selector.resolve.rerank.features import RANK_FEATURES

PACKAGED_RANKER = "ranker-v1.json"
RANKER_FORMAT: Literal["tool-selector-ranker/1"] = "tool-selector-ranker/1"


class RankerModel(BaseModel):
    """Trees over :data:`~tool_selector.resolve.rerank.features.RANK_FEATURES` (in ``features`` order) that
    score each of the first ``candidates`` fused hits; higher is better. Scores order one query's candidates
    only: they are not probabilities (the confidence says how sure to be)."""

    format: Literal["tool-selector-ranker/1"] = RANKER_FORMAT
    version: str
    features: list[str]
    candidates: int = Field(ge=2, le=1000)
    ensemble: TreeEnsemble
    provenance: dict[str, Any] = Field(default_factory=dict)
    figures: dict[str, Any] = Field(default_factory=dict)

    def columns(self) -> np.ndarray:
        """Where each of the model's features sits in a row of RANK_FEATURES."""
        return np.asarray([RANK_FEATURES.index(name) for name in self.features], dtype=np.int64)

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """One raw score per row of RANK_FEATURES."""
        if rows.shape[0] == 0:
            return np.zeros(0)
        return self.ensemble.raw_many(rows[:, self.columns()])

    def check(self, where: str) -> None:
        unknown = set(self.features) - set(RANK_FEATURES)
        used = self.ensemble.features_used()
        if unknown or (used and max(used) >= len(self.features)):
            raise CalibrationError(
                f"The ranker {where} does not fit this version of tool-selector (features it reads that "
                f"this version does not compute: {sorted(unknown) or 'none'}; or trees that read past its "
                f"{len(self.features)} features).",
                hint="Re-run `tool-selector lab train-ranker`, or unset ranker_file to use the packaged one.",
            )


def load_ranker(path: Path | None = None, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> RankerModel:
    """The ranker at ``path``, or the one packaged with tool-selector."""
    model, where = read_model_file(
        RankerModel,
        path,
        packaged=PACKAGED_RANKER,
        package="tool_selector.resolve.rerank",
        what="ranker",
        expected_format=RANKER_FORMAT,
        remedy="`tool-selector lab train-ranker`",
        setting="ranker_file",
        limit_bytes=limit_bytes,
    )
    model.check(where)
    return model
