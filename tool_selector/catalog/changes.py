"""The catalog's change log and what is kept up to date by it (SQL for the catalog package only).

Every write to what the index is made from logs the servers it touched (``catalog_changes``, filled by
triggers: schema.py). ``change_seq`` and ``servers_changed_since`` read the log: an index, a running
reader and the names below redo only the servers changed since they were last brought in line.

``scan_context`` gives the scanner's shadowing check every (server, tool) name of the catalog, read once
per process and catalog file and then brought up to date from the log; ``transaction_ended`` (told by
``Database.transaction``) keeps those names true to what was committed.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tool_selector.core.models import ToolSpec
from tool_selector.trust.names import CatalogNames
from tool_selector.trust.scanner import ScanContext


@dataclass
class _Names:
    """A catalog file's tool names as of change ``seq``. ``writer``: the connection whose open
    transaction they include changes of (None: only committed changes). ``inode``: the file they were
    read from (another file put in its place, a restored backup, is read anew)."""

    seq: int
    names: CatalogNames
    inode: tuple[int, int]
    writer: sqlite3.Connection | None = None


_NAMES: dict[str, _Names] = {}  # database file -> its names, kept up to date by scan_context
_NAMES_LOCK = threading.Lock()
REREAD_ALL = 2000  # more servers changed than this since the names were read: read them all again


def scan_context(db: sqlite3.Connection, extra: Iterable[ToolSpec] = ()) -> ScanContext:
    """Every (server, tool) name of the catalog and of ``extra``, for the scanner's shadowing check.

    Called inside a write transaction (``Database.transaction``). The catalog's names are read
    once per process and catalog file, then brought up to date from the change log (catalog_changes,
    which every write to the tools moves): only the names of the servers changed since are read again,
    so a registration does not read the 100k names of a large catalog. The names include what the
    open transaction wrote; if it is rolled back, they are forgotten (``transaction_ended``). Only one
    connection to a file writes at a time, so the names are changed in place: the context is good for
    the transaction it was made in. ``extra`` names are laid over the catalog's, each added to its
    server's names, without copying them."""
    file = str(db.execute("PRAGMA database_list").fetchone()[2] or "")
    names = _current_names(db, file) if file and db.in_transaction else CatalogNames.of(_all_pairs(db))
    added: dict[str, set[str]] = defaultdict(set)
    for tool in extra:
        added[tool.server].add(tool.name)
    over = {server: names.names_of.get(server, frozenset()) | own for server, own in added.items()}
    return ScanContext(names, over)


def _current_names(db: sqlite3.Connection, file: str) -> CatalogNames:
    seq = change_seq(db)
    try:
        stat = os.stat(file)
    except OSError:
        return CatalogNames.of(_all_pairs(db))
    inode = (stat.st_dev, stat.st_ino)
    with _NAMES_LOCK:
        cached = _NAMES.get(file)
        if cached is not None and (
            cached.writer not in (None, db) or cached.seq > seq or cached.inode != inode
        ):
            cached = None  # another transaction's names that it did not say it committed, or another file
        changed = None if cached is None else servers_changed_since(db, cached.seq)
        if cached is None or changed is None or len(changed) > REREAD_ALL:
            cached = _Names(seq, CatalogNames.of(_all_pairs(db)), inode)
        else:
            for server in changed:
                rows = db.execute("SELECT name FROM tools WHERE server=?", (server,))
                cached.names.set_server(server, frozenset(r[0] for r in rows))
            cached.seq = seq
        cached.writer = db
        _NAMES[file] = cached
        return cached.names


def transaction_ended(db: sqlite3.Connection, *, committed: bool) -> None:
    """``db``'s transaction was committed (the names it read are the catalog's now) or rolled back
    (they may hold changes that never happened: forgotten, read anew next time)."""
    with _NAMES_LOCK:
        for file, cached in list(_NAMES.items()):
            if cached.writer is db:
                if committed:
                    cached.writer = None
                else:
                    del _NAMES[file]


def _all_pairs(db: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    return ((r[0], r[1]) for r in db.execute("SELECT server, name FROM tools"))


def change_seq(db: sqlite3.Connection) -> int:
    """The last catalog change's number (0 before any); pruned changes keep their numbers used."""
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name='catalog_changes'").fetchone()
    return 0 if row is None else int(row[0])


def servers_changed_since(db: sqlite3.Connection, seq: int) -> set[str] | None:
    """The servers changed after change ``seq``; None when the log no longer reaches back that far."""
    pruned = db.execute("SELECT value FROM meta WHERE key='catalog_changes_pruned_to'").fetchone()
    if pruned is not None and seq < int(pruned[0]):
        return None
    rows = db.execute("SELECT DISTINCT server FROM catalog_changes WHERE seq > ?", (seq,))
    return {str(r[0]) for r in rows}
