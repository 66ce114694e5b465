"""The memory of confirmed choices, in the catalog database (table ``choices``).

A row is a request the gateway resolved and the power and tool that then served it: the agent chose the
power (or the gateway activated it) and a call of that tool succeeded
(services/gateway/memory/recording.py). It belongs to the **principal** who confirmed it (``local``: the
person over stdio; ``key:<id>``: an API key over HTTP) and decides only for that principal. It keeps the
request's embedding (``vector``, float32, of the request with its arguments taken out), a hash of that
text, the embedding model, and the hash of the power's tools when it was confirmed; the request's words
(at most ``MAX_REQUEST_CHARS``) only when the ``memory.keep_text`` setting allows. The same request,
power and tool confirmed again by the same principal counts up (``confirmed``); a remembered choice the
agent went back on counts ``refuted``. A principal keeps at most ``max_rows`` rows: past that, its rows
no longer usable (refuted as often as confirmed) go first, then the ones confirmed longest ago.

Every write bumps the meta key ``choices_generation`` and the principal's own
``choices_generation:<principal>``, so a process holding a principal's memory in RAM (the gateway) sees
a write, ``forget`` or ``clear`` from another process at its next look, and a write of one principal
makes no other principal's memory be read again.

A row written by hand or damaged on disk (a vector of the wrong length, a date that is no date) is read
with its ``problem`` named, never raised: the gateway skips it, ``memory list`` marks it, and
``tool-selector memory forget ID`` removes it (``repair``).
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from tool_selector.catalog.database import Database

GENERATION_KEY = "choices_generation"
LOCAL = "local"  # the principal of the person who runs the gateway over stdio (and of rows older than it)
MAX_REQUEST_CHARS = 500  # the request's words kept under memory.keep_text, at most
MAX_ID = 2**63 - 1  # SQLite's largest integer: no row has a larger id

# the table, in SCHEMA (catalog/schema.py) and in the upgrade from schema version 8 (``upgrade``)
TABLE = """CREATE TABLE IF NOT EXISTS {name} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    principal TEXT NOT NULL DEFAULT 'local',
    request_hash TEXT NOT NULL,
    power TEXT NOT NULL,
    tool TEXT NOT NULL,
    tools_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    request TEXT,
    confirmed INTEGER NOT NULL DEFAULT 1,
    refuted INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    confirmed_at TEXT NOT NULL,
    UNIQUE (principal, request_hash, power, tool)
);
"""
_COLUMNS = (
    "id, request_hash, power, tool, tools_hash, model, vector, request, confirmed, refuted, created_at, "
    "confirmed_at"
)


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
    principal: str = LOCAL
    problem: str | None = None  # what is wrong with a damaged row (None: nothing)

    @property
    def repair(self) -> str | None:
        return None if self.problem is None else f"tool-selector memory forget {self.id}"

    @property
    def confirmed_time(self) -> datetime:
        """When it was last confirmed (only for a row without a ``problem``)."""
        found = parse_time(self.confirmed_at)
        assert found is not None, "a damaged row has no time"
        return found


def upgrade(db: sqlite3.Connection) -> bool:
    """From schema version 8: every choice gets a principal (``local``, the person who ran the gateway
    until keys had memories of their own), and the same request is unique per principal. Rebuilds the
    table (SQLite cannot change a UNIQUE constraint in place), inside the caller's transaction; True when
    it did."""
    present = {r[1] for r in db.execute("PRAGMA table_info(choices)")}
    if not present or "principal" in present:
        return False
    db.execute("DROP TABLE IF EXISTS choices_upgrade")
    db.execute(TABLE.format(name="choices_upgrade"))
    db.execute(f"INSERT INTO choices_upgrade(principal, {_COLUMNS}) SELECT 'local', {_COLUMNS} FROM choices")
    db.execute("DROP TABLE choices")
    db.execute("ALTER TABLE choices_upgrade RENAME TO choices")
    return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def parse_time(text: object) -> datetime | None:
    """A stored time (ISO 8601; one without a zone is UTC), or None when it is no time."""
    if not isinstance(text, str):
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def _key(principal: str) -> str:
    return f"{GENERATION_KEY}:{principal}"


def _bump(db: sqlite3.Connection, principals: set[str]) -> None:
    """Bump the generation of these principals and the global one."""
    for key in [GENERATION_KEY] + [_key(p) for p in sorted(principals)]:
        db.execute(
            "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
            "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
            (key,),
        )


def generation(database: Database, principal: str | None = None) -> int:
    """How often the memory (of ``principal``; None: of anyone) was written; a change means read it again."""
    key = GENERATION_KEY if principal is None else _key(principal)
    row = database.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    try:
        return int(row[0]) if row is not None else 0
    except ValueError:  # a value written by hand: read the rows every time rather than never
        return -1


@dataclass(frozen=True)
class Written:
    """What a write did to one principal's memory, for a process holding it in RAM to follow without
    reading it all again: the principal's generation after it, the row as it is now, and the rows that
    made room for it."""

    principal: str
    generation: int
    choice: Choice | None
    evicted: tuple[int, ...] = ()


def _principal_generation(db: sqlite3.Connection, principal: str) -> int:
    row = db.execute("SELECT value FROM meta WHERE key=?", (_key(principal),)).fetchone()
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
    principal: str = LOCAL,
    max_rows: int | None = None,
) -> int:
    """Record a confirmed choice of ``principal`` (or count one more confirmation of the same); its id.
    ``max_rows``: the principal keeps at most this many rows (the least useful go; never this one)."""
    written = confirm(
        database,
        request_hash=request_hash,
        power=power,
        tool=tool,
        tools_hash=tools_hash,
        model=model,
        vector=vector,
        request=request,
        principal=principal,
        max_rows=max_rows,
    )
    assert written.choice is not None
    return written.choice.id


def confirm(
    database: Database,
    *,
    request_hash: str,
    power: str,
    tool: str,
    tools_hash: str,
    model: str,
    vector: np.ndarray,
    request: str | None,
    principal: str = LOCAL,
    max_rows: int | None = None,
) -> Written:
    """``remember``, telling what the write did."""
    blob = np.asarray(vector, dtype=np.float32).tobytes()
    words = None if request is None else _cut(request)
    at = _now()
    with database.transaction() as db:
        db.execute(
            "INSERT INTO choices(principal, request_hash, power, tool, tools_hash, model, vector, request, "
            "created_at, confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(principal, "
            "request_hash, power, tool) DO UPDATE SET confirmed = confirmed + 1, "
            "confirmed_at = excluded.confirmed_at, tools_hash = excluded.tools_hash, model = excluded.model, "
            "vector = excluded.vector, request = excluded.request",
            (principal, request_hash, power, tool, tools_hash, model, blob, words, at, at),
        )
        row = db.execute(
            "SELECT * FROM choices WHERE principal=? AND request_hash=? AND power=? AND tool=?",
            (principal, request_hash, power, tool),
        ).fetchone()
        evicted = _evict(db, principal, max_rows, keep=int(row["id"])) if max_rows is not None else ()
        _bump(db, {principal})
        generation = _principal_generation(db, principal)
    return Written(principal, generation, _choice(row), evicted)


def _cut(request: str) -> str:
    return request if len(request) <= MAX_REQUEST_CHARS else request[: MAX_REQUEST_CHARS - 1] + "…"


def _evict(db: sqlite3.Connection, principal: str, max_rows: int, *, keep: int) -> tuple[int, ...]:
    """Delete the principal's rows past ``max_rows``: first those no longer used (refuted as often as
    confirmed), then those confirmed longest ago; never ``keep``. The ids that went."""
    count = int(db.execute("SELECT COUNT(*) FROM choices WHERE principal=?", (principal,)).fetchone()[0])
    excess = count - max(max_rows, 1)
    if excess <= 0:
        return ()
    ids = tuple(
        int(r[0])
        for r in db.execute(
            "SELECT id FROM choices WHERE principal=? AND id != ? "
            "ORDER BY (confirmed > refuted) ASC, confirmed_at ASC, id ASC LIMIT ?",
            (principal, keep, excess),
        )
    )
    db.executemany("DELETE FROM choices WHERE id=?", [(i,) for i in ids])
    return ids


def refute(database: Database, choice_id: int) -> Written | None:
    """Count against a remembered choice: the agent went back on it when the gateway used it. What the
    write did (None: there is no such choice)."""
    with database.transaction() as db:
        db.execute("UPDATE choices SET refuted = refuted + 1 WHERE id=?", (choice_id,))
        row = db.execute("SELECT * FROM choices WHERE id=?", (choice_id,)).fetchone()
        if row is None:
            return None
        principal = str(row["principal"])
        _bump(db, {principal})
        generation = _principal_generation(db, principal)
    return Written(principal, generation, _choice(row))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _vector_problem(blob: object) -> tuple[np.ndarray, str | None]:
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        size = f"{len(blob)} bytes long" if isinstance(blob, bytes) else f"a {type(blob).__name__}"
        return np.zeros(0, np.float32), f"its vector is {size}, not a list of float32 values"
    vector = np.frombuffer(blob, dtype=np.float32)
    if not np.isfinite(vector).all():
        return vector, "its vector holds values that are not finite numbers"
    norm = float(np.linalg.norm(vector))
    if not math.isclose(norm, 1.0, abs_tol=0.01):
        return vector, f"its vector is not of unit length (length {norm:.3g})"
    return vector, None


def _choice(row: sqlite3.Row) -> Choice:
    """A row as it is stored; what is wrong with a damaged one goes to ``problem`` (never raised)."""
    vector, problem = _vector_problem(row["vector"])
    counts = {name: _int(row[name]) for name in ("confirmed", "refuted")}
    for name, value in counts.items():
        if value is None:
            problem = problem or f"its {name} count {row[name]!r} is not a whole number"
    for name in ("confirmed_at", "created_at"):
        if parse_time(row[name]) is None:
            problem = problem or f"its {name} {str(row[name])[:40]!r} is not a date and time"
    return Choice(
        id=int(row["id"]),
        power=str(row["power"]),
        tool=str(row["tool"]),
        tools_hash=str(row["tools_hash"]),
        model=str(row["model"]),
        vector=vector,
        request_hash=str(row["request_hash"]),
        request=None if row["request"] is None else str(row["request"]),
        confirmed=counts["confirmed"] or 0,
        refuted=counts["refuted"] or 0,
        created_at=str(row["created_at"]),
        confirmed_at=str(row["confirmed_at"]),
        principal=str(row["principal"]),
        problem=problem,
    )


def list_choices(
    database: Database,
    *,
    limit: int | None = None,
    principal: str | None = None,
    model: str | None = None,
) -> list[Choice]:
    """The remembered choices (of ``principal`` and ``model`` when given), the latest confirmed first."""
    where, args = [], []
    for column, value in (("principal", principal), ("model", model)):
        if value is not None:
            where.append(f"{column}=?")
            args.append(value)
    sql = "SELECT * FROM choices" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY confirmed_at DESC, id DESC" + (" LIMIT ?" if limit else "")
    rows = database.execute(sql, (*args, limit) if limit else tuple(args)).fetchall()
    return [_choice(r) for r in rows]


def get_choice(database: Database, choice_id: int) -> Choice | None:
    if not 1 <= choice_id <= MAX_ID:  # SQLite could not even compare it
        return None
    row = database.execute("SELECT * FROM choices WHERE id=?", (choice_id,)).fetchone()
    return None if row is None else _choice(row)


def forget(database: Database, ids: list[int]) -> int:
    """Forget these choices; how many there were."""
    ids = [i for i in ids if 1 <= i <= MAX_ID]
    with database.transaction() as db:
        marks = ",".join("?" * len(ids))
        owners = {str(r[0]) for r in db.execute(f"SELECT principal FROM choices WHERE id IN ({marks})", ids)}
        gone = sum(int(db.execute("DELETE FROM choices WHERE id=?", (i,)).rowcount) for i in ids)
        _bump(db, owners)
    return gone


def clear(database: Database) -> int:
    """Forget every choice; how many there were."""
    with database.transaction() as db:
        owners = {str(r[0]) for r in db.execute("SELECT DISTINCT principal FROM choices")}
        gone = int(db.execute("DELETE FROM choices").rowcount)
        _bump(db, owners)
    return gone
