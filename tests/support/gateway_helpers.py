"""Helpers for the gateway tests: the server object ``tool-selector serve`` builds with the mcp Client
connected to it in this process; a synced catalog of real servers; the weather station served over
streamable HTTP from a thread; processes found by a marker in their environment, waiting for a
process to exit (on its pidfd, not by sleeping); and a real ``serve`` process, over stdio or over
HTTP with API keys made by the real ``keys`` command."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import StdioServerParameters, types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from routes.gateway import build_server, http_app
from services.root.container import Container
from services.upstream.connector import Connector
from services.write.sync import run_sync
from tests.servers.flaky_server import build_server as build_weather_station
from tests.support.paths import ROOT, SERVERS
from tests.support.uvicorn_thread import serving
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import Embedder

TIME_SERVER = ROOT / ".venv" / "bin" / "mcp-server-time"
CLI = Path(sys.executable).parent / "tool-selector"
MARK = "TS_GATEWAY_TEST_MARK"


@dataclass
class GatewaySetup:
    """A data folder with the time and weather-station servers synced and indexed; ``stuck`` (a
    server that never answers) is configured after the sync, as an operator might."""

    data_dir: Path
    cache_dir: Path
    servers_file: Path
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)

    def env(self, **overrides: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_")}
        base |= {
            "TOOL_SELECTOR_DATA_DIR": str(self.data_dir),
            "TOOL_SELECTOR_CACHE_DIR": str(self.cache_dir),
            "TOOL_SELECTOR_SERVERS_FILE": str(self.servers_file),
            "TOOL_SELECTOR_GATEWAY__CALL_TIMEOUT_S": "3",
            # the test servers' terse tools are read by the rules alone, as in every other test (conftest)
            "TOOL_SELECTOR_TRUST__INTENT": "false",
            MARK: self.mark,
        }
        return base | {f"TOOL_SELECTOR_{grouped_name(k).upper()}": v for k, v in overrides.items()}

    def settings(self, **overrides: Any) -> Settings:
        """Settings of this set-up; ``gateway_max_active=1`` sets ``gateway.max_active`` (a group's field
        named with its group's prefix, as tests write them)."""
        nested: dict[str, Any] = {"gateway": {"call_timeout_s": 3}, "trust": {"intent": False}}
        for key, value in overrides.items():
            group, _, field = grouped_name(key).partition("__")
            if field:
                nested.setdefault(group, {})[field] = value
            else:
                nested[key] = value
        return Settings(
            data_dir=self.data_dir, cache_dir=self.cache_dir, servers_file=self.servers_file, **nested
        )


SETTING_GROUPS = (
    "embedding",
    "search",
    "confidence",
    "sync",
    "gateway",
    "weaviate",
    "claude",
    "api",
    "trust",
    "memory",
)


def grouped_name(key: str) -> str:
    """``gateway_max_active`` -> ``gateway__max_active`` (a group's field), other names as they are."""
    for group in SETTING_GROUPS:
        if key.startswith(group + "_") and not key.startswith(group + "__"):
            return f"{group}__{key[len(group) + 1 :]}"
    return key


def server_configs(mark: str, pid_dir: Path) -> dict[str, ServerConfig]:
    env = {MARK: mark}
    return {
        "time": ServerConfig(command=str(TIME_SERVER), args=["--local-timezone", "UTC"], env=env),
        "weather": ServerConfig(
            command=sys.executable,
            args=[str(SERVERS / "flaky_server.py")],
            env=env,
            steering="Readings are in Celsius.",
        ),
    }


def make_setup(base: Path, cache_dir: Path, embedder: Embedder) -> GatewaySetup:
    if not TIME_SERVER.exists():
        import pytest

        pytest.skip("mcp-server-time is not installed (run scripts/setup.sh)")
    setup = GatewaySetup(base / "data", cache_dir, base / "servers.json")
    configs = server_configs(setup.mark, base)
    save_servers(setup.servers_file, ServersFile(mcpServers=configs))
    with Container(setup.settings(sync_enricher="offline"), embedder=embedder) as container:
        summary = run_sync(container)
        assert summary.ok, summary.failed
    configs["stuck"] = ServerConfig(
        command=sys.executable,
        args=[str(SERVERS / "hanging_server.py"), str(base / "stuck.pid")],
        env={MARK: setup.mark},
        timeout_s=1.5,
    )
    save_servers(setup.servers_file, ServersFile(mcpServers=configs))
    return setup


def marked_pids(mark: str) -> set[int]:
    """Every live process whose environment carries ``MARK=mark`` (the gateway and its upstreams)."""
    found = set()
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.add(int(entry.name))
    return found


def wait_exited(pids: set[int], timeout: float) -> set[int]:
    """Wait on each process's pidfd until it exits; returns the pids still alive after ``timeout``."""
    alive = set()
    deadline = anyio_time() + timeout
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - anyio_time()))
            if not ready and _is_running(pid):
                alive.add(pid)
        finally:
            os.close(fd)
    return alive


def _is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def anyio_time() -> float:
    import time

    return time.monotonic()


def answer(result: types.CallToolResult) -> dict[str, Any]:
    assert result.content and isinstance(result.content[0], types.TextContent)
    data = json.loads(result.content[0].text)
    assert isinstance(data, dict)
    return data


def text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


