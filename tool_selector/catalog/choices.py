"""The memory of confirmed choices, in the catalog database (table ``choices``).

A row is a request the gateway resolved and the power and tool that then served it: the agent chose the
power (or the gateway activated it) and a call of that tool succeeded (services/gateway/choices.py). It
keeps the request's embedding (``vector``, float32, of the request with its arguments taken out), a hash
of that text, the embedding model, and the hash of the power's tools when it was confirmed; the request's
words only when the ``memory.keep_text`` setting allows. The same request, power and tool confirmed
again counts up (``confirmed``); a remembered choice the agent went back on counts ``refuted``.

Every write bumps the meta key ``choices_generation``, so a process holding the memory in RAM (the
gateway) sees a ``forget`` or ``clear`` from another process at its next look.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from tool_selector.catalog.database import Database

GENERATION_KEY = "choices_generation"


@dataclass(frozen=True)
class Choice:
    id: int
    power: str
    tool: str
    tools_hash: str
    model: str
    vector: np.ndarray
    request_hash: str
    request: str | None
    confirmed: int
    refuted: int
    created_at: str
    confirmed_at: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _bump(db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
        "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        (GENERATION_KEY,),
    )


def generation(database: Database) -> int:
    row = database.execute("SELECT value FROM meta WHERE key=?", (GENERATION_KEY,)).fetchone()
    return int(row[0]) if row is not None else 0


def remember(
    database: Database,
    *,
    request_hash: str,
    power: str,
    tool: str,
    tools_hash: str,
    model: str,
    vector: np.ndarray,
    request: str | None,
) -> int:
    """Record a confirmed choice (or count one more confirmation of the same); its id."""
    blob = np.asarray(vector, dtype=np.float32).tobytes()
    at = _now()
    with database.transaction() as db:
        db.execute(
            "INSERT INTO choices(request_hash, power, tool, tools_hash, model, vector, request, created_at, "
            "confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(request_hash, power, tool) DO "
            "UPDATE SET confirmed = confirmed + 1, confirmed_at = excluded.confirmed_at, "
            "tools_hash = excluded.tools_hash, model = excluded.model, vector = excluded.vector, "
            "request = excluded.request",
            (request_hash, power, tool, tools_hash, model, blob, request, at, at),
        )
        row = db.execute(
            "SELECT id FROM choices WHERE request_hash=? AND power=? AND tool=?", (request_hash, power, tool)
        ).fetchone()
        _bump(db)
    return int(row[0])


def refute(database: Database, choice_id: int) -> None:
    """Count against a remembered choice: the agent went back on it when the gateway used it."""
    with database.transaction() as db:
        db.execute("UPDATE choices SET refuted = refuted + 1 WHERE id=?", (choice_id,))
        _bump(db)


def _choice(row: sqlite3.Row) -> Choice:
    return Choice(
        id=int(row["id"]),
        power=str(row["power"]),
        tool=str(row["tool"]),
        tools_hash=str(row["tools_hash"]),
        model=str(row["model"]),
        vector=np.frombuffer(row["vector"], dtype=np.float32),
        request_hash=str(row["request_hash"]),
        request=row["request"],
        confirmed=int(row["confirmed"]),
        refuted=int(row["refuted"]),
        created_at=str(row["created_at"]),
        confirmed_at=str(row["confirmed_at"]),
    )


def list_choices(database: Database, *, limit: int | None = None) -> list[Choice]:
    """Every remembered choice, the latest confirmed first."""
    sql = "SELECT * FROM choices ORDER BY confirmed_at DESC, id DESC"
    rows = database.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
    return [_choice(r) for r in rows]


def get_choice(database: Database, choice_id: int) -> Choice | None:
    row = database.execute("SELECT * FROM choices WHERE id=?", (choice_id,)).fetchone()
    return None if row is None else _choice(row)


def forget(database: Database, ids: list[int]) -> int:
    """Forget these choices; how many there were."""
    with database.transaction() as db:
        gone = sum(int(db.execute("DELETE FROM choices WHERE id=?", (i,)).rowcount) for i in ids)
        _bump(db)
    return gone


def clear(database: Database) -> int:
    """Forget every choice; how many there were."""
    with database.transaction() as db:
        gone = int(db.execute("DELETE FROM choices").rowcount)
        _bump(db)
    return gone
