"""The ``confidence`` settings group: how sure an answer is and which tier it gets
(``settings.confidence``): the calibration, the capability judge and the router's tier lines."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TierThresholds(BaseModel):
    """The router's tier lines (lower bounds, inclusive), on two probabilities (tool_selector/route/tiers.py):
    ``activated`` on P(the top power is right); ``multiple_matches`` and ``weak_matches`` on P(a right
    power is among the top three)."""

    activated: float = Field(default=0.85, description="P(the top power is right) for activated")
    multiple_matches: float = Field(
        default=0.7, description="P(a right power in the top three) for multiple_matches"
    )
    weak_matches: float = Field(
        default=0.2,
        description="P(a right power in the top three) for weak_matches; below it, not_found "
        "(0.2: the highest line that sends at most 2 % of answerable requests to not_found, judged "
        "leave-one-dataset-out; docs/measurements.md)",
    )

    @model_validator(mode="after")
    def _ordered(self) -> TierThresholds:
        if not (0.0 <= self.weak_matches <= self.multiple_matches <= 1.0 and 0.0 <= self.activated <= 1.0):
            raise ValueError(
                "tier thresholds must lie within 0..1 and satisfy weak_matches <= multiple_matches"
            )
        return self


class ConfidenceSettings(BaseModel):
    """The confidence of an answer (tool_selector/resolve/confidence.py, judge.py) and the tiers it is
    routed by (tool_selector/route/tiers.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thresholds: TierThresholds = Field(default_factory=TierThresholds, description="the router's tier lines")
    calibration_file: Path | None = Field(default=None, description="None = the packaged calibration")
    judge: bool = Field(
        default=True,
        description="read the capability judge's verdict on the top tool in the confidence (a small "
        "cross-encoder: can this tool do what the request asks? tool_selector/resolve/judge.py); the "
        "packaged calibration needs it",
    )
    judge_dir: Path | None = Field(default=None, description="None = the packaged capability judge")
