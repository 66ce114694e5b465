"""The catalog store's admin tables: API keys (hashed), the audit log and background jobs.

Functions take the ``CatalogStore``; ``write_audit`` takes an open transaction's connection so that a
mutation and its audit record commit together or not at all.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tool_selector.catalog.database import HasDatabase
from tool_selector.config.secrets import mask_launch_text
from tool_selector.core.choices import Role, Scope
from tool_selector.core.errors import NotFoundError
from tool_selector.core.processes import ProcessRef, is_running

SCOPES: tuple[Scope, ...] = ("read", "write", "edit", "import", "call", "approve", "admin")
ROLE_SCOPES: dict[Role, tuple[Scope, ...]] = {
    "viewer": ("read",),
    "contributor": ("read", "write"),
    "editor": ("read", "write", "edit", "import", "call"),
    "admin": SCOPES,
}
# Each role's scopes before ``call`` and ``approve`` existed. A key stored with exactly these was made
# with its role's defaults: ``upgrade_key_scopes`` gives it what the role has gained, once per catalog.
_ROLE_SCOPES_V1: dict[Role, tuple[Scope, ...]] = {
    "viewer": ("read",),
    "contributor": ("read", "write"),
    "editor": ("read", "write", "edit", "import"),
    "admin": ("read", "write", "edit", "import", "admin"),
}
_SCOPES_VERSION = ("key_scopes_version", "2")


def _now() -> datetime:
    return datetime.now(UTC)


class ApiKeyRecord(BaseModel):
    """A stored API key. The secret itself is never stored, only its sha256."""

    id: str
    name: str
    role: Role
    scopes: list[Scope]
    created_at: datetime
    created_by: str
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class AuditRecord(BaseModel):
    """One mutation: who, what, when, and the hashes of the thing before and after."""

    seq: int = 0
    at: datetime
    actor: str
    action: str = Field(description="e.g. server.create, tool.update, key.revoke, catalog.import")
    target: str
    before_hash: str | None = None
    after_hash: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


JobState = Literal["queued", "running", "succeeded", "failed", "interrupted"]


class JobProgress(BaseModel):
    phase: str = Field(description="e.g. discover, enrich, embed")
    done: int
    total: int


class JobRecord(BaseModel):
    id: str
    kind: str
    state: JobState
    created_at: datetime
    created_by: str
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    progress: JobProgress | None = Field(
        default=None, description="while it runs: the phase and how far it is (from the process running it)"
    )
    owner: ProcessRef | None = Field(
        default=None,
        exclude=True,  # stored, not shown: a pid and a host name are nothing an API client needs
        description="the API process that runs the job; a job whose owner ended before it finished is "
        "reported interrupted",
    )


# -- API keys ----------------------------------------------------------------------------------------


def _key(row: sqlite3.Row) -> ApiKeyRecord:
    data = dict(row)
    data.pop("key_hash")
    data["scopes"] = json.loads(data["scopes"])
    return ApiKeyRecord.model_validate(data)


def _is_v1_default(role: str, scopes: list[str]) -> bool:
    """Whether a key holds exactly its role's full scope set of before, which has grown since."""
    for known, old in _ROLE_SCOPES_V1.items():
        if known == role:
            return sorted(scopes) == sorted(old) and set(old) != set(ROLE_SCOPES[known])
    return False


def upgrade_key_scopes(store: HasDatabase) -> list[str]:
    """Once per catalog: every key stored with its role's full scope set of before ``call`` and
    ``approve`` gets the role's scopes of now (an editor key gains ``call``; an admin key ``call`` and
    ``approve``); keys made narrower keep what they had. One ``key.scopes_upgrade`` audit record.
    Returns the ids of the keys upgraded (none when it already ran)."""
    key, version = _SCOPES_VERSION
    done = store.database.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    if done is not None and done[0] == version:
        return []
    with store.database.transaction() as db:
        done = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if done is not None and done[0] == version:
            return []
        upgraded = []
        for row in db.execute("SELECT id, role, scopes FROM api_keys").fetchall():
            if _is_v1_default(row["role"], json.loads(row["scopes"])):
                scopes = json.dumps(list(ROLE_SCOPES[row["role"]]))
                db.execute("UPDATE api_keys SET scopes=? WHERE id=?", (scopes, row["id"]))
                upgraded.append(row["id"])
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, version))
        if upgraded:
            details = {"keys": upgraded, "added": ["call", "approve"]}
            record = AuditRecord(
                at=_now(), actor="upgrade", action="key.scopes_upgrade", target="keys", details=details
            )
            write_audit(db, record)
        return upgraded


