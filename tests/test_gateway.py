"""The MCP gateway end to end: the mcp Client over stdio and streamable HTTP against a real
``tool-selector serve`` process, with real upstream servers (mcp-server-time, a weather-station test
server that can crash or hang, and a server that never answers); over HTTP with real API keys."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_helpers import (
    CLI,
    GatewaySetup,
    Notifications,
    answer,
    bearer,
    create_key,
    http_client,
    http_gateway,
    make_setup,
    marked_pids,
    post_initialize,
    revoke_key,
    stdio_gateway,
    text,
    tool_names,
    wait_exited,
)
from mcp import MCPError

from tool_selector.embedding import MiniLMEmbedder

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> GatewaySetup:
    return make_setup(tmp_path_factory.mktemp("gateway"), session_cache_dir, embedder)


async def test_an_agent_resolves_activates_and_gets_the_real_time_from_mcp_server_time(
    setup: GatewaySetup,
) -> None:
    notes = Notifications()
    async with stdio_gateway(setup, notes) as client:
        listed = await client.list_tools()
        assert tool_names(listed) == {
            "resolve_intent",
            "activate_power",
            "deactivate_power",
            "call_tool",
            "catalog_query",
        }
        resolved = answer(
            await client.call_tool("resolve_intent", {"query": "what is the current time in Tokyo"})
        )
        top = resolved.get("power") or resolved["matches"][0]["power"]
        assert top == "time", resolved
        activated = answer(await client.call_tool("activate_power", {"name": "time"}))
        assert activated["status"] == "activated" and activated["ready"] is True
        assert {t["name"] for t in activated["tools"]} == {"get_current_time", "convert_time"}
        await notes.wait()
        assert "time__get_current_time" in tool_names(await client.list_tools())
        result = await client.call_tool("time__get_current_time", {"timezone": "Asia/Tokyo"})
        assert not result.is_error, text(result)
        now = json.loads(text(result))
        shown = datetime.fromisoformat(now["datetime"])
        assert now["timezone"] == "Asia/Tokyo" and shown.utcoffset() == timedelta(hours=9)
        assert abs(shown.astimezone(UTC) - datetime.now(UTC)) < timedelta(minutes=2)


async def test_activate_power_lists_the_original_tools_with_steering_and_says_what_comes_next(
    setup: GatewaySetup,
) -> None:
    async with stdio_gateway(setup) as client:
        activated = answer(await client.call_tool("activate_power", {"name": "weather"}))
    tools = {t["name"]: t for t in activated["tools"]}
    assert tools["echo"]["description"] == "Echo a weather station reading back unchanged."
    assert tools["echo"]["input_schema"]["required"] == ["text"]
    assert tools["echo"]["call_as"] == "weather__echo"
    assert activated["steering"] == "Readings are in Celsius."
    assert activated["suggested_next_actions"][0]["tool"] == "call_tool"
    # no resolve_intent came first in this session: a hint, but the activation went ahead
    assert activated["hint"]["code"] == "PREREQUISITE_SUGGESTED" and activated["hint"]["can_proceed"] is True


async def test_activate_power_before_resolve_intent_hints_once_and_works_again_and_stats_count_it(
    setup: GatewaySetup,
) -> None:
    async with stdio_gateway(setup) as client:
        first = answer(await client.call_tool("activate_power", {"name": "time"}))
        again = answer(await client.call_tool("activate_power", {"name": "time"}))
        await client.call_tool("time__get_current_time", {"timezone": "UTC"})
    assert first["hint"]["code"] == "PREREQUISITE_SUGGESTED" and first["ready"] is True
    assert "hint" not in again and again["ready"] is True and again["already_active"] is True
    out = subprocess.run(
        [str(CLI), "stats", "--json"], env=setup.env(), capture_output=True, text=True, check=True
    )
    session = json.loads(out.stdout)[0]
    assert session["calls"] == {"activate_power": 2, "time__get_current_time": 1}
    prerequisite = session["hints"]["PREREQUISITE_SUGGESTED"]
    assert prerequisite == {"shown": 1, "followed": 0, "ignored": 1}
    suggested = session["hints"]["suggested_next_actions"]
    assert suggested["shown"] == 2 and suggested["followed"] == 1 and suggested["ignored"] == 1
    table = subprocess.run([str(CLI), "stats"], env=setup.env(), capture_output=True, text=True, check=True)
    assert "PREREQUISITE_SUGGESTED 1/0/1" in table.stdout


async def test_call_tool_proxies_without_an_activation_for_clients_that_ignore_list_changed(
    setup: GatewaySetup,
) -> None:
    async with stdio_gateway(setup) as client:
        result = await client.call_tool(
            "call_tool", {"power": "weather", "tool": "echo", "arguments": {"text": "12.5 C"}}
        )
        assert not result.is_error and text(result) == "12.5 C"
        wrong = await client.call_tool("call_tool", {"power": "weather", "tool": "ecco", "arguments": {}})
        assert wrong.is_error and "has no tool 'ecco'" in text(wrong) and "echo" in text(wrong)
        refused = await client.call_tool(
            "call_tool", {"power": "time", "tool": "get_current_time", "arguments": {"timezone": "Mars/Base"}}
        )
        assert refused.is_error and "Invalid timezone" in text(refused)
        assert "Fix the arguments as it says" in text(refused)


async def test_an_unknown_power_is_refused_with_the_closest_configured_names(setup: GatewaySetup) -> None:
    async with stdio_gateway(setup) as client:
        result = await client.call_tool("activate_power", {"name": "wheather"})
        empty = await client.call_tool("resolve_intent", {"query": "  "})
    assert result.is_error and "Closest configured names: weather" in text(result)
    assert "Next step:" in text(result)
    assert empty.is_error and "query" in text(empty) and "Next step:" in text(empty)


async def test_a_crashed_upstream_is_reported_its_tools_go_and_it_can_be_activated_again(
    setup: GatewaySetup,
) -> None:
    notes = Notifications()
    async with stdio_gateway(setup, notes) as client:
        await client.call_tool("activate_power", {"name": "weather"})
        await notes.wait()
        first_pid = int(text(await client.call_tool("weather__whoami", {})))
        crashed = await client.call_tool("weather__crash", {})
        assert crashed.is_error and "closed the connection" in text(crashed), text(crashed)
        assert "Next step:" in text(crashed)
        await notes.wait()
        assert "weather__echo" not in tool_names(await client.list_tools())
        assert wait_exited({first_pid}, 5) == set()
        again = answer(await client.call_tool("activate_power", {"name": "weather"}))
        assert again["ready"] is True and again["already_active"] is False
        assert int(text(await client.call_tool("weather__whoami", {}))) != first_pid


async def test_a_hanging_call_times_out_with_advice_and_the_server_keeps_serving(setup: GatewaySetup) -> None:
    async with stdio_gateway(setup) as client:
        hung = await client.call_tool("call_tool", {"power": "weather", "tool": "hang", "arguments": {}})
        assert hung.is_error and "did not answer 'hang' within 3 s" in text(hung)
        echoed = await client.call_tool("weather__echo", {"text": "still here"})
        assert text(echoed) == "still here"


async def test_a_server_that_never_initializes_times_out_and_leaves_no_process(
    setup: GatewaySetup, tmp_path: Path
) -> None:
    pid_file = setup.servers_file.parent / "stuck.pid"
    pid_file.unlink(missing_ok=True)
    async with stdio_gateway(setup) as client:
        result = await client.call_tool("activate_power", {"name": "stuck"})
    assert result.is_error and "timed out after 1.5 s while initializing" in text(result)
    assert wait_exited({int(pid_file.read_text())}, 10) == set()


async def test_at_most_n_powers_run_and_the_least_recently_used_is_stopped_first(setup: GatewaySetup) -> None:
    async with stdio_gateway(setup, gateway_max_active="1") as client:
        await client.call_tool("activate_power", {"name": "time"})
        weather = answer(await client.call_tool("activate_power", {"name": "weather"}))
        names = tool_names(await client.list_tools())
    assert weather["stopped_to_make_room"] == ["time"]
    assert "weather__echo" in names and not any(n.startswith("time__") for n in names)


async def test_an_idle_power_is_stopped_and_the_client_is_told(setup: GatewaySetup) -> None:
    notes = Notifications()
    async with stdio_gateway(setup, notes, gateway_idle_timeout_s="0.5") as client:
        await client.call_tool("activate_power", {"name": "weather"})
        await notes.wait()
        pid = int(text(await client.call_tool("weather__whoami", {})))
        await notes.wait()  # the idle stop
        assert "weather__echo" not in tool_names(await client.list_tools())
    assert wait_exited({pid}, 5) == set()


async def test_no_process_outlives_a_client_that_disconnects(setup: GatewaySetup) -> None:
    async with stdio_gateway(setup) as client:
        await client.call_tool("activate_power", {"name": "time"})
        await client.call_tool("activate_power", {"name": "weather"})
        running = marked_pids(setup.mark)
        assert len(running) >= 3  # the gateway, time, weather
    assert wait_exited(running, 15) == set()
    assert marked_pids(setup.mark) == set()


async def test_no_process_outlives_a_gateway_stopped_with_sigterm(setup: GatewaySetup) -> None:
    before = marked_pids(setup.mark)
    with pytest.raises((MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError, ExceptionGroup)):
        async with stdio_gateway(setup) as client:
            await client.call_tool("activate_power", {"name": "weather"})
            await client.call_tool("activate_power", {"name": "time"})
            running = marked_pids(setup.mark) - before
            gateway = [p for p in running if "serve" in Path(f"/proc/{p}/cmdline").read_text()]
            assert len(gateway) == 1 and len(running) >= 3
            os.kill(gateway[0], signal.SIGTERM)
            assert await anyio.to_thread.run_sync(wait_exited, running, 15) == set()
            await client.call_tool("resolve_intent", {"query": "is anyone there"})
    assert marked_pids(setup.mark) - before == set()


async def test_a_2026_client_gets_tools_changed_on_its_listen_stream(setup: GatewaySetup) -> None:
    async with stdio_gateway(setup, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("activate_power", {"name": "time"})
            with anyio.fail_after(15):
                async for _event in subscription:
                    break
        assert "time__convert_time" in tool_names(await client.list_tools())


async def test_over_streamable_http_an_agent_resolves_activates_and_calls_and_sigterm_stops_all(
    setup: GatewaySetup,
) -> None:
    key = create_key(setup, "agent", role="viewer")["key"]
    before = marked_pids(setup.mark)
    async with http_gateway(setup) as gateway:
        async with http_client(gateway.url, key) as client:
            resolved = answer(
                await client.call_tool("resolve_intent", {"query": "echo a weather station reading"})
            )
            assert (resolved.get("power") or resolved["matches"][0]["power"]) == "weather", resolved
            queried = answer(
                await client.call_tool(
                    "catalog_query", {"query_type": "tools", "filters": {"server": "weather"}}
                )
            )
            assert {t["name"] for t in queried["items"]} == {"echo", "whoami", "crash", "hang"}
            result = await client.call_tool(
                "call_tool", {"power": "weather", "tool": "echo", "arguments": {"text": "over http"}}
            )
            assert text(result) == "over http"
        running = marked_pids(setup.mark) - before
        assert gateway.process.pid in running and len(running) >= 2
        gateway.process.send_signal(signal.SIGTERM)
        assert await anyio.to_thread.run_sync(wait_exited, running, 20) == set()
        # uvicorn re-raises the signal after its shutdown
        assert gateway.process.wait(5) in (0, -signal.SIGTERM)


# --------------------------------------------------------------------------- API keys over HTTP


def _error(response: httpx2.Response) -> dict[str, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "hint"}, body
    error = body["error"]
    assert isinstance(error, dict)
    return error


async def test_the_http_gateway_answers_401_with_a_json_error_to_a_request_without_a_key(
    setup: GatewaySetup,
) -> None:
    async with http_gateway(setup) as gateway:
        missing = await post_initialize(gateway.url)
        stream = await post_initialize(gateway.url.removesuffix("/mcp") + "/anything")
        basic = await post_initialize(gateway.url, {"Authorization": "Basic dXNlcjpwYXNz"})
        forged = await post_initialize(gateway.url, bearer("tsk_000000000000_" + "x" * 43))
    for response in (missing, stream, basic, forged):
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.headers["content-type"] == "application/json"
        assert _error(response)["code"] == "unauthorized"
    assert "Authorization: Bearer" in _error(missing)["message"]
    assert "keys create" in _error(missing)["hint"]
    assert "not valid" in _error(forged)["message"]


async def test_a_revoked_key_is_refused_with_401_even_inside_a_session_it_opened(
    setup: GatewaySetup,
) -> None:
    created = create_key(setup, "soon-revoked", role="viewer")
    async with http_gateway(setup) as gateway:
        async with http_client(gateway.url, created["key"]) as client:
            assert "resolve_intent" in tool_names(await client.list_tools())
            revoke_key(setup, created["id"])
            with pytest.raises(MCPError):
                await client.list_tools()
        refused = await post_initialize(gateway.url, bearer(created["key"]))
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    error = _error(refused)
    assert error["code"] == "unauthorized" and "was revoked" in error["message"]


async def test_a_key_without_the_read_scope_is_refused_with_403_naming_the_scope(
    setup: GatewaySetup,
) -> None:
    importer = create_key(setup, "importer", role="editor", scopes=("import",))
    assert importer["scopes"] == ["import"]
    async with http_gateway(setup) as gateway:
        refused = await post_initialize(gateway.url, bearer(importer["key"]))
    assert refused.status_code == 403 and "www-authenticate" not in refused.headers
    error = _error(refused)
    assert error["code"] == "forbidden" and "'read'" in error["message"]
    assert "viewer" in error["hint"]


async def test_a_viewer_key_lists_and_calls_tools_over_http(setup: GatewaySetup) -> None:
    key = create_key(setup, "viewer", role="viewer")["key"]
    async with http_gateway(setup) as gateway, http_client(gateway.url, key) as client:
        assert tool_names(await client.list_tools()) >= {"resolve_intent", "activate_power", "call_tool"}
        activated = answer(await client.call_tool("activate_power", {"name": "weather"}))
        assert activated["ready"] is True
        assert "weather__echo" in tool_names(await client.list_tools())
        echoed = await client.call_tool("weather__echo", {"text": "with a key"})
        assert not echoed.is_error and text(echoed) == "with a key"
        stopped = answer(await client.call_tool("deactivate_power", {"name": "weather"}))
        assert stopped["status"] == "deactivated"
