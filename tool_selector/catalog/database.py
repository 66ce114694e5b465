"""The catalog database file: made only where none exists, recognised before use, copied for backups.

A catalog carries ``APPLICATION_ID`` in its SQLite header (``PRAGMA application_id``), set when the
file is made. Files made before that mark are recognised by their ``meta`` table with a schema version,
and marked at their next schema upgrade. Anything else at the catalog's path (an empty file, a damaged
one, another program's database) is refused with ``CatalogDamagedError`` and left untouched: it may be
the only copy of the keys, pins, approvals and audit. Only a missing file is made, and it is made
whole: in a temporary file linked into place, so no other process ever sees a half-made one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Protocol

from tool_selector.core.errors import CatalogDamagedError, ConflictError, StoreError

APPLICATION_ID = 0x54534C43  # "TSLC" in the header of every catalog tool-selector makes
SQLITE_MAGIC = b"SQLite format 3\x00"
RESTORE = (
    "It was left as it is. Restore catalog.db from a backup (docs/operator-guide.md, Backup and "
    "recovery), or point TOOL_SELECTOR_DATA_DIR at the folder that holds your catalog."
)


def damaged(path: Path, problem: str) -> CatalogDamagedError:
    return CatalogDamagedError(
        f"The catalog database {path} {problem}.", hint=RESTORE, path=str(path), problem=problem
    )


def prepare(path: Path) -> None:
    """Before connecting: make a missing catalog file (marked, with no tables yet), and refuse a file
    that cannot be one (empty, or not SQLite), which SQLite would otherwise take for a new database."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        head = _read_head(path)
    except FileNotFoundError:
        _create(path)
        return
    except OSError as exc:
        raise StoreError(f"Cannot read the catalog database {path}: {exc}.", path=str(path)) from exc
    if not head:
        raise damaged(path, "is empty (0 bytes): it holds no catalog, and may have been cut off")
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        raise damaged(path, "is not an SQLite database, so not a tool-selector catalog")


_heads: dict[tuple[int, int], int] = {}  # (device, inode) -> a descriptor this process keeps open
_heads_lock = threading.Lock()


def _read_head(path: Path) -> bytes:
    """The file's first 100 bytes, read through a descriptor that is never closed.

    Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
    included: with a connection of another thread open, a plain ``open()``/``close()`` here would drop
    its shared lock, and another process closing its last connection would then take the database
    for unused and delete the WAL under this one, whose later commits would be lost. So each file
    (device and inode) is opened once per process and kept, as SQLite keeps its own descriptors."""
    with _heads_lock:
        found = path.stat()
        fd = _heads.get((found.st_dev, found.st_ino))
        if fd is None:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            opened = os.fstat(fd)  # the file may have been replaced since the stat: key by what is open
            _heads.setdefault((opened.st_dev, opened.st_ino), fd)
        return os.pread(fd, 100, 0)


def check_ours(db: sqlite3.Connection, path: Path, stored_version: int | None) -> None:
    """After connecting: refuse an SQLite database that is not a tool-selector catalog."""
    marked = int(db.execute("PRAGMA application_id").fetchone()[0])
    if marked == APPLICATION_ID or (marked == 0 and stored_version is not None):
        return
    found = f"application id {marked:#x}" if marked else "no meta table with a schema version"
    raise damaged(path, f"is an SQLite database of another program, not a tool-selector catalog ({found})")


def mark(db: sqlite3.Connection) -> None:
    """Put the mark in the header (in the caller's write transaction)."""
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")


def _create(path: Path) -> None:
    made = path.with_name(f"{path.name}.new-{uuid.uuid4().hex[:12]}")
    try:
        with closing(sqlite3.connect(made, isolation_level=None)) as db:
            mark(db)  # writes the header page: the file is never empty
        try:
            os.link(made, path)  # never replaces: a file another process made first wins
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(made, path)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(
            f"Cannot create the catalog database {path}: {exc}.",
            hint="Check that the data folder is writable.",
            path=str(path),
        ) from exc
    finally:
        made.unlink(missing_ok=True)


def backup(store: HasDatabase, out: Path) -> dict[str, int]:
    """A consistent copy of the live catalog in ``out`` (SQLite's ``VACUUM INTO``: one read transaction,
    writers go on meanwhile), written beside ``out`` and then moved there. Returns what the copy holds."""
    if out.exists():
        raise ConflictError(f"{out} exists already.", hint="Name a new file, or remove that one first.")
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f"{out.name}.part-{uuid.uuid4().hex[:12]}")
    try:
        store.database.connection.execute("VACUUM INTO ?", (str(part),))
        with closing(sqlite3.connect(f"file:{part}?mode=ro", uri=True)) as copy:
            if copy.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise StoreError(f"The backup written to {part} does not check out.", hint="Retry.")
            counts = {
                table: int(copy.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("servers", "tools", "api_keys", "audit")
            }
        os.replace(part, out)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"Cannot write the backup {out}: {exc}.", path=str(out)) from exc
    finally:
        part.unlink(missing_ok=True)
    return {"bytes": out.stat().st_size, **counts}


# SQLite's primary result codes of a write the disk refused: read-only, I/O error, full, cannot open
_DISK_REFUSED = {
    8: "the file or its folder is read-only",
    10: "a disk I/O error",
    13: "the disk is full",
    14: "the file cannot be opened",
}


def write_refused(path: Path, exc: BaseException) -> StoreError | None:
    """The StoreError for a write the disk refused, or None for any other failure."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.OperationalError) or code is None or code & 0xFF not in _DISK_REFUSED:
        return None
    why = _DISK_REFUSED[code & 0xFF]
    return StoreError(
        f"The catalog database {path} could not be written: {why} ({exc}). Nothing of this change was "
        "stored; what was stored before is intact.",
        hint=f"Free disk space (or fix the permissions) where {path.parent} lives, then run it again.",
        path=str(path),
        problem=why,
    )


class Database:
    """The catalog's connection and its transactions: the one object the store, the writer and the admin
    tables share inside the catalog package (``store.database``); no connection leaves the package.
    ``ended(connection, committed=...)`` is told how each transaction ended (pins.transaction_ended)."""

    def __init__(self, connection: sqlite3.Connection, path: Path, ended: Callable[..., None]) -> None:
        self.connection = connection
        self.path = path
        self._ended = ended

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        """One statement on the connection (a read, or a write inside ``transaction``)."""
        return self.connection.execute(sql, parameters)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; inside an open transaction it joins it (the outer one commits or
        rolls back everything, which makes a batch of single writes all-or-nothing). A write the disk
        refuses (full, I/O error, read-only) is rolled back and raised as StoreError."""
        db = self.connection
        if db.in_transaction:
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException as exc:
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            finally:
                self._ended(db, committed=False)  # what it cached goes
            refused = write_refused(self.path, exc)
            if refused is not None:
                raise refused from exc
            raise
        self._ended(db, committed=True)


class HasDatabase(Protocol):
    """What the catalog package's functions take: an object holding the catalog's ``Database`` (the
    store)."""

    database: Database