def insert_key(store: HasDatabase, record: ApiKeyRecord, key_hash: str) -> None:
    upgrade_key_scopes(store)  # first: a new key narrowed to an old default set must stay as it is
    with store.database.transaction() as db:
        db.execute(
            "INSERT INTO api_keys(id, name, key_hash, role, scopes, created_at, created_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.name,
                key_hash,
                record.role,
                json.dumps(record.scopes),
                record.created_at.isoformat(),
                record.created_by,
            ),
        )
        write_audit(
            db,
            AuditRecord(
                at=record.created_at,
                actor=record.created_by,
                action="key.create",
                target=f"key:{record.id}",
                details={"name": record.name, "role": record.role, "scopes": list(record.scopes)},
            ),
        )


def key_by_hash(store: HasDatabase, key_hash: str) -> ApiKeyRecord | None:
    row = store.database.execute("SELECT * FROM api_keys WHERE key_hash=?", (key_hash,)).fetchone()
    upgrade = row is not None and _is_v1_default(row["role"], json.loads(row["scopes"]))
    if upgrade and upgrade_key_scopes(store):
        row = store.database.execute("SELECT * FROM api_keys WHERE key_hash=?", (key_hash,)).fetchone()
    return None if row is None else _key(row)


def key_by_id(store: HasDatabase, key_id: str) -> ApiKeyRecord | None:
    row = store.database.execute("SELECT * FROM api_keys WHERE id=?", (key_id,)).fetchone()
    return None if row is None else _key(row)


def list_keys(store: HasDatabase) -> list[ApiKeyRecord]:
    upgrade_key_scopes(store)
    return [_key(r) for r in store.database.execute("SELECT * FROM api_keys ORDER BY created_at")]


def revoke_key(store: HasDatabase, key_id: str, actor: str) -> ApiKeyRecord:
    with store.database.transaction() as db:
        row = db.execute("SELECT * FROM api_keys WHERE id=?", (key_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"No API key with id {key_id!r}.", hint="See `tool-selector keys list`.")
        record = _key(row)
        if record.revoked_at is None:
            now = _now()
            db.execute("UPDATE api_keys SET revoked_at=? WHERE id=?", (now.isoformat(), key_id))
            record.revoked_at = now
            write_audit(
                db,
                AuditRecord(at=now, actor=actor, action="key.revoke", target=f"key:{key_id}"),
            )
        return record


def touch_key(store: HasDatabase, key_id: str, at: datetime) -> bool:
    """Record when a key was last used. Best effort and never waits: while another write holds the
    database (a long import), the update is skipped and made at a later request. True when written."""
    db = store.database.connection
    if db.in_transaction:
        return False
    db.execute("PRAGMA busy_timeout = 0")
    try:
        with store.database.transaction():
            db.execute("UPDATE api_keys SET last_used_at=? WHERE id=?", (at.isoformat(), key_id))
        return True
    except sqlite3.OperationalError:  # database is locked
        return False
    finally:
        db.execute("PRAGMA busy_timeout = 30000")


# -- audit -------------------------------------------------------------------------------------------


def write_audit(db: sqlite3.Connection, record: AuditRecord) -> None:
    """Append one audit record inside the caller's open transaction."""
    db.execute(
        "INSERT INTO audit(at, actor, action, target, before_hash, after_hash, details) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            record.at.isoformat(),
            record.actor,
            record.action,
            record.target,
            record.before_hash,
            record.after_hash,
            json.dumps(record.details, sort_keys=True, ensure_ascii=False, default=str),
        ),
    )


def read_audit(
    store: HasDatabase,
    *,
    limit: int = 100,
    before_seq: int | None = None,
    actor: str | None = None,
    target: str | None = None,
) -> list[AuditRecord]:
    """Newest first; page with ``before_seq`` (the smallest seq of the previous page)."""
    where: list[str] = []
    params: list[int | str] = []
    if before_seq is not None:
        where.append("seq < ?")
        params.append(before_seq)
    if actor:
        where.append("actor = ?")
        params.append(actor)
    if target:
        where.append("target = ?")
        params.append(target)
    sql = "SELECT * FROM audit" + (" WHERE " + " AND ".join(where) if where else "")
    rows = store.database.execute(sql + " ORDER BY seq DESC LIMIT ?", (*params, limit)).fetchall()
    out = []
    for row in rows:
        data = dict(row)
        data["details"] = json.loads(data["details"])
        if isinstance(data["details"].get("launch"), str):  # a row written before launch lines were masked
            data["details"]["launch"] = mask_launch_text(data["details"]["launch"])
        out.append(AuditRecord.model_validate(data))
    return out


