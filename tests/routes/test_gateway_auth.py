"""The gateway over streamable HTTP, with API keys (issue 15): what ``serve --http`` serves
(``routes.gateway.http_app``) on a real uvicorn server in a thread, the mcp Client talking to it.

- Running upstream tools needs the ``call`` scope: a viewer key resolves and queries, but cannot start,
  stop or call a power, and resolve_intent starts nothing for it; an editor key can.
- An MCP session answers only the key that opened it.
- A revoked key's session is closed: at its next request, and by the periodic check of open sessions.

The set-up is the fast one of test_gateway.py: the weather station served over streamable HTTP from a
thread, synced and indexed with the HashingEmbedder; no process starts, no model loads. The process
itself (``tool-selector serve --http``) is tested in test_gateway_process.py.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError, types

from services.access.keys import create_key, revoke_key
from services.root.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import (
    GatewaySetup,
    answer,
    http_client,
    inprocess_http_gateway,
    text,
    tool_names,
    weather_station_over_http,
)
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.core.choices import Role
from tool_selector.embedding.embedders import HashingEmbedder

pytestmark = pytest.mark.anyio

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
QUERY = "echo a weather station reading"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewaySetup]:
    base = tmp_path_factory.mktemp("gateway-auth")
    setup = GatewaySetup(base / "data", base / "cache", base / "servers.json")
    with weather_station_over_http() as url:
        save_servers(setup.servers_file, ServersFile(mcpServers={"weather": ServerConfig(url=url)}))
        with Container(setup.settings(sync_enricher="offline"), embedder=HASHING) as container:
            summary = run_sync(container)
            assert summary.ok, summary.failed
        yield setup


@pytest.fixture
def setup(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


class Keys:
    """API keys made, and revoked, through a container of their own (what `tool-selector keys` does
    from another process)."""

    def __init__(self, setup: GatewaySetup) -> None:
        self.settings = setup.settings()
        self.ids: dict[str, str] = {}

    def make(self, name: str, role: Role) -> str:
        with Container(self.settings, embedder=HASHING) as container:
            new = create_key(container.store, name, role=role, actor="test")
        self.ids[new.key] = new.record.id
        return new.key

    def revoke(self, key: str) -> None:
        with Container(self.settings, embedder=HASHING) as container:
            revoke_key(container.store, self.ids[key], actor="test")


@contextmanager
def gateway(setup: GatewaySetup, **settings: Any) -> Iterator[str]:
    with inprocess_http_gateway(setup.settings(**settings), HASHING) as url:
        yield url


async def post(url: str, key: str, session_id: str, method: str = "tools/list") -> httpx2.Response:
    """One raw JSON-RPC request on a session, to see the HTTP status the gateway answers with."""
    async with httpx2.AsyncClient(timeout=30.0) as http:
        return await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 7, "method": method, "params": {}},
            headers={
                "Authorization": f"Bearer {key}",
                "Accept": "application/json, text/event-stream",
                "Mcp-Session-Id": session_id,
            },
        )


class Watch:
    """What the mcp Client's HTTP client saw: the session id it was given, and an event per GET (the
    client opens a GET stream for server messages, and opens it again when the server closes it)."""

    def __init__(self) -> None:
        self.session_id = ""
        self.gets = 0
        self.get_seen = anyio.Event()

    async def __call__(self, response: httpx2.Response) -> None:
        self.session_id = response.headers.get("mcp-session-id") or self.session_id
        if response.request.method == "GET":
            self.gets += 1
            self.get_seen.set()

    async def next_get(self, timeout: float = 30.0) -> None:
        with anyio.fail_after(timeout):
            await self.get_seen.wait()
        self.get_seen = anyio.Event()


def _refused(result: types.CallToolResult) -> str:
    assert result.is_error, text(result)
    return text(result)


async def test_a_viewer_key_resolves_and_queries_but_cannot_start_stop_or_call_a_power(
    setup: GatewaySetup,
) -> None:
    keys = Keys(setup)
    viewer, editor = keys.make("viewer", "viewer"), keys.make("editor", "editor")
    with gateway(setup) as url:
        async with http_client(url, viewer) as client:
            resolved = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
            assert resolved["status"] == "activated" and resolved["power"] == "weather", resolved
            assert resolved["ready"] is False
            assert "lacks the 'call' scope" in resolved["message"] and "--role editor" in resolved["message"]
            query = {"query_type": "tools", "filters": {"server": "weather"}}
            queried = answer(await client.call_tool("catalog_query", query))
            assert "echo" in {t["name"] for t in queried["items"]}
            for name, arguments in (
                ("activate_power", {"name": "weather"}),
                ("call_tool", {"power": "weather", "tool": "echo", "arguments": {"text": "hi"}}),
                ("weather__echo", {"text": "hi"}),
                ("deactivate_power", {"name": "weather"}),
            ):
                said = _refused(await client.call_tool(name, arguments))
                assert "lacks the 'call' scope (it has: read)" in said, said
                assert "keys create NAME --role editor" in said and "Next step" in said
        async with http_client(url, editor) as client:
            assert not {n for n in tool_names(await client.list_tools()) if "__" in n}  # nothing started


async def test_an_editor_key_starts_and_calls_tools_and_a_viewer_is_not_shown_them(
    setup: GatewaySetup,
) -> None:
    keys = Keys(setup)
    viewer, editor = keys.make("viewer", "viewer"), keys.make("editor", "editor")
    with gateway(setup) as url:
        async with http_client(url, editor) as client:
            resolved = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
            assert "ready" not in resolved, resolved
            assert "weather__echo" in tool_names(await client.list_tools())
            echoed = await client.call_tool("weather__echo", {"text": "with call"})
            assert not echoed.is_error and text(echoed) == "with call"
            proxied = await client.call_tool(
                "call_tool", {"power": "weather", "tool": "echo", "arguments": {"text": "proxied"}}
            )
            assert text(proxied) == "proxied"
        async with http_client(url, viewer) as client:
            assert "weather__echo" not in tool_names(await client.list_tools())


async def test_two_keys_stateless_requests_never_share_what_a_session_holds(setup: GatewaySetup) -> None:
    """A 2026-protocol client sends no session id: its key's requests share one view of the gateway (the
    words of its last request, the tools in its list, the values it passed), and that view is the key's
    own. Found in review: every key's stateless requests shared one, so key B's activate_power was
    filled with key A's words and B was listed A's tools."""
    keys = Keys(setup)
    a, b = keys.make("a", "editor"), keys.make("b", "editor")
    with gateway(setup) as url:
        async with http_client(url, a) as client:
            words = "echo 'the merger closes on Friday'"
            resolved = answer(await client.call_tool("resolve_intent", {"query": QUERY, "request": words}))
            assert resolved["status"] == "activated", resolved
            assert "weather__echo" in tool_names(await client.list_tools())
        async with http_client(url, b) as client:
            listed = tool_names(await client.list_tools())
            started = answer(await client.call_tool("activate_power", {"name": "weather"}))
    assert not any(n.startswith("weather__") for n in listed), listed
    assert "merger" not in str(started), started


async def test_a_session_answers_only_the_key_that_opened_it(setup: GatewaySetup) -> None:
    keys = Keys(setup)
    owner, other = keys.make("owner", "editor"), keys.make("other", "editor")
    watch = Watch()
    with gateway(setup) as url:
        async with http_client(url, owner, mode="legacy", on_response=watch) as client:
            assert "resolve_intent" in tool_names(await client.list_tools())
            assert watch.session_id
            refused = await post(url, other, watch.session_id)
            assert refused.status_code == 403, refused.text
            error = refused.json()["error"]
            assert error["code"] == "forbidden" and "opened with another API key" in error["message"]
            assert "initialize again" in error["hint"]
            assert "resolve_intent" in tool_names(await client.list_tools())  # still the owner's
            unknown = await post(url, other, "0" * 32)
            assert unknown.status_code == 404 and "not open" in unknown.json()["error"]["message"]


async def test_a_revoked_keys_session_is_closed_at_its_next_request(setup: GatewaySetup) -> None:
    keys = Keys(setup)
    doomed, other = keys.make("doomed", "editor"), keys.make("other", "editor")
    watch = Watch()
    with gateway(setup, gateway_key_check_s=3600) as url:  # no periodic check during the test
        async with http_client(url, doomed, mode="legacy", on_response=watch) as client:
            assert "resolve_intent" in tool_names(await client.list_tools())
            keys.revoke(doomed)
            with pytest.raises(MCPError):
                await client.list_tools()
            gone = await post(url, other, watch.session_id)
    assert gone.status_code == 404, gone.text  # closed, not merely refused to another key (403)


async def test_a_revoked_keys_session_is_closed_by_the_periodic_check_and_its_stream_ends(
    setup: GatewaySetup,
) -> None:
    keys = Keys(setup)
    doomed, other = keys.make("doomed", "editor"), keys.make("other", "editor")
    watch = Watch()
    with gateway(setup, gateway_key_check_s=0.2) as url:
        async with http_client(url, doomed, mode="legacy", on_response=watch) as client:
            assert "resolve_intent" in tool_names(await client.list_tools())
            await watch.next_get()  # the client's GET stream is open
            assert (await post(url, other, watch.session_id)).status_code == 403
            keys.revoke(doomed)
            await watch.next_get()  # the server ended the stream without a request: the client retries
            gone = await post(url, other, watch.session_id)
            assert gone.status_code == 404, gone.text
            with pytest.raises(MCPError):
                await client.list_tools()
