"""The memory of confirmed choices through a real ``tool-selector serve`` process and the mcp Client, as
an agent uses it: a request two powers fit -> multiple_matches -> activate_power -> a successful call ->
the same request again -> activated (remembered); then ``tool-selector memory clear`` -> multiple_matches
again. Over ``serve --http`` with two API keys, one key's confirmed choice never decides the other's
request; on a full disk a served call is answered with its result. Two configured copies of the weather
station (tests/servers/flaky_server.py), the real model."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from mcp import StdioServerParameters
from mcp.client.client import Client

from services.root.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import (
    CLI,
    SERVERS,
    GatewaySetup,
    answer,
    create_key,
    http_client,
    http_gateway,
    stdio_gateway,
    text,
)
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.embedding.embedders import MiniLMEmbedder

pytestmark = pytest.mark.anyio

REQUEST = "echo back the weather reading 21.5"  # both stations fit: multiple_matches (checked below)
CLOSE = "echo back the weather reading 19.0"  # the same request with another argument


def _memory(setup: GatewaySetup, *args: str) -> subprocess.CompletedProcess[str]:
    """``tool-selector memory ...`` on the set-up's data folder, as a person runs it beside the gateway."""
    return subprocess.run(
        [str(CLI), "memory", *args], env=setup.env(), capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def twin_stations(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> GatewaySetup:
    base = tmp_path_factory.mktemp("memory-gateway")
    setup = GatewaySetup(base / "data", session_cache_dir, base / "servers.json")
    station = ServerConfig(command=sys.executable, args=[str(SERVERS / "flaky_server.py")])
    save_servers(setup.servers_file, ServersFile(mcpServers={"rooftop": station, "garden": station}))
    with Container(setup.settings(sync_enricher="offline"), embedder=embedder) as container:
        summary = run_sync(container)
        assert summary.ok, summary.failed
    return setup


async def test_a_confirmed_choice_activates_the_same_request_until_the_memory_is_cleared(
    twin_stations: GatewaySetup,
) -> None:
    async with stdio_gateway(twin_stations) as client:
        first = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        assert first["status"] == "multiple_matches", first
        assert {m["power"] for m in first["matches"]} >= {"rooftop", "garden"}
        await client.call_tool("activate_power", {"name": "garden"})
        echoed = await client.call_tool("garden__echo", {"text": "21.5 C"})
        assert not echoed.is_error
        await client.call_tool("deactivate_power", {"name": "garden"})

        again = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        assert (again["status"], again["power"], again["match_type"]) == ("activated", "garden", "remembered")
        assert "served by its tool echo before" in again["message"]

        cleared = _memory(twin_stations, "clear", "--yes")
        assert cleared.returncode == 0 and '"forgotten": 1' in cleared.stdout, cleared.stderr
        after = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        assert after["status"] == "multiple_matches", after


async def test_with_the_memory_off_nothing_is_remembered(twin_stations: GatewaySetup, tmp_path: Path) -> None:
    async with stdio_gateway(twin_stations, memory_enabled="false") as client:
        answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        await client.call_tool("activate_power", {"name": "rooftop"})
        assert not (await client.call_tool("rooftop__echo", {"text": "19 C"})).is_error
        again = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
        assert again["status"] == "multiple_matches"
    listed = _memory(twin_stations, "list", "--json")
    assert listed.stdout.strip() == "[]", listed.stdout


@pytest.fixture
def stations(twin_stations: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    """A copy of the twin stations' data folder, for a test that changes what is remembered."""
    shutil.copytree(twin_stations.data_dir, tmp_path / "data")
    shutil.copy(twin_stations.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", twin_stations.cache_dir, tmp_path / "servers.json")


async def test_over_serve_http_one_keys_confirmed_choice_never_decides_another_keys_request(
    stations: GatewaySetup,
) -> None:
    a, b = (create_key(stations, name, role="editor")["key"] for name in ("a", "b"))
    async with http_gateway(stations) as gateway:
        async with http_client(gateway.url, b, mode="legacy") as client:  # key B confirms garden
            first = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
            assert first["status"] == "multiple_matches", first
            await client.call_tool("activate_power", {"name": "garden"})
            assert not (await client.call_tool("garden__echo", {"text": "21.5 C"})).is_error
            mine = answer(await client.call_tool("resolve_intent", {"query": CLOSE}))
            assert (mine["status"], mine.get("power"), mine.get("match_type")) == (
                "activated",
                "garden",
                "remembered",
            ), mine
        for mode in ("legacy", "auto"):  # key A, in a session and stateless
            async with http_client(gateway.url, a, mode=mode) as client:
                theirs = answer(await client.call_tool("resolve_intent", {"query": CLOSE}))
                assert theirs["status"] == "multiple_matches" and theirs.get("match_type") is None, theirs
    listed = json.loads(_memory(stations, "list", "--json").stdout)
    assert [(c["principal"][:4], c["power"], c["tool"]) for c in listed] == [("key:", "garden", "echo")]


# run the gateway with its files unable to grow past a limit, as on a full disk (RLIMIT_FSIZE, SIGXFSZ
# ignored so that a write fails instead of killing the process); then exec the command given
LIMITED = (
    "import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2); os.execv(sys.argv[2], sys.argv[2:])"
)


async def test_on_a_full_disk_a_served_call_is_answered_with_its_result_and_nothing_is_stored(
    stations: GatewaySetup,
) -> None:
    db = stations.data_dir / "catalog.db"
    with closing(sqlite3.connect(db)) as held:  # keeps the WAL and its index in place: no file need grow
        held.execute("SELECT COUNT(*) FROM servers").fetchone()
        params = StdioServerParameters(
            command=sys.executable, args=["-c", LIMITED, "1024", str(CLI), "serve"], env=stations.env()
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            first = answer(await client.call_tool("resolve_intent", {"query": REQUEST}))
            assert first["status"] == "multiple_matches", first
            await client.call_tool("activate_power", {"name": "garden"})
            served = await client.call_tool("garden__echo", {"text": "21.5 C"})
            assert not served.is_error and text(served) == "21.5 C", text(served)
            proxied = await client.call_tool(
                "call_tool", {"power": "garden", "tool": "echo", "arguments": {"text": "19 C"}}
            )
            assert not proxied.is_error and text(proxied) == "19 C", text(proxied)
        assert held.execute("SELECT COUNT(*) FROM choices").fetchone()[0] == 0
        assert held.execute("SELECT COUNT(*) FROM servers").fetchone()[0] == 2
