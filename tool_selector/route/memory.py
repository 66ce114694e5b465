"""Confirmed choices in the decision: a request close to one the agent resolved and then served with a
tool of the power it chose can activate that power.

A remembered choice is *usable* for a request when its power is one of the resolver's first
``CANDIDATES`` powers for it (memory never makes a candidate of a power the resolver did not find), the
power still has the tools it had (the hash of their shown definitions: a change, or a tool held in
quarantine, and the choice stops counting; its tool must still be there), it was confirmed more often
than refuted, not longer ago than ``max_age_days``, and the two requests (both with their arguments
taken out) are at least ``FLOOR`` close (cosine).

The closest usable choice is judged by ``MemoryModel``: a logistic regression over five features,
fitted on replays (eval/fitting/memory_fit.py) and judged leave-one-dataset-out there:
- ``similarity``: the cosine of the two requests;
- ``margin``: how much closer it is than the closest usable remembered request of another power (or than
  ``FLOOR`` when there is none);
- ``confirmations``: log(1 + confirmed - refuted) of that choice;
- ``top3``: the resolver's own P(a right power among the top three);
- ``rank``: 1 / (1 + the power's place among the resolver's candidates).
Its probability that the remembered power is right becomes the decision's confidence when it reaches the
``activated`` line and the remembered request is at least ``ACTIVATE_FROM`` close; a decision the resolver
already activated is left as it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from tool_selector.config.confidence import TierThresholds
from tool_selector.core.learned import read_model_file
from tool_selector.core.models import Decision, MatchType
from tool_selector.route.tiers import PowerInfo, tools_hash

CANDIDATES = 5  # the resolver's first powers a remembered choice must be among
FLOOR = 0.35  # no remembered request less close than this is looked at (paraphrases: median 0.60)
# and none activates anything below this: requests no configured power serves that sat near a remembered
# one of a power that seemed to fit (near-domain: "push my commits" beside "commit my changes") were
# 0.55-0.73 close in the replays, paraphrases of the same intent 0.41-0.79 (median 0.60); memory
# activates the same request with other arguments and close rewordings, never a neighbouring request
ACTIVATE_FROM = 0.75
FEATURES = ("similarity", "margin", "confirmations", "top3", "rank")
MEMORY_FORMAT: Literal["tool-selector-memory/1"] = "tool-selector-memory/1"
MEMORY_FILE = "memory-v1.json"  # tool_selector/calibration/: eval/fitting/memory_fit.py writes it


class MemoryModel(BaseModel):
    """P(the remembered power is right) = sigmoid(intercept + sum_i w_i (x_i - mean_i) / scale_i)."""

    model_config = ConfigDict(frozen=True)

    format: Literal["tool-selector-memory/1"] = MEMORY_FORMAT
    version: str
    features: list[str] = Field(default_factory=lambda: list(FEATURES))
    intercept: float
    coefficients: list[float]
    mean: list[float]
    scale: list[float]
    provenance: dict[str, object] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> MemoryModel:
        n = len(self.features)
        sizes = (len(self.coefficients), len(self.mean), len(self.scale))
        if sizes != (n, n, n) or any(v <= 0 for v in self.scale):
            raise ValueError(
                "the memory's judge needs a coefficient, a mean and a positive scale per feature"
            )
        return self

    def probability(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(
            w * (v - m) / s for w, v, m, s in zip(self.coefficients, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


@dataclass(frozen=True)
class Remembered:
    """One confirmed choice as the recall reads it."""

    id: int
    power: str
    tool: str
    tools_hash: str
    confirmed: int
    refuted: int
    confirmed_at: datetime


@dataclass(frozen=True)
class Recalled:
    choice: Remembered
    similarity: float
    features: tuple[float, ...]


@dataclass(frozen=True)
class _Block:
    """The remembered choices of one power and their vectors, one row each."""

    choices: tuple[Remembered, ...]
    matrix: np.ndarray


class ChoiceIndex:
    """The remembered choices of one principal and embedding model, their vectors in one matrix per power,
    so a recall reads only the rows of the resolver's candidates (cosine by a product), and a change
    rebuilds only the blocks of the powers it touches (``changed``). Never changed in place: a reader in
    another thread keeps the index it has."""

    def __init__(self, choices: Sequence[Remembered], vectors: np.ndarray) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        matrix = matrix.reshape(len(choices), -1) if choices else np.zeros((0, 0), np.float32)
        grouped: dict[str, list[int]] = {}
        for i, choice in enumerate(choices):
            grouped.setdefault(choice.power, []).append(i)
        self._blocks = {
            power: _Block(tuple(choices[i] for i in rows), np.ascontiguousarray(matrix[rows]))
            for power, rows in grouped.items()
        }
        self._power_of = {c.id: c.power for c in choices}

    @classmethod
    def _of(cls, blocks: dict[str, _Block]) -> ChoiceIndex:
        index = cls([], np.zeros((0, 0), np.float32))
        index._blocks = blocks
        index._power_of = {c.id: power for power, block in blocks.items() for c in block.choices}
        return index

    def __len__(self) -> int:
        return len(self._power_of)

    def changed(
        self, put: Sequence[tuple[Remembered, np.ndarray]], drop: Collection[int] = ()
    ) -> ChoiceIndex:
        """A new index with these choices put in (each replacing the one of its id) and the ids ``drop``
        taken out; the blocks of other powers are shared with this one."""
        gone = set(drop) | {c.id for c, _ in put}
        touched = {self._power_of[i] for i in gone if i in self._power_of} | {c.power for c, _ in put}
        blocks = dict(self._blocks)
        for power in touched:
            old = self._blocks.get(power)
            kept = [i for i, c in enumerate(old.choices) if c.id not in gone] if old is not None else []
            added = [(c, v) for c, v in put if c.power == power]
            choices = tuple(old.choices[i] for i in kept) if old is not None else ()
            choices += tuple(c for c, _ in added)
            if not choices:
                blocks.pop(power, None)
                continue
            parts = [old.matrix[kept]] if old is not None and kept else []
            parts += [np.asarray(v, dtype=np.float32).reshape(1, -1) for _, v in added]
            blocks[power] = _Block(choices, np.ascontiguousarray(np.concatenate(parts)))
        return ChoiceIndex._of(blocks)

    def recall(
        self,
        vector: np.ndarray,
        ranked: Sequence[str],
        powers: Mapping[str, PowerInfo],
        top3: float,
        *,
        max_age_days: float,
        now: datetime | None = None,
        hash_of: Callable[[str], str] | None = None,
    ) -> Recalled | None:
        """The closest usable remembered choice for a request whose resolver ranked the powers ``ranked``
        (best first), with its features; None when there is none. ``hash_of(name)``: the power's
        ``tools_hash`` from a cache (hashing every candidate's tools costs more than the recall)."""
        places = {name: i for i, name in enumerate(ranked[:CANDIDATES]) if name in powers}
        query = np.asarray(vector, dtype=np.float32)
        close: list[tuple[float, Remembered]] = []
        for name in places:
            block = self._blocks.get(name)
            if block is None or block.matrix.shape[1] != query.shape[0]:
                continue
            scores = block.matrix @ query
            close += [(float(scores[j]), block.choices[j]) for j in np.flatnonzero(scores >= FLOOR)]
        if not close:
            return None
        close.sort(key=lambda found: -found[0])
        oldest = (now or datetime.now(UTC)) - timedelta(days=max_age_days)
        hashes: dict[str, str] = {}
        usable: list[tuple[float, Remembered]] = []
        for score, choice in close:
            if choice.confirmed <= choice.refuted or choice.confirmed_at < oldest:
                continue
            info = powers[choice.power]
            if choice.power not in hashes:
                hashes[choice.power] = hash_of(choice.power) if hash_of is not None else tools_hash(info)
            if hashes[choice.power] != choice.tools_hash or all(t.name != choice.tool for t in info.tools):
                continue
            usable.append((score, choice))
        if not usable:
            return None
        best_score, best = usable[0]
        rival = next((s for s, c in usable if c.power != best.power), FLOOR)
        features = (
            best_score,
            best_score - rival,
            math.log1p(best.confirmed - best.refuted),
            top3,
            1.0 / (1.0 + places[best.power]),
        )
        return Recalled(best, best_score, features)


def apply_memory(
    decision: Decision,
    recalled: Recalled,
    probability: float,
    powers: Mapping[str, PowerInfo],
    thresholds: TierThresholds,
) -> Decision:
    """The decision activated by the remembered choice when ``probability`` reaches the activated line;
    else as it was."""
    unsure = probability < thresholds.activated or recalled.similarity < ACTIVATE_FROM
    if decision.status == "activated" or decision.parts or unsure:
        return decision
    info = powers[recalled.choice.power]
    tool = recalled.choice.tool
    ordered = [tool] + [t.name for t in info.tools if t.name != tool]
    names = ", ".join(ordered[:4]) + (", ..." if len(ordered) > 4 else "")
    return Decision(
        status="activated",
        power=info.name,
        match_type=MatchType.REMEMBERED,
        tools=sorted(info.tools, key=lambda t: t.name != tool),
        confidence=round(probability, 4),
        query=decision.query,
        message=(
            f"Activated '{info.name}' ({probability:.0%} sure): a request like this was served by its tool "
            f"{tool} before ({recalled.choice.confirmed}x here). Call the one of its tools ({names}) that "
            "does the request; if it is the wrong power, call deactivate_power and ask the user."
        ),
    )


def load_memory_model() -> MemoryModel | None:
    """The memory's judge shipped in the package (tool_selector/calibration/memory-v1.json), read by the
    one loader of learned files; None only before the first ``lab memory-fit`` wrote it (then the memory
    records but never decides). The composition root loads it once (``Container.memory_model``)."""
    from importlib import resources

    if not resources.files("tool_selector.calibration").joinpath(MEMORY_FILE).is_file():
        return None
    model, _ = read_model_file(
        MemoryModel,
        None,
        packaged=MEMORY_FILE,
        package="tool_selector.calibration",
        what="memory's judge",
        expected_format=MEMORY_FORMAT,
        remedy="`tool-selector lab memory-fit`",
        setting=None,
    )
    return model
