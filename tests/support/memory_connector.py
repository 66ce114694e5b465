"""A ``Connector`` (services/upstream/connector.py) whose servers run in the test's own process, over
the mcp SDK's in-memory streams: no process starts, so gateway, discovery and rug-pull tests run in the
fast loop.

    connector = InMemoryConnector({"weather": build_weather_station, "loop": lambda: paged(["7"])})
    Container(settings, embedder=HashingEmbedder(dim=384), connector=connector)

The servers are the ones of tests/servers (their ``build_server``), built anew for each session as a
process would be started anew. A session goes through ``open_session`` with an in-memory transport, so
the checks before a start (an imported entry refused, a ``${VAR}`` the environment lacks), the phases
and the error sentences are the real ones. A name the connector does not serve is opened by
``otherwise`` (default: the real connector), so a configured command that does not exist still fails
as it does in production. ``crash(name)`` ends every session of ``name`` at once, the server's side of
the streams closed as when its process exits; ``opened`` counts the sessions each name had.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import anyio
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams

from services.upstream.connector import Connector, StdioHttpConnector
from services.upstream.session import Phase, UpstreamSession, open_session
from tool_selector.config.servers import ServerConfig

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams

ServerBuilder = Callable[[], "Server[Any]"]
SHUTDOWN_GRACE_S = 2.0  # a server that does not end on its streams' close is cancelled after this


@dataclass
class _Live:
    """One running in-memory server: what ends it."""

    scope: anyio.CancelScope
    close: Callable[[], Any]


class InMemoryConnector:
    """Serves the named servers in memory; see the module docstring."""

    def __init__(self, servers: Mapping[str, ServerBuilder], *, otherwise: Connector | None = None) -> None:
        self.servers = dict(servers)
        self.otherwise: Connector = otherwise or StdioHttpConnector()
        self.opened: Counter[str] = Counter()
        self._live: dict[str, list[_Live]] = {}

    def open(
        self,
        name: str,
        config: ServerConfig,
        *,
        environ: Mapping[str, str],
        errlog: TextIO | None = None,
        on_phase: Callable[[Phase], None] | None = None,
        read_timeout_s: float | None = None,
    ) -> AbstractAsyncContextManager[UpstreamSession]:
        if name not in self.servers:
            return self.otherwise.open(
                name, config, environ=environ, errlog=errlog, on_phase=on_phase, read_timeout_s=read_timeout_s
            )
        return open_session(
            name,
            config,
            environ=environ,
            errlog=errlog,
            on_phase=on_phase,
            read_timeout_s=read_timeout_s,
            transport=self._serve,
        )

    async def crash(self, name: str) -> int:
        """End every running session of ``name`` as a process exit would (the server stops, the client
        reads the end of its stream); returns how many there were."""
        live = self._live.pop(name, [])
        for one in live:
            one.scope.cancel()
            await one.close()
        return len(live)

    @asynccontextmanager
    async def _serve(self, name: str, config: ServerConfig) -> AsyncIterator[TransportStreams]:
        server = self.servers[name]()
        self.opened[name] += 1
        async with create_client_server_memory_streams() as (client, (server_read, server_write)):
            done = anyio.Event()
            scope = anyio.CancelScope()

            async def run() -> None:
                try:
                    with scope:
                        await server.run(server_read, server_write, server.create_initialization_options())
                finally:
                    done.set()

            live = _Live(scope, server_write.aclose)
            self._live.setdefault(name, []).append(live)
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                try:
                    yield client
                finally:
                    if live in self._live.get(name, []):
                        self._live[name].remove(live)
                    with anyio.CancelScope(shield=True):
                        await client[1].aclose()  # the server reads the end of its input, as stdin's EOF
                        with anyio.move_on_after(SHUTDOWN_GRACE_S):
                            await done.wait()
                    group.cancel_scope.cancel()
