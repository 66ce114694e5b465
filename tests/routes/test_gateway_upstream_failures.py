"""An upstream tool call that fails, as the agent and the operator see it: the advice after the tool's own
error matches what failed (tool_selector/route/failure.py), and ``tool-selector stats`` counts each failed
call for its power, whether the tool reported the error or its server could not start, crashed or hung.

Real servers: mcp-server-fetch (allowed to fetch loopback addresses, so that an unreachable address is
one on this machine) and mcp-server-git configured after the sync (the gateway vets them when it starts
them), beside the real set-up's
mcp-server-time, the weather station and the server that never answers (tests/routes/conftest.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from routes.cli import app
from tests.support.gateway_helpers import GatewaySetup, inprocess_gateway, stdio_gateway, text
from tests.support.paths import ROOT
from tool_selector.config.servers import ServerConfig, ServersFile, load_servers, save_servers
from tool_selector.embedding.embedders import MiniLMEmbedder

pytestmark = pytest.mark.anyio

BIN = ROOT / ".venv" / "bin"
UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: nothing listens there
FIX_THE_ARGUMENTS = "Fix the arguments as it says"
COULD_NOT_REACH = "could not reach the network or the address"


@pytest.fixture
def failing(gateway_setup: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    """This test's own copy of the real set-up (the gateway records its sessions in the catalog), with
    mcp-server-fetch and mcp-server-git configured too."""
    for server in ("mcp-server-fetch", "mcp-server-git"):
        if not (BIN / server).exists():
            pytest.skip(f"{server} is not installed (run scripts/setup.sh)")
    shutil.copytree(gateway_setup.data_dir, tmp_path / "data")
    configs = dict(load_servers(gateway_setup.servers_file).mcpServers)
    configs["fetch"] = ServerConfig(command=str(BIN / "mcp-server-fetch"), args=["--allow-private-ips"])
    configs["git"] = ServerConfig(command=str(BIN / "mcp-server-git"))
    save_servers(tmp_path / "servers.json", ServersFile(mcpServers=configs))
    return GatewaySetup(tmp_path / "data", gateway_setup.cache_dir, tmp_path / "servers.json")


async def test_a_fetch_of_an_unreachable_address_says_the_server_could_not_reach_it_not_to_fix_the_arguments(
    failing: GatewaySetup, embedder: MiniLMEmbedder
) -> None:
    async with inprocess_gateway(failing.settings(), embedder) as client:
        unreachable = await client.call_tool(
            "call_tool", {"power": "fetch", "tool": "fetch", "arguments": {"url": UNREACHABLE}}
        )
        malformed = await client.call_tool(
            "call_tool", {"power": "fetch", "tool": "fetch", "arguments": {"url": "not a url"}}
        )
    assert unreachable.is_error and "connection" in text(unreachable), text(unreachable)  # fetch's own text
    assert COULD_NOT_REACH in text(unreachable) and FIX_THE_ARGUMENTS not in text(unreachable)
    assert malformed.is_error and "validation error" in text(malformed), text(malformed)
    assert FIX_THE_ARGUMENTS in text(malformed) and COULD_NOT_REACH not in text(malformed)


async def test_an_error_the_gateway_cannot_tell_claims_neither_the_network_nor_the_arguments(
    failing: GatewaySetup, embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-repository")
    async with inprocess_gateway(failing.settings(), embedder) as client:
        await client.call_tool("activate_power", {"name": "git"})
        result = await client.call_tool("git__git_status", {"repo_path": missing})
    said = text(result)
    assert result.is_error and missing in said and "reported the error above" in said, said
    assert FIX_THE_ARGUMENTS not in said and COULD_NOT_REACH not in said


async def test_stats_count_each_failed_upstream_call_for_its_power_in_json_and_text(
    failing: GatewaySetup,
) -> None:
    """Through a real ``tool-selector serve``: a tool's own error (time, fetch), a server that crashed
    mid-call (weather) and one that never started (stuck) each count once for their power; calls that
    went through count for none."""
    async with stdio_gateway(failing) as client:
        answered = await client.call_tool(
            "call_tool", {"power": "weather", "tool": "echo", "arguments": {"text": "ok"}}
        )
        refused = await client.call_tool(
            "call_tool", {"power": "time", "tool": "get_current_time", "arguments": {"timezone": "Mars/Base"}}
        )
        unreachable = await client.call_tool(
            "call_tool", {"power": "fetch", "tool": "fetch", "arguments": {"url": UNREACHABLE}}
        )
        crashed = await client.call_tool("weather__crash", {})
        stuck = await client.call_tool("call_tool", {"power": "stuck", "tool": "anything", "arguments": {}})
    assert not answered.is_error and all(r.is_error for r in (refused, unreachable, crashed, stuck))
    env = {"TOOL_SELECTOR_DATA_DIR": str(failing.data_dir)}
    shown = CliRunner().invoke(app, ["stats", "--sessions", "1", "--json"], env=env)
    assert shown.exit_code == 0, shown.output
    session = json.loads(shown.stdout)[0]
    assert session["upstream_errors"] == {"time": 1, "fetch": 1, "weather": 1, "stuck": 1}, session
    assert session["errors"] == 4
    table = CliRunner().invoke(app, ["stats", "--sessions", "1", "--text"], env=env).stdout
    assert "[fetch 1, stuck 1, time 1, weather 1]" in table, table
    assert "failed upstream calls: fetch 1, stuck 1, time 1, weather 1" in table, table
