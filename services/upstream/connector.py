"""The seam between the use cases and the upstream MCP servers: a ``Connector`` opens a client session
with one configured server.

    Connector.open(name, config, environ=..., errlog=..., on_phase=..., read_timeout_s=...)
        -> async context manager yielding an UpstreamSession (services/upstream/session.py)

``StdioHttpConnector`` is the real one and the default (the composition root's ``connector``): it
spawns a stdio server through the lifeline launcher or connects to a streamable HTTP url. The gateway's
power manager and discovery take a connector and never start a server themselves, so a test can pass
another one (tests/support/memory_connector.py: servers of the test run served in memory).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TextIO

from services.upstream.session import Phase, UpstreamSession, open_session
from tool_selector.config.servers import ServerConfig


class Connector(Protocol):
    """Opens an initialized client session with the configured server ``name``."""

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
        """The session, ready (see ``open_session`` for what is raised, and when)."""
        ...


class StdioHttpConnector:
    """The real upstreams: ``open_session`` over stdio (the lifeline launcher in front of the
    configured command) or streamable HTTP."""

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
        return open_session(
            name, config, environ=environ, errlog=errlog, on_phase=on_phase, read_timeout_s=read_timeout_s
        )
