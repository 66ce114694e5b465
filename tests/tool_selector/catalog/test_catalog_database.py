"""The catalog database file (tool_selector/catalog/database.py): only a missing file is made; an empty,
damaged or foreign one is refused and left as it was; a backup is a consistent copy that opens."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tool_selector.catalog.database import APPLICATION_ID, backup
from tool_selector.catalog.schema import SCHEMA_VERSION
from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.core.errors import CatalogDamagedError, ConflictError
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec


def _header(path: Path, pragma: str) -> object:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return db.execute(f"PRAGMA {pragma}").fetchone()[0]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _filled(path: Path) -> CatalogStore:
    store = CatalogStore(path)
    CatalogWriter(store).import_catalog(
        [ServerSpec(name="Weather", description="Forecasts")],
        [ToolSpec(server="Weather", name="get_forecast", description="Daily forecast")],
        creation_method=CreationMethod.IMPORTED,
        actor="test",
    )
    return store


def test_a_new_catalog_carries_the_tool_selector_mark_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "data" / "catalog.db"
    CatalogStore(path).close()
    assert _header(path, "application_id") == APPLICATION_ID
    assert [p.name for p in path.parent.iterdir() if ".new-" in p.name] == []
    CatalogStore(path).close()  # and it opens again as ours


def test_an_empty_catalog_file_is_refused_and_left_empty(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    path.touch()
    with pytest.raises(CatalogDamagedError) as info:
        CatalogStore(path)
    assert info.value.message == (
        f"The catalog database {path} is empty (0 bytes): it holds no catalog, and may have been cut off."
    )
    assert "Restore catalog.db from a backup" in info.value.hint
    assert (info.value.details["path"], path.stat().st_size) == (str(path), 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.db"]  # no -wal, no new file


def test_an_sqlite_file_of_another_program_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
        db.commit()
    before = _digest(path)
    with pytest.raises(CatalogDamagedError, match="an SQLite database of another program") as info:
        CatalogStore(path)
    assert "no meta table with a schema version" in info.value.message
    assert _digest(path) == before
    assert _header(path, "journal_mode") == "delete"  # not switched to WAL


def test_an_sqlite_file_marked_by_another_application_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id=1234")
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('schema_version', '4')")
        db.commit()
    with pytest.raises(CatalogDamagedError, match=r"application id 0x4d2"):
        CatalogStore(path)


def test_a_cut_off_catalog_is_refused_as_damaged(tmp_path: Path) -> None:
    whole = tmp_path / "whole.db"
    _filled(whole).close()
    path = tmp_path / "catalog.db"
    path.write_bytes(whole.read_bytes()[:4096])
    with pytest.raises(CatalogDamagedError, match="is damaged"):
        CatalogStore(path)
    assert path.stat().st_size == 4096


def test_a_catalog_made_before_the_mark_is_accepted_and_marked_at_its_next_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    _filled(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id=0")
        db.commit()
    with CatalogStore(path) as store:  # same schema version: opened as it is, nothing written
        assert store.counts() == (1, 1)
    assert _header(path, "application_id") == 0
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION - 1),))
        db.commit()
    with CatalogStore(path) as store:
        assert store.counts() == (1, 1)
    assert _header(path, "application_id") == APPLICATION_ID


def test_a_backup_is_a_catalog_that_opens_with_everything_in_it(tmp_path: Path) -> None:
    with _filled(tmp_path / "catalog.db") as store:
        store.set_meta("note", "kept")
        counts = backup(store, tmp_path / "backups" / "catalog-copy.db")
    assert counts["servers"] == 1 and counts["tools"] == 1 and counts["bytes"] > 0
    assert counts["audit"] >= 1
    copy = tmp_path / "backups" / "catalog-copy.db"
    assert _header(copy, "application_id") == APPLICATION_ID
    assert [p.name for p in copy.parent.iterdir()] == ["catalog-copy.db"]
    with CatalogStore(copy) as restored:
        assert restored.counts() == (1, 1)
        assert restored.get_meta("note") == "kept"


def test_a_backup_never_overwrites_a_file(tmp_path: Path) -> None:
    out = tmp_path / "taken.db"
    out.write_text("something else")
    with CatalogStore(tmp_path / "catalog.db") as store, pytest.raises(ConflictError, match="exists already"):
        backup(store, out)
    assert out.read_text() == "something else"