@dataclass
class Notifications:
    """Tool-list-changed notifications a legacy-era client received, as an event to wait on."""

    count: int = 0
    event: anyio.Event = field(default_factory=anyio.Event)

    async def handle(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.event.set()

    async def wait(self, timeout: float = 15.0) -> None:
        with anyio.fail_after(timeout):
            await self.event.wait()
        self.event = anyio.Event()


@asynccontextmanager
async def inprocess_gateway(
    settings: Settings,
    embedder: Embedder,
    notifications: Notifications | None = None,
    *,
    mode: str = "legacy",
    connector: Connector | None = None,
) -> AsyncIterator[Client]:
    """The server object ``tool-selector serve`` runs (``routes.gateway.build_server``) with the mcp
    Client connected to it in this process: in-memory streams for a handshake-era client (``legacy``),
    the SDK's direct in-process path for a 2026 one (``auto``). The container shares ``embedder`` and
    opens the powers through ``connector`` (default: real processes and urls)."""

    def make_container() -> Container:
        return Container(settings, embedder=embedder, connector=connector)

    server = build_server(settings, transport="stdio", make_container=make_container)
    handler = notifications.handle if notifications is not None else None
    async with Client(server, mode=mode, message_handler=handler, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        yield client


@contextmanager
def weather_station_over_http() -> Iterator[str]:
    """tests/servers/flaky_server.py's weather station (without ``crash``) on streamable HTTP, served
    from a thread of this process: a real MCP server that costs no process start. Yields its url."""
    server = build_weather_station(in_process=True)
    with serving(server.streamable_http_app(streamable_http_path="/mcp"), "weather-station") as url:
        yield f"{url}/mcp"


@asynccontextmanager
async def stdio_gateway(
    setup: GatewaySetup, notifications: Notifications | None = None, *, mode: str = "legacy", **env: str
) -> AsyncIterator[Client]:
    """A real ``tool-selector serve`` process with the mcp Client talking to it over stdio."""
    params = StdioServerParameters(command=str(CLI), args=["serve"], env=setup.env(**env))
    handler = notifications.handle if notifications is not None else None
    async with Client(params, mode=mode, message_handler=handler, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        yield client


def tool_names(result: types.ListToolsResult) -> set[str]:
    return {t.name for t in result.tools}


# -- the gateway over streamable HTTP, with API keys ---------------------------------------------------


def create_key(setup: GatewaySetup, name: str, *, role: str, scopes: tuple[str, ...] = ()) -> dict[str, Any]:
    """``tool-selector keys create``: its JSON, the key included (shown this once)."""
    args = [str(CLI), "keys", "create", name, "--role", role, *(f"--scope={s}" for s in scopes)]
    out = subprocess.run(args, env=setup.env(), capture_output=True, text=True, check=True)
    created = json.loads(out.stdout)
    assert isinstance(created, dict)
    return created


def revoke_key(setup: GatewaySetup, key_id: str) -> None:
    subprocess.run(
        [str(CLI), "keys", "revoke", key_id], env=setup.env(), capture_output=True, text=True, check=True
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = anyio_time() + timeout
    while anyio_time() < deadline:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            select.select([], [], [], 0.05)  # the server is still loading; look again shortly
    raise AssertionError(f"the gateway did not listen on {port} within {timeout} s")


@dataclass
class HttpGateway:
    url: str
    process: subprocess.Popen[bytes]


@asynccontextmanager
async def http_gateway(setup: GatewaySetup, **env: str) -> AsyncIterator[HttpGateway]:
    """A real ``tool-selector serve --http PORT`` process, listening; stopped with SIGTERM on exit.
    ``env``: settings as ``TOOL_SELECTOR_<NAME>`` variables (``gateway__key_check_s="0.2"``)."""
    port = free_port()
    process = subprocess.Popen(
        [str(CLI), "serve", "--http", str(port)], env=setup.env(**env), stderr=subprocess.PIPE
    )
    try:
        await anyio.to_thread.run_sync(wait_listening, port, process)
        yield HttpGateway(f"http://127.0.0.1:{port}/mcp", process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                await anyio.to_thread.run_sync(process.wait, 20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@asynccontextmanager
async def http_client(
    url: str,
    key: str,
    *,
    mode: str = "auto",
    on_response: Callable[[httpx2.Response], Awaitable[None]] | None = None,
) -> AsyncIterator[Client]:
    """The mcp Client over streamable HTTP, sending ``Authorization: Bearer <key>`` on every request;
    ``mode="legacy"`` for a handshake-era client (it opens a session); ``on_response`` sees each HTTP
    response as its headers arrive (the session id, the GET stream)."""
    timeout = httpx2.Timeout(30.0, read=300.0)
    hooks = {"response": [on_response]} if on_response is not None else {}
    async with (
        httpx2.AsyncClient(headers=bearer(key), timeout=timeout, event_hooks=hooks) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "0"},
    },
}


async def post_initialize(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    """One raw MCP ``initialize`` POST, to see the HTTP status and body the gateway answers with."""
    async with httpx2.AsyncClient(timeout=30.0) as http:
        return await http.post(
            url,
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", **(headers or {})},
        )


@contextmanager
def inprocess_http_gateway(settings: Settings, embedder: Embedder) -> Iterator[str]:
    """What ``serve --http`` serves (``routes.gateway.http_app``: the MCP app behind the key check) on
    a real uvicorn server in a thread of this process, sharing ``embedder``; yields the /mcp url."""
    with Container(settings, embedder=embedder) as keys:
        app = http_app(settings, keys, make_container=lambda: Container(settings, embedder=embedder))
        with serving(app, "gateway-http") as url:
            yield f"{url}/mcp"


def named(lines: list[str]) -> list[str]:
    """The tool names of an answer's tool lines (``name(parameters): what it does``), in order."""
    return [line.split("(", 1)[0] for line in lines]
