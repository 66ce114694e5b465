"""Reading the catalog database file as another process would (tests only: the product's SQL lives in
tool_selector/catalog)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def count_rows(path: Path, table: str) -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
