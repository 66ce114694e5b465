"""Edits cost what they change: the catalog logs each change by server (triggers), and a refresh of the
index redoes only the servers changed since its mark; a registration enriches only its own server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write import registry
from services.write.catalog import import_catalog_dir
from services.write.indexing import refresh_index
from tests.support.catalogs import write_catalog
from tests.support.indexed import EMBEDDER, SMALL_TOOLS, indexed_catalog, spy_service_updates
from tool_selector.core.models import CreationMethod, ToolSpec
from tool_selector.index.mark import SEQ_MARK, index_is_current


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    with indexed_catalog(tmp_path, write_catalog(tmp_path / "catalog", SMALL_TOOLS)) as (opened, first):
        assert first.documents == 7 and first.written == 7  # the first build reads everything
        yield opened


def _register(container: Container, server: str, name: str, description: str) -> None:
    spec = ToolSpec(server=server, name=name, description=description)
    registry.register_tool(
        container, spec, mode="force_create", method=CreationMethod.MANUAL_API, actor="test"
    )


def test_every_change_is_logged_by_server_and_the_index_is_current_only_after_catching_up(
    container: Container,
) -> None:
    store = container.store
    seq = store.change_seq()
    assert index_is_current(container)
    container.writer.update_server(
        "clock", description="Clocks and alarms", metadata=None, actor="test", trust="pin"
    )
    assert store.servers_changed_since(seq) == {"clock"}
    assert store.change_seq() > seq
    assert not index_is_current(container)
    summary = refresh_index(container)
    assert (summary.documents, summary.servers_indexed) == (7, 3)  # what the index holds after
    assert (summary.written, summary.servers_written) == (2, 1)  # clock's two tools and itself only
    assert index_is_current(container)
    assert store.servers_changed_since(store.change_seq()) == set()


def test_a_registration_enriches_and_indexes_only_its_own_server(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[set[str] | None] = []
    indexed: list[int] = []
    real_enrich = getattr(registry, "enrich_catalog")  # noqa: B009 - the names registry calls
    real_index = getattr(registry, "refresh_index")  # noqa: B009

    def enrich(*args: object, **kwargs: object) -> object:
        servers = kwargs.get("servers")
        planned.append(None if servers is None else set(servers))  # type: ignore[call-overload]
        return real_enrich(*args, **kwargs)

    def index(*args: object, **kwargs: object) -> object:
        summary = real_index(*args, **kwargs)
        indexed.append(summary.written + summary.removed)
        return summary

    monkeypatch.setattr(registry, "enrich_catalog", enrich)
    monkeypatch.setattr(registry, "refresh_index", index)
    _register(container, "mail", "archive_email", "Move an email to the archive folder")
    assert planned == [{"mail"}]
    assert indexed == [1]  # the new tool written; nothing else of the catalog read or rewritten
    assert "mail::archive_email" in container.backend.ids()
    assert container.store.get_enrichment("mail::archive_email") is not None
    assert index_is_current(container)
    registry.delete_tool(container, "mail::archive_email", actor="test")
    assert indexed == [1, 1]
    assert "mail::archive_email" not in container.backend.ids()
    assert index_is_current(container)


def test_a_renamed_or_deleted_server_takes_its_documents_along(container: Container) -> None:
    registry.delete_server(container, "clock", cascade=True, actor="test")
    assert {i.rpartition("::")[0] for i in container.backend.ids()} == {"weather", "mail"}
    assert set(container.backend.ids(target="servers")) == {"weather", "mail"}
    assert index_is_current(container)


def test_changes_made_by_another_process_are_picked_up_by_the_next_refresh(
    container: Container, tmp_path: Path
) -> None:
    with Container(container.settings, embedder=EMBEDDER) as other:  # e.g. `tool-selector catalog import`
        import_catalog_dir(
            other,
            write_catalog(tmp_path / "more", {"notes": ["create_page"]}),
            approve=True,
            actor="test",
        )
    assert not index_is_current(container)
    summary = refresh_index(container)
    assert (summary.documents, summary.written) == (8, 1)
    assert "notes::create_page" in container.backend.ids()


def test_a_mark_older_than_the_pruned_log_means_a_full_refresh(container: Container) -> None:
    store = container.store
    assert store.servers_changed_since(0) is not None  # kept: the last PRUNE_LAG changes stay
    store.set_meta(container.index_key + SEQ_MARK, "0")  # an index that missed changes now forgotten
    store.prune_changes(store.change_seq())
    assert store.servers_changed_since(0) is None
    summary = refresh_index(container)
    assert summary.documents == 7 and summary.unchanged == 7  # all read again, nothing rewritten


def test_an_index_without_a_mark_is_stale_and_the_next_refresh_compares_it_whole_and_marks_it(
    container: Container,
) -> None:
    store = container.store
    store.set_meta(container.index_key, store.catalog_hash())  # what a 0.1 pre-release wrote: not read
    with store.database.transaction() as db:
        db.execute("DELETE FROM meta WHERE key=?", (container.index_key + SEQ_MARK,))
    assert not index_is_current(container)
    summary = refresh_index(container)
    assert summary.documents == 7  # no mark to start from: everything is compared once
    assert store.get_meta(container.index_key + SEQ_MARK) == str(store.change_seq())


def test_a_running_reader_updates_its_service_by_what_changed_and_answers_as_a_fresh_one(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = ReadPath(container, cache_size=0)
    live.snapshot()
    updates = spy_service_updates(monkeypatch)
    _register(container, "mail", "archive_email", "Move an email to the archive folder")
    registry.delete_tool(container, "clock::set_alarm", actor="test")
    live.expire()
    served = live.snapshot()
    assert updates == [{"mail", "clock"}]  # read again: the two servers changed, not the catalog
    built = ReadPath.fixed(container)
    fresh = built.snapshot()
    assert served.powers == fresh.powers
    assert served.terms.document_frequency == fresh.terms.document_frequency
    for text in ["archive this email", "set an alarm for six", "weather alerts", "what time is it"]:
        assert live.decide(text) == built.decide(text)
