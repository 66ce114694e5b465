"""The memory of confirmed choices belongs to whoever confirmed it (issue 39): over the HTTP gateway each
API key has its own, and no request of one key is decided, bound or refuted by another key's.

What ``serve --http`` serves (``routes.gateway.http_app``: the key check in front of the MCP app) on a
real uvicorn server in a thread, the mcp Client talking to it, two configured copies of the weather
station (tests/servers/flaky_server.py, served over streamable HTTP from a thread) so that "echo back
the weather reading 21.5" is ``multiple_matches``, and the real model. Clients are stateless (the 2026
protocol: no MCP session) unless they say ``mode="legacy"``. The process itself is tested in
test_gateway_memory_process.py.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from services.access.keys import create_key
from services.root.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import (
    GatewaySetup,
    answer,
    http_client,
    inprocess_http_gateway,
    weather_station_over_http,
)
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.core.choices import Role
from tool_selector.embedding.embedders import MiniLMEmbedder

pytestmark = pytest.mark.anyio

REQUEST = "echo back the weather reading 21.5"  # both stations fit: multiple_matches (checked below)
CLOSE = "echo back the weather reading 19.0"  # the same request with another argument


@pytest.fixture(scope="module")
def template(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[GatewaySetup]:
    base = tmp_path_factory.mktemp("memory-keys")
    setup = GatewaySetup(base / "data", session_cache_dir, base / "servers.json")
    with weather_station_over_http() as url:
        station = ServerConfig(url=url)
        save_servers(setup.servers_file, ServersFile(mcpServers={"rooftop": station, "garden": station}))
        with Container(setup.settings(sync_enricher="offline"), embedder=embedder) as container:
            summary = run_sync(container)
            assert summary.ok, summary.failed
        yield setup


@pytest.fixture
def setup(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


def make_key(setup: GatewaySetup, embedder: MiniLMEmbedder, name: str, role: Role = "editor") -> str:
    with Container(setup.settings(), embedder=embedder) as container:
        return create_key(container.store, name, role=role, actor="test").key


def choices(setup: GatewaySetup) -> list[dict[str, Any]]:
    """The stored rows, read as `tool-selector memory list` would find them."""
    with closing(sqlite3.connect(setup.data_dir / "catalog.db")) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM choices ORDER BY id")]


async def confirm(url: str, key: str, power: str = "garden", *, mode: str = "auto") -> None:
    """The key resolves REQUEST (multiple_matches), chooses ``power`` and its echo serves it."""
    async with http_client(url, key, mode=mode) as client:
        first = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        assert first["status"] == "multiple_matches", first
        assert {m["power"] for m in first["matches"]} >= {"rooftop", "garden"}
        assert not (await client.call_tool("activate_power", {"name": power})).is_error
        assert not (await client.call_tool(f"{power}__echo", {"text": "21.5 C"})).is_error


async def resolve(url: str, key: str, query: str, *, mode: str = "auto") -> dict[str, Any]:
    async with http_client(url, key, mode=mode) as client:
        return answer(await client.call_tool("resolve_intent", {"query": query}))


async def test_one_keys_confirmed_choice_never_decides_another_keys_request(
    setup: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    a, b = make_key(setup, embedder, "a"), make_key(setup, embedder, "b")
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        await confirm(url, b, mode="legacy")  # key B, in a session of its own
        mine = await resolve(url, b, CLOSE)
        assert (mine["status"], mine.get("power"), mine.get("match_type")) == (
            "activated",
            "garden",
            "remembered",
        ), mine
        for mode in ("legacy", "auto"):  # key A, in a session and without one
            theirs = await resolve(url, a, CLOSE, mode=mode)
            assert theirs["status"] == "multiple_matches", theirs
            assert theirs.get("match_type") != "remembered"
    [row] = choices(setup)
    assert row["principal"].startswith("key:") and (row["power"], row["tool"]) == ("garden", "echo")


async def test_a_key_that_never_resolved_cannot_bind_another_keys_stateless_request(
    setup: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    a, b = make_key(setup, embedder, "a"), make_key(setup, embedder, "b")
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        first = await resolve(url, a, REQUEST)  # key A's request waits for A's choice
        assert first["status"] == "multiple_matches", first
        async with http_client(url, b) as intruder:  # key B resolved nothing, and calls a shown tool
            assert not (await intruder.call_tool("activate_power", {"name": "garden"})).is_error
            assert not (await intruder.call_tool("garden__whoami", {})).is_error
            assert not (await intruder.call_tool("garden__echo", {"text": "x"})).is_error
        assert choices(setup) == []
        again = await resolve(url, a, CLOSE)
        assert again["status"] == "multiple_matches" and again.get("match_type") != "remembered", again


async def test_a_stateless_key_remembers_its_own_choice_in_its_one_slot(
    setup: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    a = make_key(setup, embedder, "a")
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        await confirm(url, a, "rooftop")  # stateless: every request a new connection
        again = await resolve(url, a, CLOSE)
    assert (again["status"], again.get("power"), again.get("match_type")) == (
        "activated",
        "rooftop",
        "remembered",
    ), again


async def test_a_viewer_key_asking_the_same_words_again_refutes_no_ones_choice(
    setup: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    editor, viewer = make_key(setup, embedder, "editor"), make_key(setup, embedder, "viewer", "viewer")
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        await confirm(url, editor)
        async with http_client(url, viewer, mode="legacy") as client:
            for _ in range(3):
                seen = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
                assert seen["status"] == "multiple_matches", seen
        mine = await resolve(url, editor, REQUEST)
    assert [(r["confirmed"], r["refuted"]) for r in choices(setup)] == [(1, 0)]
    assert mine.get("match_type") == "remembered", mine


async def test_a_damaged_row_leaves_every_request_answered_and_is_skipped(
    setup: GatewaySetup, embedder: MiniLMEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    a = make_key(setup, embedder, "a")
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        await confirm(url, a)
        [row] = choices(setup)
        with closing(sqlite3.connect(setup.data_dir / "catalog.db")) as db, db:
            db.execute("UPDATE choices SET vector = x'0000' WHERE id=?", (row["id"],))
            db.execute("UPDATE meta SET value = '99' WHERE key LIKE 'choices_generation%'")
        for _ in range(2):
            after = await resolve(url, a, CLOSE)
            assert after["status"] == "multiple_matches", after
    warned = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert warned == [
        f"remembered choice {row['id']} is damaged and is not used: its vector is 2 bytes long, not a list "
        f"of float32 values. Repair: tool-selector memory forget {row['id']}"
    ]


async def test_a_request_with_other_words_of_the_user_refutes_nothing_however_close_its_query(
    setup: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    """Issue 42: the agent gives the user's words beside its query (``request``). After a remembered
    activation, a close query in other words for which the agent chooses the other station refutes the
    remembered choice when the user's words are the same (the agent rewording the request), never when
    they are new (a new request)."""
    key = make_key(setup, embedder, "a")
    said = "Please echo the reading 21.5 back to me"
    with inprocess_http_gateway(setup.settings(), embedder) as url:
        await confirm(url, key, mode="legacy")
        for words, refuted in (("Now repeat the reading from the other station", 0), (said, 1)):
            async with http_client(url, key, mode="legacy") as client:
                first = {"query": REQUEST, "request": said}
                remembered = answer(await client.call_tool("resolve_intent", first))
                assert (remembered["status"], remembered.get("match_type")) == ("activated", "remembered")
                other = {"query": "repeat the weather reading", "request": words}
                again = answer(await client.call_tool("resolve_intent", other))
                assert again.get("match_type") != "remembered", again
                assert not (await client.call_tool("activate_power", {"name": "rooftop"})).is_error
            assert [(r["power"], r["refuted"]) for r in choices(setup)] == [("garden", refuted)]