# -- jobs --------------------------------------------------------------------------------------------


def put_job(store: HasDatabase, job: JobRecord) -> None:
    fields = job.model_dump(mode="json", include={"started_at", "finished_at", "result", "error"})
    fields["owner"] = None if job.owner is None else job.owner.model_dump(mode="json")
    data = json.dumps(fields)
    with store.database.transaction() as db:
        db.execute(
            "INSERT OR REPLACE INTO jobs(id, kind, state, created_at, created_by, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (job.id, job.kind, job.state, job.created_at.isoformat(), job.created_by, data),
        )


def _job(row: sqlite3.Row) -> JobRecord:
    data: dict[str, Any] = dict(row)
    data.update(json.loads(data.pop("data")))
    return JobRecord.model_validate(data)


def get_job(store: HasDatabase, job_id: str) -> JobRecord:
    row = store.database.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
    if row is None:
        raise NotFoundError(
            f"No job with id {job_id!r}.", hint="Use the job id a POST returned; jobs are kept in catalog.db."
        )
    return _job(row)


def record_progress(db_path: Path, job_id: str, progress: JobProgress, *, wait_s: float = 0.05) -> bool:
    """Store how far a running job is, for the API processes that do not run it (``GET /jobs`` from
    another worker). Best effort, on a connection of its own that waits at most ``wait_s`` for another
    writer: a job's progress never holds up the job. Returns whether it was stored. ``put_job`` leaves
    the stored progress out, so a job that ends has none."""
    try:
        with closing(sqlite3.connect(str(db_path), timeout=wait_s, isolation_level=None)) as db:
            db.execute(
                "UPDATE jobs SET data = json_set(data, '$.progress', json(?)) "
                "WHERE id = ? AND state = 'running'",
                (progress.model_dump_json(), job_id),
            )
    except sqlite3.Error:
        return False
    return True


def list_jobs(
    store: HasDatabase,
    *,
    kind: str | None = None,
    state: JobState | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[int, list[JobRecord]]:
    """Jobs newest first, filtered by kind and state: how many match, and one page of them."""
    where, params = [], []
    for column, value in (("kind", kind), ("state", state)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    clause = " WHERE " + " AND ".join(where) if where else ""
    total = int(store.database.execute("SELECT COUNT(*) FROM jobs" + clause, params).fetchone()[0])
    rows = store.database.execute(
        "SELECT * FROM jobs" + clause + " ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return total, [_job(row) for row in rows]


def orphaned(job: JobRecord) -> bool:
    """A job queued or running whose process has ended (or that names none: made before jobs had
    owners). A job of a process on another host is never taken for orphaned: it cannot be checked."""
    if job.state not in ("queued", "running"):
        return False
    return job.owner is None or is_running(job.owner) is False


def interrupt_orphaned_jobs(store: HasDatabase, job_id: str | None = None) -> int:
    """Mark jobs left queued or running by a process that ended as interrupted (all of them, or the one
    ``job_id`` names); jobs of processes that still run are left to them. Returns how many.

    Each job is read again inside the write transaction, so a job its owner finished just before it
    ended is never overwritten."""
    query = "SELECT * FROM jobs WHERE state IN ('queued', 'running')"
    found = store.database.execute(*((query + " AND id=?", (job_id,)) if job_id else (query,))).fetchall()
    count = 0
    for candidate in found:
        if not orphaned(_job(candidate)):
            continue
        with store.database.transaction() as db:
            row = db.execute("SELECT * FROM jobs WHERE id=?", (candidate["id"],)).fetchone()
            job = None if row is None else _job(row)
            if job is None or not orphaned(job):
                continue
            job.state = "interrupted"
            job.finished_at = _now()
            job.error = {
                "code": "interrupted",
                "message": "The server stopped before this job finished; nothing of a failed batch was kept.",
            }
            put_job(store, job)  # joins this transaction
            count += 1
    return count
