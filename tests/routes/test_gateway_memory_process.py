"""The memory of confirmed choices through a real ``tool-selector serve`` process and the mcp Client, as
an agent uses it: a request two powers fit -> multiple_matches -> activate_power -> a successful call ->
the same request again -> activated (remembered); then ``tool-selector memory clear`` -> multiple_matches
again. Two configured copies of the weather station (tests/servers/flaky_server.py), the real model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from services.shared.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import CLI, SERVERS, GatewaySetup, answer, stdio_gateway
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.embedding.embedders import MiniLMEmbedder

pytestmark = pytest.mark.anyio

REQUEST = "repeat back the reading 21.5"  # both stations fit: multiple_matches (checked below)


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
    with Container(setup.settings(enricher="offline"), embedder=embedder) as container:
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
