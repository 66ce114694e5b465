"""A few servers' indexed ids (what a write compares with its documents) without listing every id: the
embedded backend's ``ids_of_servers`` answers as ``ids()`` filtered by server would, through writes,
deletions, replacements, compactions and what another process wrote."""

from __future__ import annotations

from pathlib import Path

from tests.support.backends import CATALOG, EMBEDDER, SERVERS, server_doc
from tests.support.backends import doc as _doc
from tool_selector.index.written import indexed_ids, upsert_documents
from tool_selector.search.backend import Target
from tool_selector.search.embedded.backend import EmbeddedBackend

SCOPES = [{"Code Host"}, {"Notes", "Weather"}, {"Clock", "Nowhere"}, {"Maps"}, set()]


def _backend(directory: Path) -> EmbeddedBackend:
    return EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)


def _filtered(backend: EmbeddedBackend, servers: set[str], target: Target) -> dict[str, str]:
    every = backend.ids(target=target)
    return {i: h for i, h in every.items() if (i.rpartition("::")[0] if target == "tools" else i) in servers}


def _same_as_filtered(backend: EmbeddedBackend) -> None:
    for servers in SCOPES:
        for target in ("tools", "servers"):
            assert backend.ids_of_servers(servers, target=target) == _filtered(backend, servers, target)
            assert indexed_ids(backend, servers, target) == _filtered(backend, servers, target)


def test_a_few_servers_ids_equal_all_ids_filtered_through_every_kind_of_write(tmp_path: Path) -> None:
    writer = _backend(tmp_path / "index")
    writer.upsert(CATALOG)
    writer.upsert(SERVERS)
    _same_as_filtered(writer)
    writer.upsert(
        [_doc("Notes", "delete_page", "Delete a page"), server_doc("Notes", "Notes", ["delete_page"])]
    )
    writer.upsert([_doc("Code Host", "create_issue", "Open an issue", text_hash="v2")])  # replaced
    writer.delete(["Weather::get_forecast"])
    writer.delete(["Clock"], target="servers")
    _same_as_filtered(writer)
    assert writer.ids_of_servers({"Code Host"})["Code Host::create_issue"] == "v2"
    writer.compact()  # the rows start over: replaced and deleted ones are gone, and as many come after
    writer.upsert([_doc("Weather", "get_forecast", "Back again"), _doc("Maps", "find_route", "Find a route")])
    _same_as_filtered(writer)
    assert set(writer.ids_of_servers({"Maps"})) == {"Maps::find_route"}


def test_what_another_process_wrote_is_seen_after_a_refresh(tmp_path: Path) -> None:
    writer = _backend(tmp_path / "index")
    writer.upsert(CATALOG)
    reader = _backend(tmp_path / "index")
    _same_as_filtered(reader)
    writer.upsert([_doc("Clock", "set_alarm", "Set an alarm")])  # a delta on the same generation
    writer.delete(["Code Host::close_issue"])
    assert reader.refresh()
    _same_as_filtered(reader)
    assert set(reader.ids_of_servers({"Clock", "Code Host"})) == {
        "Clock::current_time",
        "Clock::set_alarm",
        "Code Host::create_issue",
        "Code Host::list_issues",
    }
    writer.compact()  # a new generation
    writer.upsert([_doc("Notes", "rename_page", "Rename a page")])
    assert reader.refresh()
    _same_as_filtered(reader)


def test_a_backend_without_them_is_filtered_from_all_its_ids(tmp_path: Path) -> None:
    class Plain:
        def __init__(self, backend: EmbeddedBackend) -> None:
            self.ids = backend.ids

    backend = _backend(tmp_path / "index")
    backend.upsert([*CATALOG, *SERVERS])
    plain = Plain(backend)
    for servers in SCOPES:
        for target in ("tools", "servers"):
            found = indexed_ids(plain, servers, target)  # type: ignore[arg-type]
            assert found == _filtered(backend, servers, target)
    assert indexed_ids(plain, None) == backend.ids()  # type: ignore[arg-type]


def test_a_server_named_like_a_tool_id_keeps_both_documents(tmp_path: Path) -> None:
    """Tool and server documents go in one write, unless a server's name is a tool's id: ``a::b`` the
    server and ``b`` of server ``a`` are two documents, each of its kind."""
    backend = _backend(tmp_path / "index")
    tool, server = _doc("a", "b", "A tool"), server_doc("a::b", "A server", [])
    assert upsert_documents(backend, [tool], [server]) == ({}, {})
    assert backend.ids() == {"a::b": tool.text_hash}
    assert backend.ids(target="servers") == {"a::b": server.text_hash}
    other = _doc("c", "d", "Another tool")
    assert upsert_documents(backend, [other], [server_doc("c", "C", ["d"])]) == ({}, {})
    assert set(backend.ids()) == {"a::b", "c::d"} and set(backend.ids(target="servers")) == {"a::b", "c"}
