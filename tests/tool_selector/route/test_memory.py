"""The memory of confirmed choices: its rows in the catalog database (catalog/memory.py) and how a
remembered choice is recalled and changes a decision (route/memory.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tool_selector.catalog import memory as rows
from tool_selector.catalog.database import Database
from tool_selector.catalog.store import CatalogStore
from tool_selector.config.settings import TierThresholds
from tool_selector.core.models import Decision, PowerSummary, ToolSummary
from tool_selector.route.memory import (
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


def _remember(db: Database, key: str, principal: str = "local", **extra: object) -> int:
    args: dict[str, object] = {
        "power": "redis",
        "tool": "get",
        "tools_hash": "h",
        "model": "m",
        "request": None,
    }
    return rows.remember(db, request_hash=key, vector=unit(1), principal=principal, **(args | extra))  # type: ignore[arg-type]


def test_the_same_request_is_remembered_once_per_principal(tmp_path: Path) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        mine, theirs = _remember(store.database, "a"), _remember(store.database, "a", "key:0123456789ab")
        assert mine != theirs and _remember(store.database, "a") == mine
        found = {c.id: (c.principal, c.confirmed) for c in rows.list_choices(store.database)}
        assert found == {mine: ("local", 2), theirs: ("key:0123456789ab", 1)}
        assert [c.id for c in rows.list_choices(store.database, principal="key:0123456789ab")] == [theirs]


def test_a_principal_keeps_at_most_max_rows_the_unused_then_the_oldest_going_first(tmp_path: Path) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        db = store.database
        ids = [_remember(db, str(i)) for i in range(4)]
        other = _remember(db, "x", "key:0123456789ab")
        rows.refute(db, ids[2])  # refuted as often as confirmed: no longer used
        db.execute("UPDATE choices SET confirmed_at = '2026-01-0' || id || 'T00:00:00+00:00'")
        newest = _remember(db, "4", max_rows=3)
        assert {c.id for c in rows.list_choices(db, principal="local")} == {ids[1], ids[3], newest}
        assert [c.id for c in rows.list_choices(db, principal="key:0123456789ab")] == [other]
        assert _remember(db, "5", max_rows=1) not in (ids[1], ids[3], newest)
        assert len(rows.list_choices(db, principal="local")) == 1


def test_the_kept_words_are_cut_to_a_sane_length(tmp_path: Path) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        _remember(store.database, "a", request="list my keys " * 3000)
        [choice] = rows.list_choices(store.database)
        assert choice.request is not None and len(choice.request) == rows.MAX_REQUEST_CHARS
        assert choice.request.endswith("…")


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("vector", b"\x00\x00", "its vector is 2 bytes long, not a list of float32 values"),
        ("vector", np.full(DIM, 3, np.float32).tobytes(), "its vector is not of unit length (length 8.49)"),
        ("vector", np.full(DIM, np.nan, np.float32).tobytes(), "its vector holds values that are not finite"),
        ("confirmed_at", "yesterday", "its confirmed_at 'yesterday' is not a date and time"),
        ("confirmed", "many", "its confirmed count 'many' is not a whole number"),
    ],
)
def test_a_damaged_row_is_read_with_its_problem_and_repair_never_raised(
    tmp_path: Path, column: str, value: object, problem: str
) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        choice_id = _remember(store.database, "a")
        store.database.execute(f"UPDATE choices SET {column}=? WHERE id=?", (value, choice_id))
        [found] = rows.list_choices(store.database)
        assert found.problem is not None and found.problem.startswith(problem)
        assert found.repair == f"tool-selector memory forget {choice_id}"
        shown = rows.get_choice(store.database, choice_id)
        assert shown is not None and (shown.problem, shown.repair) == (found.problem, found.repair)


def test_an_id_beyond_sqlites_integers_is_no_row_and_no_error(tmp_path: Path) -> None:
    with CatalogStore(tmp_path / "catalog.db") as store:
        assert rows.get_choice(store.database, 99999999999999999999999) is None
        assert rows.get_choice(store.database, -1) is None
        assert rows.forget(store.database, [99999999999999999999999]) == 0


V8_CHOICES = """CREATE TABLE choices (
    id INTEGER PRIMARY KEY AUTOINCREMENT, request_hash TEXT NOT NULL, power TEXT NOT NULL,
    tool TEXT NOT NULL, tools_hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL, request TEXT,
    confirmed INTEGER NOT NULL DEFAULT 1, refuted INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL,
    confirmed_at TEXT NOT NULL, UNIQUE (request_hash, power, tool))"""


def test_a_catalog_of_schema_8_keeps_its_choices_as_the_local_users(tmp_path: Path) -> None:
    import sqlite3
    from contextlib import closing

    path = tmp_path / "catalog.db"
    CatalogStore(path).close()
    with closing(sqlite3.connect(path)) as db, db:  # the table as schema version 8 made it, with a row
        db.execute("DROP TABLE choices")
        db.execute(V8_CHOICES)
        db.execute(
            "INSERT INTO choices(id, request_hash, power, tool, tools_hash, model, vector, created_at, "
            "confirmed_at, confirmed) VALUES (7, 'a', 'redis', 'get', 'h', 'm', ?, ?, ?, 3)",
            (unit(1).tobytes(), NOW.isoformat(), NOW.isoformat()),
        )
        db.execute("UPDATE meta SET value='8' WHERE key='schema_version'")
    with CatalogStore(path) as store:
        [kept] = rows.list_choices(store.database)
        assert (kept.id, kept.principal, kept.confirmed, kept.problem) == (7, "local", 3, None)
        assert _remember(store.database, "a", "key:0123456789ab") > 7  # unique per principal now
        assert _remember(store.database, "a") == 7
        assert store.get_meta("schema_version") == "9"
        before = rows.generation(store.database, "local")
        assert rows.clear(store.database) == 2 and rows.generation(store.database, "local") > before
