"""The catalog database shared by processes: what one process commits is never lost because another
process closed its connections (SQLite in WAL mode, POSIX locks; tool_selector/catalog/database.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tool_selector.catalog.store import CatalogStore

READER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
print(db.execute("SELECT value FROM meta WHERE key=?", (sys.argv[2],)).fetchone(), flush=True)
sys.stdin.readline()
db.close()  # its last connection: SQLite checkpoints, and deletes the WAL if nobody else holds it
"""


def _other_process_reads(db: Path, key: str) -> tuple[subprocess.Popen[str], str]:
    """Another process with a connection open, once it has read ``key``; it closes it at a line."""
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db), key], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert reader.stdout is not None
    return reader, reader.stdout.readline()


def _read_elsewhere(db: Path, key: str) -> str:
    reader, value = _other_process_reads(db, key)
    reader.communicate("\n", timeout=60)
    return value


def test_a_commit_after_another_process_closed_its_last_connection_is_kept(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    writer = CatalogStore(db)  # this process's first connection (one thread's)
    writer.set_meta("before", "1")
    other, seen = _other_process_reads(db, "before")
    assert seen.strip() == "('1',)"
    second = CatalogStore(db)  # another thread's connection: opening it must not drop the first's locks
    other.communicate("\n", timeout=60)  # the other process closes its last connection and ends
    writer.set_meta("after", "2")
    try:
        assert _read_elsewhere(db, "after").strip() == "('2',)"  # committed for every process, not a lost WAL
    finally:
        second.close()
        writer.close()
