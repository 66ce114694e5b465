"""The memory of confirmed choices: its rows in the catalog database (catalog/choices.py) and how a
remembered choice is recalled and changes a decision (route/remembered.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tool_selector.catalog import choices as rows
from tool_selector.catalog.store import CatalogStore
from tool_selector.config.settings import TierThresholds
from tool_selector.core.models import Decision, PowerSummary, ToolSummary
from tool_selector.route.remembered import (
    FLOOR,
    ChoiceIndex,
    MemoryModel,
    Remembered,
    apply_memory,
)
from tool_selector.route.tiers import PowerInfo, tools_hash

DIM = 8


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def power(name: str, *tools: str) -> PowerInfo:
    return PowerInfo(
        name=name, description=f"{name} things", tools=[ToolSummary(name=t, description=t) for t in tools]
    )


POWERS = {"redis": power("redis", "list_keys", "get"), "memcache": power("memcache", "get", "stats")}
NOW = datetime(2026, 11, 27, tzinfo=UTC)


def remembered(
    i: int, name: str, tool: str, *, confirmed: int = 1, refuted: int = 0, age_days: float = 1
) -> Remembered:
    return Remembered(
        i, name, tool, tools_hash(POWERS[name]), confirmed, refuted, NOW - timedelta(days=age_days)
    )


def test_rows_count_confirmations_refutations_and_bump_the_generation(tmp_path: Path) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        db = store.database
        args = {"power": "redis", "tool": "list_keys", "tools_hash": "h", "model": "m", "request": None}
        first = rows.remember(db, request_hash="a", vector=unit(1), **args)
        assert rows.remember(db, request_hash="a", vector=unit(1), **args) == first  # counted, not added
        other = rows.remember(db, request_hash="b", vector=unit(0, 1), **args)
        rows.refute(db, first)
        found = {c.id: c for c in rows.list_choices(db)}
        assert (found[first].confirmed, found[first].refuted, found[first].request) == (2, 1, None)
        assert np.allclose(found[other].vector, unit(0, 1))
        before = rows.generation(db)
        assert rows.forget(db, [other]) == 1 and rows.generation(db) == before + 1
        assert rows.get_choice(db, other) is None
        assert rows.clear(db) == 1 and rows.list_choices(db) == []


def test_the_closest_usable_choice_is_recalled_with_its_features() -> None:
    index = ChoiceIndex(
        [remembered(1, "redis", "list_keys", confirmed=3), remembered(2, "memcache", "stats")],
        np.stack([unit(1, 0.1), unit(0.6, 1)]),
    )
    found = index.recall(unit(1), ["memcache", "redis"], POWERS, 0.8, max_age_days=30, now=NOW)
    assert found is not None and found.choice.id == 1
    similarity, margin, confirmations, top3, rank = found.features
    assert similarity == pytest.approx(float(unit(1, 0.1) @ unit(1)))
    assert margin == pytest.approx(similarity - float(unit(0.6, 1) @ unit(1)))
    assert confirmations == pytest.approx(np.log1p(3)) and top3 == 0.8 and rank == 0.5


@pytest.mark.parametrize(
    ("choice", "ranked", "why"),
    [
        (remembered(1, "redis", "list_keys"), ["memcache"], "not among the resolver's candidates"),
        (remembered(1, "redis", "flush"), ["redis"], "its tool is gone"),
        (remembered(1, "redis", "list_keys", confirmed=1, refuted=1), ["redis"], "refuted as often"),
        (remembered(1, "redis", "list_keys", age_days=400), ["redis"], "too old"),
    ],
)
def test_a_choice_that_no_longer_holds_is_not_recalled(
    choice: Remembered, ranked: list[str], why: str
) -> None:
    index = ChoiceIndex([choice], np.stack([unit(1)]))
    assert index.recall(unit(1), ranked, POWERS, 0.9, max_age_days=180, now=NOW) is None, why


def test_a_change_of_the_powers_tools_or_a_far_request_is_not_recalled() -> None:
    index = ChoiceIndex([remembered(1, "redis", "list_keys")], np.stack([unit(1)]))
    changed = {"redis": power("redis", "list_keys", "get", "flushall")}  # a tool added: another hash
    assert index.recall(unit(1), ["redis"], changed, 0.9, max_age_days=180, now=NOW) is None
    far = unit(1, 10)  # cosine below the floor
    assert float(far @ unit(1)) < FLOOR
    assert index.recall(far, ["redis"], POWERS, 0.9, max_age_days=180, now=NOW) is None


def _model(bias: float) -> MemoryModel:
    return MemoryModel(version="t", intercept=bias, coefficients=[0.0] * 5, mean=[0.0] * 5, scale=[1.0] * 5)


def test_a_sure_judge_activates_a_tie_and_never_overrides_an_activation() -> None:
    index = ChoiceIndex([remembered(1, "redis", "get", confirmed=2)], np.stack([unit(1)]))
    recalled = index.recall(unit(1), ["memcache", "redis"], POWERS, 0.9, max_age_days=30, now=NOW)
    assert recalled is not None
    tie = Decision(
        status="multiple_matches",
        confidence=0.5,
        query="q",
        message="m",
        matches=[PowerSummary(power="memcache", description=""), PowerSummary(power="redis", description="")],
    )
    lines = TierThresholds()
    sure = _model(4.0).probability(recalled.features)
    done = apply_memory(tie, recalled, sure, POWERS, lines)
    assert (done.status, done.power, done.match_type) == ("activated", "redis", "remembered")
    assert done.tools is not None and done.tools[0].name == "get" and done.confidence == round(sure, 4)
    assert "served by its tool get before (2x here)" in done.message
    unsure = _model(-4.0).probability(recalled.features)
    assert apply_memory(tie, recalled, unsure, POWERS, lines) is tie
    activated = tie.model_copy(update={"status": "activated", "power": "memcache"})
    assert apply_memory(activated, recalled, sure, POWERS, lines) is activated
