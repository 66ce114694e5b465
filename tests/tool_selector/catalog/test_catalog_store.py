"""The catalog store: a real SQLite file, hashes, all-or-nothing imports, provenance, the vector cache."""

from __future__ import annotations

import hashlib
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.core.errors import CatalogDamagedError, NotFoundError, StoreError, ToolSelectorError
from tool_selector.core.hashing import canonical_json, server_hash, tool_hash
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec

WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _servers(*names: str) -> list[ServerSpec]:
    return [
        ServerSpec(name=n, description=f"{n} does things", metadata={"url": f"https://{n}"}) for n in names
    ]


def _catalog() -> tuple[list[ServerSpec], list[ToolSpec]]:
    servers = [
        ServerSpec(name="Weather", description="Forecasts and alerts", metadata={"categories": ["weather"]}),
        ServerSpec(name="Clock: World", description="Time in every zone"),
    ]
    tools = [
        ToolSpec(
            server="Weather", name="forecast", description="Daily forecast", input_schema=WEATHER_SCHEMA
        ),
        ToolSpec(server="Weather", name="alerts", description="Severe weather alerts"),
        ToolSpec(server="Clock: World", name="now", description="Current time in a zone"),
    ]
    return servers, tools


def _snapshot(store: CatalogStore) -> dict[str, Any]:
    """Everything a reader can see, timestamps included."""
    return {
        "servers": [s.model_dump() for s in store.list_servers()],
        "tools": [t.model_dump() for t in store.list_tools()],
        "counts": store.counts(),
        "catalog_hash": store.catalog_hash(),
    }


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with CatalogStore(tmp_path / "catalog.db") as opened:
        yield opened


# --------------------------------------------------------------------------- persistence


def test_an_imported_catalog_is_found_again_after_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    servers, tools = _catalog()
    with CatalogStore(path) as first:
        CatalogWriter(first).import_catalog(
            servers, tools, actor="test", creation_method=CreationMethod.IMPORTED
        )
        before = _snapshot(first)
    with CatalogStore(path) as second:
        after = _snapshot(second)
        forecast = second.get_tool("Weather::forecast")
        clock = second.get_server("Clock: World")
        weather = second.get_server("Weather")
    assert after == before
    assert [s["name"] for s in after["servers"]] == ["Clock: World", "Weather"]
    assert after["counts"] == (2, 3)
    assert forecast.input_schema == WEATHER_SCHEMA
    assert forecast.description == "Daily forecast"
    assert clock.tool_count == 1
    assert weather.metadata == {"categories": ["weather"]}


