"""The ``tool-selector serve`` process: what only a process shows. Over stdio, no process outlives
the client or a SIGTERM; over streamable HTTP, an agent works with a real API key, the keys the real
``keys`` command makes and revokes are enforced, and SIGTERM stops everything. The protocol itself
is tested in-process in test_gateway.py."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import MCPError

from tests.support.gateway_helpers import (
    GatewaySetup,
    answer,
    bearer,
    create_key,
    http_client,
    http_gateway,
    marked_pids,
    post_initialize,
    revoke_key,
    stdio_gateway,
    text,
    tool_names,
    wait_exited,
)

pytestmark = pytest.mark.anyio


async def test_no_process_outlives_a_client_that_disconnects(gateway_setup: GatewaySetup) -> None:
    async with stdio_gateway(gateway_setup) as client:
        await client.call_tool("activate_power", {"name": "time"})
        await client.call_tool("activate_power", {"name": "weather"})
        running = marked_pids(gateway_setup.mark)
        assert len(running) >= 3  # the gateway, time, weather
    assert wait_exited(running, 15) == set()
    assert marked_pids(gateway_setup.mark) == set()


async def test_no_process_outlives_a_gateway_stopped_with_sigterm(gateway_setup: GatewaySetup) -> None:
    before = marked_pids(gateway_setup.mark)
    with pytest.raises((MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError, ExceptionGroup)):
        async with stdio_gateway(gateway_setup) as client:
            await client.call_tool("activate_power", {"name": "weather"})
            await client.call_tool("activate_power", {"name": "time"})
            running = marked_pids(gateway_setup.mark) - before
            gateway = [p for p in running if "serve" in Path(f"/proc/{p}/cmdline").read_text()]
            assert len(gateway) == 1 and len(running) >= 3
            os.kill(gateway[0], signal.SIGTERM)
            assert await anyio.to_thread.run_sync(wait_exited, running, 15) == set()
            await client.call_tool("resolve_intent", {"query": "is anyone there"})
    assert marked_pids(gateway_setup.mark) - before == set()


async def test_over_streamable_http_an_agent_resolves_activates_and_calls_and_sigterm_stops_all(
    gateway_setup: GatewaySetup,
) -> None:
    key = create_key(gateway_setup, "agent", role="editor")["key"]  # running tools needs `call`
    before = marked_pids(gateway_setup.mark)
    async with http_gateway(gateway_setup) as gateway:
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
        running = marked_pids(gateway_setup.mark) - before
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
    gateway_setup: GatewaySetup,
) -> None:
    async with http_gateway(gateway_setup) as gateway:
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
    gateway_setup: GatewaySetup,
) -> None:
    created = create_key(gateway_setup, "soon-revoked", role="viewer")
    async with http_gateway(gateway_setup) as gateway:
        async with http_client(gateway.url, created["key"]) as client:
            assert "resolve_intent" in tool_names(await client.list_tools())
            revoke_key(gateway_setup, created["id"])
            with pytest.raises(MCPError):
                await client.list_tools()
        refused = await post_initialize(gateway.url, bearer(created["key"]))
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    error = _error(refused)
    assert error["code"] == "unauthorized" and "was revoked" in error["message"]


async def test_a_key_without_the_read_scope_is_refused_with_403_naming_the_scope(
    gateway_setup: GatewaySetup,
) -> None:
    importer = create_key(gateway_setup, "importer", role="editor", scopes=("import",))
    assert importer["scopes"] == ["import"]
    async with http_gateway(gateway_setup) as gateway:
        refused = await post_initialize(gateway.url, bearer(importer["key"]))
    assert refused.status_code == 403 and "www-authenticate" not in refused.headers
    error = _error(refused)
    assert error["code"] == "forbidden" and "'read'" in error["message"]
    assert "viewer" in error["hint"]


async def test_over_http_a_viewer_key_cannot_run_tools_and_an_editor_key_lists_and_calls_them(
    gateway_setup: GatewaySetup,
) -> None:
    viewer = create_key(gateway_setup, "viewer", role="viewer")["key"]
    editor = create_key(gateway_setup, "editor", role="editor")["key"]
    async with http_gateway(gateway_setup) as gateway:
        async with http_client(gateway.url, viewer) as client:
            for name, arguments in (("activate_power", {"name": "weather"}), ("call_tool", CALL_ECHO)):
                refused = await client.call_tool(name, arguments)
                assert refused.is_error and "lacks the 'call' scope" in text(refused), text(refused)
        async with http_client(gateway.url, editor) as client:
            assert tool_names(await client.list_tools()) >= {"resolve_intent", "activate_power", "call_tool"}
            activated = answer(await client.call_tool("activate_power", {"name": "weather"}))
            assert "ready" not in activated  # ready unless it says not
            assert "weather__echo" in tool_names(await client.list_tools())
            echoed = await client.call_tool("weather__echo", {"text": "with a key"})
            assert not echoed.is_error and text(echoed) == "with a key"
            stopped = answer(await client.call_tool("deactivate_power", {"name": "weather"}))
            assert stopped["status"] == "deactivated"


CALL_ECHO = {"power": "weather", "tool": "echo", "arguments": {"text": "no"}}


def test_the_cold_start_benchmark_times_a_real_serve_and_refuses_a_request_that_activates(
    gateway_setup: GatewaySetup,
) -> None:
    from eval.bench.gateway import bench_cold_start
    from tool_selector.config.settings import Settings

    settings = Settings(cache_dir=gateway_setup.cache_dir)
    args = (settings, gateway_setup.data_dir, gateway_setup.servers_file)
    figures = bench_cold_start(*args, "how do I get red wine out of a carpet", rounds=2)
    assert figures["rounds"] == 2 and "activated" not in figures["status"]
    initialize, first = figures["initialize_s"], figures["first_resolve_intent_s"]
    assert 0 < initialize["min"] <= initialize["median"] <= initialize["max"]
    assert first["median"] > initialize["median"]
    with pytest.raises(RuntimeError, match="activated a power"):
        bench_cold_start(*args, "what time is it in Tokyo", rounds=1)
