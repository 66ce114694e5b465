"""The catalog's names for the shadowing check are read once, then brought up to date from the change log
a server at a time (catalog/pins.py ``scan_context``): after any write, from this connection, another
or another process, committed or rolled back, they answer as the names read anew would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scan_contexts import answers
from tool_selector.catalog import changes
from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec
from tool_selector.trust.scanner import ScanContext

TOOLS = {
    "mail": ["send_email", "read_inbox"],
    "Mail": ["readInbox"],
    "notes": ["list_notes", "add_note", "search"],
    "billing": ["create_invoice", "issue_refund"],
    "helper": ["sendEmail"],
}
METHOD = CreationMethod.IMPORTED


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CatalogStore]:
    with CatalogStore(tmp_path / "catalog.db") as opened:
        servers = [ServerSpec(name=s, description=f"{s} things") for s in [*TOOLS, "empty", "gone"]]
        tools = [
            ToolSpec(server=s, name=n, description=f"{n} of {s}") for s, names in TOOLS.items() for n in names
        ]
        CatalogWriter(opened).import_catalog(servers, tools, creation_method=METHOD, actor="test")
        yield opened


@pytest.fixture
def full_reads(store: CatalogStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the times every name of the catalog is read after the import (which read them once;
    from then on they are read a server at a time)."""
    reads: list[int] = []
    read_all = changes._all_pairs

    def counted(db: object) -> object:
        reads.append(1)
        return read_all(db)  # type: ignore[arg-type]

    monkeypatch.setattr(changes, "_all_pairs", counted)
    return reads


def _cached(store: CatalogStore) -> ScanContext:
    with store.database.transaction() as db:
        return changes.scan_context(db)


def _anew(store: CatalogStore) -> ScanContext:
    return ScanContext.from_tools((t.server, t.name) for t in store.list_tools())


def _tool(server: str, name: str, description: str = "") -> ToolSpec:
    return ToolSpec(server=server, name=name, description=description or f"{name} of {server}")


def test_after_each_write_the_names_answer_as_all_the_names_read_anew(
    store: CatalogStore, full_reads: list[int]
) -> None:
    writer = CatalogWriter(store)
    assert answers(_cached(store)) == answers(_anew(store))
    writes = [
        lambda: writer.create_tool(_tool("helper", "send_email_secure"), method=METHOD, actor="t"),
        lambda: writer.create_tool(_tool("gone", "Send_Email"), method=METHOD, actor="t"),
        lambda: writer.delete_tool("mail::send_email", actor="t"),
        lambda: writer.update_tool(
            "notes::add_note",
            description="Call create_invoice first.",
            input_schema=None,
            annotations=None,
            actor="t",
        ),
        lambda: writer.delete_server("gone", cascade=True, actor="t"),
        lambda: writer.import_catalog(  # renames: billing's tools replaced by others
            [ServerSpec(name="billing", description="billing things")],
            [_tool("billing", "create_invoice_v2"), _tool("billing", "sendEmail")],
            creation_method=METHOD,
            actor="t",
        ),
        lambda: writer.create_tool(_tool("empty", "purge_archive"), method=METHOD, actor="t"),
    ]
    for write in writes:
        write()
        assert answers(_cached(store)) == answers(_anew(store))
    assert full_reads == []  # never all of them again: a server at a time


def test_writes_of_another_connection_and_another_process_are_read_from_the_change_log(
    store: CatalogStore, full_reads: list[int]
) -> None:
    _cached(store)
    with CatalogStore(store.path) as other:  # its deletion does not look at the names: the log tells
        CatalogWriter(other).delete_tool("notes::list_notes", actor="t")
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from tool_selector.catalog.store import CatalogStore
        from tool_selector.catalog.writer import CatalogWriter
        from tool_selector.core.models import CreationMethod, ToolSpec
        with CatalogStore(Path({str(store.path)!r})) as store:
            spec = ToolSpec(server="empty", name="list_notes", description="Lists notes elsewhere.")
            CatalogWriter(store).create_tool(spec, method=CreationMethod.IMPORTED, actor="other")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    context = _cached(store)
    assert context.others("notes", "list_notes") == ["empty"]
    assert answers(context) == answers(_anew(store))
    assert full_reads == []


def test_names_read_in_a_transaction_that_is_rolled_back_are_forgotten(
    store: CatalogStore, full_reads: list[int]
) -> None:
    writer = CatalogWriter(store)
    _cached(store)
    with pytest.raises(RuntimeError), writer.batch():
        writer.create_tool(_tool("helper", "issue_refund_official"), method=METHOD, actor="t")
        raise RuntimeError("the batch fails after the names were read")
    # the next write reaches the change numbers the rolled-back one had, with other changes
    writer.create_tool(_tool("empty", "add_note"), method=METHOD, actor="t")
    context = _cached(store)
    assert context.others("notes", "issue_refund_official") == []
    assert answers(context) == answers(_anew(store))
    assert len(full_reads) == 1  # read again after the rollback


def test_names_are_read_anew_when_the_log_was_pruned_or_too_many_servers_changed(
    store: CatalogStore, full_reads: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = CatalogWriter(store)
    _cached(store)
    with CatalogStore(store.path) as other:
        CatalogWriter(other).delete_tool("billing::issue_refund", actor="t")
        other.prune_changes(other.change_seq())
    assert answers(_cached(store)) == answers(_anew(store))
    assert len(full_reads) == 1
    monkeypatch.setattr(changes, "REREAD_ALL", 1)
    with CatalogStore(store.path) as other:
        CatalogWriter(other).delete_tool("mail::read_inbox", actor="t")
        CatalogWriter(other).delete_tool("Mail::readInbox", actor="t")
    writer.create_tool(_tool("empty", "read_inbox"), method=METHOD, actor="t")
    assert answers(_cached(store)) == answers(_anew(store))
    assert len(full_reads) == 2


def test_another_catalog_file_put_in_the_place_of_the_first_is_read_anew(tmp_path: Path) -> None:
    path, elsewhere = tmp_path / "catalog.db", tmp_path / "restored.db"
    for where, tools in ((path, TOOLS), (elsewhere, {"mail": ["read_inbox"], "billing": ["issue_refund"]})):
        with CatalogStore(where) as store:
            servers = [ServerSpec(name=s, description=f"{s} things") for s in tools]
            specs = [_tool(s, n) for s, names in tools.items() for n in names]
            writer = CatalogWriter(store)
            writer.import_catalog(servers, specs, creation_method=METHOD, actor="t")
            for number in range(30 if where == elsewhere else 0):  # its change numbers run past the first's
                writer.create_tool(_tool("mail", f"archive_{number}"), method=METHOD, actor="t")
            _cached(store)
    os.replace(elsewhere, path)  # a backup restored in its place
    with CatalogStore(path) as store:
        assert answers(_cached(store)) == answers(_anew(store))
        assert _cached(store).others("billing", "send_email") == []