def test_a_server_name_with_colons_keeps_its_tool_ids_apart(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    tool = store.get_tool("Clock: World::now")
    assert (tool.server, tool.name) == ("Clock: World", "now")
    assert [t.name for t in store.list_tools("Clock: World")] == ["now"]


def test_unknown_names_raise_not_found(store: CatalogStore) -> None:
    with pytest.raises(NotFoundError, match="No server named 'Nope'"):
        store.get_server("Nope")
    with pytest.raises(NotFoundError, match="Nope::x"):
        store.get_tool("Nope::x")
    with pytest.raises(NotFoundError, match="No server named 'Nope'"):
        len(CatalogWriter(store).delete_server("Nope", cascade=True, actor="test"))


# --------------------------------------------------------------------------- hashes


def test_a_tool_hash_is_the_sha256_of_canonical_json_of_name_description_and_schema() -> None:
    schema = {"type": "object", "properties": {"zone": {"type": "string"}}}
    by_hand = hashlib.sha256(
        b'{"description":"Current time \xc3\xa0 la carte",'
        b'"input_schema":{"properties":{"zone":{"type":"string"}},"type":"object"},'
        b'"name":"now"}'
    ).hexdigest()
    assert tool_hash("now", "Current time à la carte", schema) == by_hand
    assert (
        ToolSpec(
            server="Clock", name="now", description="Current time à la carte", input_schema=schema
        ).compute_hash()
        == by_hand
    )
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'


def test_the_stored_tool_hash_ignores_annotations_and_the_server(store: CatalogStore) -> None:
    servers = _servers("A", "B")
    tools = [
        ToolSpec(server="A", name="t", description="d", annotations={"readOnlyHint": True}),
        ToolSpec(server="B", name="t", description="d"),
    ]
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    expected = tool_hash("t", "d", {})
    assert store.get_tool("A::t").content_hash == expected
    assert store.get_tool("B::t").content_hash == expected
    assert store.get_tool("A::t").annotations == {"readOnlyHint": True}


def test_a_server_hash_changes_when_a_tool_changes_and_not_when_tools_are_reordered(
    store: CatalogStore,
) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    original = store.get_server("Weather").content_hash
    weather_hashes = [t.compute_hash() for t in tools if t.server == "Weather"]
    assert original == server_hash(weather_hashes)
    assert server_hash(reversed(weather_hashes)) == original

    summary = CatalogWriter(store).import_catalog(
        servers, list(reversed(tools)), actor="test", creation_method=CreationMethod.IMPORTED
    )
    assert store.get_server("Weather").content_hash == original
    assert summary.servers_unchanged == 2
    assert summary.tools_unchanged == 3

    changed = [
        t.model_copy(update={"input_schema": {"type": "object"}}) if t.name == "forecast" else t
        for t in tools
    ]
    summary = CatalogWriter(store).import_catalog(
        servers, changed, actor="test", creation_method=CreationMethod.IMPORTED
    )
    assert store.get_server("Weather").content_hash != original
    assert store.get_server("Clock: World").content_hash == server_hash([tools[2].compute_hash()])
    assert (summary.servers_changed, summary.servers_unchanged) == (1, 1)
    assert (summary.tools_changed, summary.tools_unchanged) == (1, 2)
    assert store.get_tool("Weather::forecast").input_schema == {"type": "object"}


def test_the_catalog_hash_follows_server_descriptions(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    before = store.catalog_hash()
    renamed = [
        s.model_copy(update={"description": "Other words"}) if s.name == "Weather" else s for s in servers
    ]
    summary = CatalogWriter(store).import_catalog(
        renamed, tools, actor="test", creation_method=CreationMethod.IMPORTED, trust="pin"
    )
    assert summary.servers_changed == 1
    assert store.catalog_hash() != before


# --------------------------------------------------------------------------- re-import, removal, prune


def test_reimporting_the_same_catalog_reports_all_unchanged_and_keeps_updated_at(store: CatalogStore) -> None:
    servers, tools = _catalog()
    first = CatalogWriter(store).import_catalog(
        servers, tools, actor="test", creation_method=CreationMethod.IMPORTED
    )
    assert (first.servers_added, first.tools_added) == (2, 3)
    before = _snapshot(store)
    again = CatalogWriter(store).import_catalog(
        servers, tools, actor="test", creation_method=CreationMethod.CLI
    )
    assert again.model_dump() == {
        "servers_added": 0,
        "servers_changed": 0,
        "servers_unchanged": 2,
        "servers_removed": 0,
        "tools_added": 0,
        "tools_changed": 0,
        "tools_unchanged": 3,
        "tools_removed": 0,
        "tools_pinned": 0,
        "held": [],
        "flagged": [],
        "servers_skipped": [],
        "servers_held": [],
    }
    assert _snapshot(store) == before  # updated_at, created_at and creation_method untouched


def test_a_changed_tool_keeps_its_created_at_and_provenance(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    before = store.get_tool("Weather::alerts")
    changed = [
        t.model_copy(update={"description": "Storm alerts"}) if t.name == "alerts" else t for t in tools
    ]
    CatalogWriter(store).import_catalog(servers, changed, actor="test", creation_method=CreationMethod.CLI)
    after = store.get_tool("Weather::alerts")
    assert after.description == "Storm alerts"
    assert after.content_hash == tool_hash("alerts", "Storm alerts", {})
    assert after.created_at == before.created_at
    assert after.updated_at >= before.updated_at
    assert after.creation_method == CreationMethod.IMPORTED


def test_a_tool_left_out_of_its_servers_list_is_removed(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    without_alerts = [t for t in tools if t.name != "alerts"]
    summary = CatalogWriter(store).import_catalog(
        servers, without_alerts, actor="test", creation_method=CreationMethod.IMPORTED
    )
    assert summary.tools_removed == 1
    assert [t.id for t in store.list_tools("Weather")] == ["Weather::forecast"]
    assert store.get_server("Weather").tool_count == 1
    with pytest.raises(NotFoundError):
        store.get_tool("Weather::alerts")


def test_servers_not_in_an_import_stay_unless_prune_is_asked(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    only_weather = [s for s in servers if s.name == "Weather"]
    weather_tools = [t for t in tools if t.server == "Weather"]

    kept = CatalogWriter(store).import_catalog(
        only_weather, weather_tools, actor="test", creation_method=CreationMethod.IMPORTED
    )
    assert kept.servers_removed == 0
    assert store.counts() == (2, 3)

    pruned = CatalogWriter(store).import_catalog(
        only_weather, weather_tools, actor="test", creation_method=CreationMethod.IMPORTED, prune=True
    )
    assert (pruned.servers_removed, pruned.tools_removed) == (1, 1)
    assert [s.name for s in store.list_servers()] == ["Weather"]
    assert store.counts() == (1, 2)
    with pytest.raises(NotFoundError):
        store.get_tool("Clock: World::now")


def test_deleting_a_server_takes_its_tools_with_it(store: CatalogStore) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    assert len(CatalogWriter(store).delete_server("Weather", cascade=True, actor="test")) == 2
    assert store.counts() == (1, 1)
    assert [t.id for t in store.list_tools()] == ["Clock: World::now"]


# --------------------------------------------------------------------------- all or nothing


def test_a_tool_of_a_server_outside_the_import_raises_not_found_and_changes_nothing(
    store: CatalogStore,
) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    before = _snapshot(store)
    new_servers = [*_servers("Fresh"), servers[0].model_copy(update={"description": "changed"})]
    stray = ToolSpec(server="Ghost", name="boo", description="no server")
    with pytest.raises(NotFoundError, match="Ghost"):
        CatalogWriter(store).import_catalog(
            new_servers,
            [ToolSpec(server="Fresh", name="x"), stray],
            actor="test",
            creation_method=CreationMethod.IMPORTED,
        )
    assert _snapshot(store) == before


def test_a_tool_listed_twice_in_one_import_is_refused_with_our_error_and_changes_nothing(
    store: CatalogStore,
) -> None:
    """The store is also written by registration APIs, not only by the file reader that checks this."""
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    before = _snapshot(store)
    fresh = ToolSpec(server="Fresh", name="twice", description="one")
    with pytest.raises(ToolSelectorError, match="twice"):
        CatalogWriter(store).import_catalog(
            [*servers, *_servers("Fresh")],
            [*tools, fresh, fresh.model_copy(update={"description": "two"})],
            actor="test",
            creation_method=CreationMethod.MANUAL_API,
        )
    assert _snapshot(store) == before


def test_a_failure_in_the_middle_of_an_import_leaves_the_previous_contents_exactly(
    store: CatalogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers, tools = _catalog()
    CatalogWriter(store).import_catalog(servers, tools, actor="test", creation_method=CreationMethod.IMPORTED)
    before = _snapshot(store)

    original = CatalogWriter._upsert_server
    written: list[str] = []

    def fail_on_the_third_server(
        self: CatalogWriter, db: sqlite3.Connection, server: ServerSpec, *args: Any
    ) -> str:
        if len(written) == 2:
            raise RuntimeError("disk on fire")
        written.append(server.name)
        return original(self, db, server, *args)

    monkeypatch.setattr(CatalogWriter, "_upsert_server", fail_on_the_third_server)
    new_servers = [
        servers[1].model_copy(update={"description": "rewritten"}),
        *_servers("Fresh", "Later"),
    ]
    new_tools = [
        ToolSpec(server="Fresh", name="x", description="new"),
        ToolSpec(server="Later", name="y", description="never written"),
    ]
    with pytest.raises(RuntimeError, match="disk on fire"):
        CatalogWriter(store).import_catalog(
            new_servers, new_tools, actor="test", creation_method=CreationMethod.CLI, prune=True
        )
    assert written == ["Clock: World", "Fresh"]  # two servers really were written before the failure
    assert _snapshot(store) == before

    monkeypatch.setattr(CatalogWriter, "_upsert_server", original)
    # the connection is usable again: no transaction was left open
    summary = CatalogWriter(store).import_catalog(
        new_servers, new_tools, actor="test", creation_method=CreationMethod.CLI, prune=True
    )
    assert summary.servers_added == 2
    assert summary.servers_removed == 1


_KILLED_IMPORT = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from tool_selector.catalog.store import CatalogStore
    from tool_selector.catalog.writer import CatalogWriter
    from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec

    path, servers_count = Path(sys.argv[1]), int(sys.argv[2])
    original = CatalogWriter._upsert_server
    done = []

    def upsert_then_block_half_way(self, db, server, *args):
        original(self, db, server, *args)
        done.append(server.name)
        if len(done) == servers_count // 2:
            print(f"inside the transaction after {len(done)} servers", flush=True)
            sys.stdin.read()  # blocks: the parent never writes, it kills us

    CatalogWriter._upsert_server = upsert_then_block_half_way
    filler = "lorem ipsum dolor sit amet " * 80
    servers = [ServerSpec(name=f"big-{i:04d}", description=filler) for i in range(servers_count)]
    tools = [
        ToolSpec(server=s.name, name=f"tool_{j}", description=f"{j} {filler}", input_schema={})
        for s in servers
        for j in range(10)
    ]
    with CatalogStore(path) as store:
        writer = CatalogWriter(store)
        method = CreationMethod.IMPORTED
        writer.import_catalog(servers, tools, actor="test", creation_method=method, prune=True)
    print("finished", flush=True)
    """
)


def test_a_process_killed_in_the_middle_of_a_large_import_leaves_the_old_catalog_readable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "catalog.db"
    servers, tools = _catalog()
    with CatalogStore(path) as store:  # opened before the writer takes its lock
        CatalogWriter(store).import_catalog(
            servers, tools, actor="test", creation_method=CreationMethod.IMPORTED
        )
        before = _snapshot(store)
        child = subprocess.Popen(
            [sys.executable, "-c", _KILLED_IMPORT, str(path), "400"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert child.stdout is not None
            # wait on the pipe until the child is mid-transaction (the timeout only guards against a hang)
            readable, _, _ = select.select([child.stdout], [], [], 120)
            assert readable, "the importing child never reported it was inside the transaction"
            ready = child.stdout.readline()
            assert ready.strip() == "inside the transaction after 200 servers"
            # the large half-written batch has reached the WAL file, yet a reader sees the old catalog
            assert (tmp_path / "catalog.db-wal").stat().st_size > 1_000_000
            assert _snapshot(store) == before
        finally:
            child.kill()
            child.wait()
            assert child.stdin is not None and child.stdout is not None
            child.stdin.close()
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    with CatalogStore(path) as reopened:
        assert _snapshot(reopened) == before
        assert reopened.database.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # and the killed writer's lock is gone: a new import goes through
        summary = CatalogWriter(reopened).import_catalog(
            _servers("After"), [], actor="test", creation_method=CreationMethod.CLI
        )
        assert summary.servers_added == 1


# --------------------------------------------------------------------------- provenance


def test_provenance_records_the_creation_method_and_timestamps(store: CatalogStore) -> None:
    CatalogWriter(store).import_catalog(
        _servers("Manual"),
        [ToolSpec(server="Manual", name="m")],
        actor="test",
        creation_method=CreationMethod.MANUAL,
    )
    CatalogWriter(store).import_catalog(
        _servers("Found"),
        [ToolSpec(server="Found", name="f")],
        actor="test",
        creation_method=CreationMethod.DISCOVERED,
    )
    manual, found = store.get_server("Manual"), store.get_server("Found")
    assert manual.creation_method == CreationMethod.MANUAL
    assert found.creation_method == CreationMethod.DISCOVERED
    assert store.get_tool("Manual::m").creation_method == CreationMethod.MANUAL
    assert store.get_tool("Found::f").creation_method == CreationMethod.DISCOVERED
    for record in (manual, found, store.get_tool("Manual::m")):
        assert record.created_at.tzinfo is not None
        assert record.created_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
        assert record.updated_at == record.created_at
    assert found.created_at >= manual.created_at
    sql = "SELECT creation_method, created_at FROM servers WHERE name='Manual'"
    raw = store.database.execute(sql).fetchone()
    assert raw["creation_method"] == "manual"
    assert raw["created_at"].endswith("+00:00")


# --------------------------------------------------------------------------- vector cache


def test_vectors_round_trip_through_the_cache_as_float32(store: CatalogStore) -> None:
    rng = np.random.default_rng(7)
    vectors = {f"hash-{i}": rng.standard_normal(384).astype(np.float32) for i in range(3)}
    vectors["hash-64"] = rng.standard_normal(384)  # float64 in, float32 out
    store.put_vectors("model-a", vectors)
    found = store.get_vectors("model-a", ["hash-0", "hash-1", "hash-2", "hash-64", "missing", "hash-0"])
    assert set(found) == {"hash-0", "hash-1", "hash-2", "hash-64"}
    for key in ("hash-0", "hash-1", "hash-2"):
        assert found[key].dtype == np.float32
        assert np.array_equal(found[key], vectors[key])
    assert np.array_equal(found["hash-64"], vectors["hash-64"].astype(np.float32))
    assert store.get_vectors("model-b", ["hash-0"]) == {}
    found["hash-0"][0] = 99.0  # a returned array is a copy, writable, and does not alter the cache
    assert store.get_vectors("model-a", ["hash-0"])["hash-0"][0] == vectors["hash-0"][0]


def test_the_vector_cache_answers_more_hashes_than_one_sql_statement_takes(store: CatalogStore) -> None:
    vectors = {f"h{i}": np.full(4, i, dtype=np.float32) for i in range(1200)}
    store.put_vectors("m", vectors)
    found = store.get_vectors("m", vectors)
    assert len(found) == 1200
    assert found["h1199"].tolist() == [1199.0] * 4


# --------------------------------------------------------------------------- errors


def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    path.write_bytes(b"this is a text file, not SQLite\n" * 200)
    with pytest.raises(CatalogDamagedError) as info:
        CatalogStore(path)
    assert f"The catalog database {path} is not an SQLite database" in info.value.message
    assert "Restore catalog.db from a backup" in info.value.hint
    assert info.value.details["path"] == str(path)
    assert path.read_bytes() == b"this is a text file, not SQLite\n" * 200


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    CatalogStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    db.close()
    with pytest.raises(StoreError, match="schema version 99"):
        CatalogStore(path)


def test_the_models_import_without_warnings() -> None:
    """pytest runs with -W error: a warning at import time breaks every test module."""
    run = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            "-c",
            "import tool_selector.core.models, tool_selector.catalog.store",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
