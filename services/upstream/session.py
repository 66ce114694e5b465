"""One client session with one configured MCP server ("upstream"), over stdio or streamable HTTP.

``open_session`` (what ``StdioHttpConnector``, the default ``Connector`` of services/upstream/connector.py,
does) starts the server (stdio: spawns ``config.command``, the operator's configuration and
nothing else; http: connects to ``config.url``), runs the MCP ``initialize`` handshake and yields an
``UpstreamSession``. Discovery uses it to list tools; the gateway reuses it to proxy calls.

Failures before the session is ready are raised as ``UpstreamError`` with a sentence that names the
phase, the last lines of the server's stderr (stdio) and what to do. Failures after that (in the
caller's body) come out as the plain exception, not wrapped in an ``ExceptionGroup``; turn them
into a sentence with ``upstream_error``.

Deadlines belong to the caller (``anyio.fail_after`` around the ``async with``). On timeout or
cancellation the MCP SDK's stdio shutdown runs shielded: it closes the server's stdin, gives it
2 s to exit, then sends SIGTERM to its process group and SIGKILL 2 s later, so no child outlives
the session. A server that ignores stdin EOF therefore costs up to that much beyond the deadline.
On Linux the server is started through ``lifeline`` (a launcher in the same process group), so that
it and its children also die when this process is killed without a chance to shut them down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import stat
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TextIO

import httpx2
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client, types
from mcp.client.session import LoggingFnT
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment
from mcp.client.streamable_http import streamable_http_client

from services.upstream import lifeline
from tool_selector import installed_version
from tool_selector.config.secrets import mask_text
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import ForbiddenError, UpstreamError

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams

logger = logging.getLogger(__name__)

Phase = Literal["start", "initialize", "list_tools", "call_tool", "done"]

STDERR_TAIL_CHARS = 800
MAX_TOOL_PAGES = 100
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults: SSE streams stay open long
_HTTP_HINT = "Check that the url is a streamable HTTP MCP endpoint and the server is healthy"
_HTTP_HINTS = {
    401: "Check the credentials in this server's headers",
    403: "Check the credentials in this server's headers",
    404: "Check the url's path; it must be the MCP endpoint itself (often /mcp)",
}
Transport = Callable[[str, ServerConfig], "AbstractAsyncContextManager[TransportStreams]"]
"""Opens the message streams to the server ``name`` of a resolved configuration (``open_session``'s
``transport``: by default the stdio or streamable HTTP one; a test's in-memory server otherwise)."""
_VERBS: dict[str, str] = {
    "start": "starting",
    "initialize": "initializing",
    "list_tools": "listing tools",
    "call_tool": "calling a tool",
    "done": "shutting down",
}


@dataclass(frozen=True)
class UpstreamSession:
    """An initialized session: use ``session`` for requests; ``init_result`` is the server's answer
    to ``initialize`` (server info, capabilities, instructions)."""

    name: str
    transport: Literal["stdio", "http"]
    session: ClientSession
    init_result: types.InitializeResult


@dataclass
class _Wire:
    """What the transport saw, for error messages: the stdio server's stderr, the last HTTP error."""

    errlog: TextIO
    http_status: int | None = None

    async def record(self, response: httpx2.Response) -> None:
        if response.status_code >= 400:
            self.http_status = response.status_code


@dataclass
class ToolListing:
    """Every tool a server listed, in its order, and notes on anything odd about the listing."""

    tools: list[types.Tool] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)  # names listed again after their first tool


def display_target(config: ServerConfig) -> str:
    """The command line or url as configured, its secret values hidden (``ServerConfig.masked``:
    ``${VAR}`` references as written, literal values as ``***``)."""
    shown = config.masked()
    if shown.command is not None:
        return shlex.join([shown.command, *shown.args])
    return shown.url or ""


def stderr_tail(errlog: TextIO | None, limit: int = STDERR_TAIL_CHARS) -> str:
    """The last ``limit`` characters the server wrote to ``errlog``, when it is a regular file."""
    if errlog is None:
        return ""
    try:
        fd = errlog.fileno()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ""
        data = os.pread(fd, limit * 4, max(0, info.st_size - limit * 4))
    except (OSError, ValueError):
        return ""
    return data.decode("utf-8", errors="replace").strip()[-limit:]


def upstream_error(
    name: str,
    config: ServerConfig,
    phase: Phase,
    exc: BaseException | None = None,
    *,
    stderr: str = "",
    timeout_s: float | None = None,
    http_status: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> UpstreamError:
    """An ``UpstreamError`` whose text says what happened in which phase and what to do next. No
    secret value of the configuration reaches its text: the target is shown masked, and the
    exception's text and the server's ``stderr`` are scrubbed of the configured values (with their
    ``${VAR}`` references resolved from ``environ``, the environment the server was started with) and
    of every url's credentials and query values."""
    target = display_target(config)
    hidden = config.secret_values(environ)
    stderr = mask_text(stderr, hidden)
    verb = _VERBS[phase]
    if timeout_s is not None:
        what = f"timed out after {timeout_s:.1f} s while {verb}"
        hint = f"Raise timeout_s for this server, or check that it starts by hand: {target}"
    elif isinstance(exc, OSError) and phase == "start" and config.command is not None:
        what = f"could not be started ({exc.strerror or exc})"
        hint = f"Check that the command exists and is executable: {target}"
    elif isinstance(exc, httpx2.TransportError):
        what = f"could not be reached while {verb} ({type(exc).__name__}: {exc})"
        hint = f"Check that the server is running and the url is right: {target}"
    elif isinstance(exc, MCPError) and http_status is not None:
        what = f"answered HTTP {http_status} while {verb} ({exc.message})"
        hint = f"{_HTTP_HINTS.get(http_status, _HTTP_HINT)}: {target}"
    elif isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
        what = f"closed the connection while {verb}" + (" (it probably exited)" if config.command else "")
        hint = f"Fix what its stderr says, or run it by hand to see why: {target}"
    elif isinstance(exc, MCPError):
        what = f"answered with an error while {verb} ({exc.code}: {exc.message})"
        hint = f"Check that this is an MCP server and its configuration is right: {target}"
    else:
        what = f"failed while {verb} ({type(exc).__name__}: {exc})"
        hint = f"Check the server's configuration, or run it by hand: {target}"
    message = f"The MCP server {name!r} {mask_text(what, hidden)}."
    if stderr:
        message += f' Its stderr ends with: "{" | ".join(stderr.splitlines())}".'
    return UpstreamError(message, hint=hint + ".", server=name, phase=phase, stderr=stderr)


def _leaf(exc: BaseException) -> BaseException:
    """The one exception inside nested single-member task-group ``ExceptionGroup``s."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _client_info() -> types.Implementation:
    return types.Implementation(name="tool-selector", version=installed_version("0"))


def _child_env(config: ServerConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The safe basics (PATH, HOME, ...) from ``environ``, then the server's own ``env``."""
    base = {k: environ[k] for k in DEFAULT_INHERITED_ENV_VARS if k in environ}
    return base | config.env


@asynccontextmanager
async def _transport(
    config: ServerConfig, environ: Mapping[str, str], wire: _Wire
) -> AsyncIterator[TransportStreams]:
    if config.command is not None:
        env = _child_env(config, environ)
        spawned_env = get_default_environment() | env  # what the SDK gives the process
        command, args = lifeline.guarded(config.command, config.args, env=spawned_env, cwd=config.cwd)
        params = StdioServerParameters(command=command, args=args, env=env, cwd=config.cwd)
        async with stdio_client(params, errlog=wire.errlog) as streams:
            yield streams
        return
    assert config.url is not None
    async with (
        httpx2.AsyncClient(
            headers=config.headers, timeout=_HTTP_TIMEOUT, event_hooks={"response": [wire.record]}
        ) as client,
        streamable_http_client(config.url, http_client=client) as streams,
    ):
        yield streams


def _logging_callback(name: str) -> LoggingFnT:
    async def log(params: types.LoggingMessageNotificationParams) -> None:
        logger.debug("[%s] %s: %s", name, params.level, params.data)

    return log


@asynccontextmanager
async def open_session(
    name: str,
    config: ServerConfig,
    *,
    environ: Mapping[str, str],
    errlog: TextIO | None = None,
    on_phase: Callable[[Phase], None] | None = None,
    read_timeout_s: float | None = None,
    transport: Transport | None = None,
) -> AsyncIterator[UpstreamSession]:
    """Start (or connect to) the server, initialize, and yield the ready session.

    ``errlog`` receives a stdio server's stderr; by default a temporary file that lives as long as
    the session (pass your own for a long-lived session with a chatty server). ``on_phase`` is told
    "start" and then "initialize", so a caller's timeout can say where the server got stuck.
    Raises ``UpstreamError`` if the server cannot be started or initialized, and
    ``InvalidInputError`` if the configuration names a ``${VAR}`` that ``environ`` lacks. ``transport``
    replaces the stdio / HTTP one (the checks, phases and error sentences stay the same).
    """
    if config.origin != "operator":  # every start passes here: a last stop
        raise ForbiddenError(
            f"Refusing to start {name!r} ({config.launch_line()[:300]!r}): the entry arrived in a catalog "
            "import and the operator has not adopted it.",
            hint=f"The operator adopts it on the machine with `tool-selector servers enable {name}`.",
        )
    resolved = config.resolved(environ)
    phase: Phase = "start"

    def enter(new: Phase) -> None:
        nonlocal phase
        phase = new
        if on_phase is not None:
            on_phase(new)

    with contextlib.ExitStack() as files:
        if errlog is None:
            errlog = files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        wire = _Wire(errlog)
        ready = False
        try:
            async with AsyncExitStack() as stack:
                enter("start")
                wired = (
                    _transport(resolved, environ, wire) if transport is None else transport(name, resolved)
                )
                read, write = await stack.enter_async_context(wired)
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        read_timeout_seconds=read_timeout_s,
                        client_info=_client_info(),
                        logging_callback=_logging_callback(name),
                    )
                )
                enter("initialize")
                init = await session.initialize()
                ready = True
                yield UpstreamSession(name, resolved.transport, session, init)
        except Exception as exc:
            leaf = _leaf(exc)
            if ready:
                raise leaf from None  # the caller's own failure, without the task groups' wrapping
            if isinstance(leaf, httpx2.ConnectError):
                phase = "start"  # no connection was ever made
            tail, status = stderr_tail(errlog), wire.http_status
            raise upstream_error(
                name, config, phase, leaf, stderr=tail, http_status=status, environ=environ
            ) from leaf


async def list_all_tools(session: ClientSession, *, max_pages: int = MAX_TOOL_PAGES) -> ToolListing:
    """Every tool, following ``nextCursor`` page by page. Stops (with a note) on a cursor seen
    before or after ``max_pages`` pages; keeps the first of two tools with the same name."""
    listing = ToolListing()
    seen_names: set[str] = set()
    seen_cursors: set[str] = set()
    cursor: str | None = None
    for _page in range(max_pages):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        result = await session.list_tools(params=params)
        for tool in result.tools:
            if tool.name in seen_names:
                listing.notes.append(f"the tool name {tool.name!r} was listed twice; the first one is kept")
                listing.twice.append(tool.name)
                continue
            seen_names.add(tool.name)
            listing.tools.append(tool)
        cursor = result.next_cursor
        if cursor is None:
            return listing
        if cursor in seen_cursors:
            listing.notes.append(f"the server repeated the page cursor {cursor!r}; listing stopped there")
            return listing
        seen_cursors.add(cursor)
    listing.notes.append(f"the tool list has more than {max_pages} pages; only the first ones were read")
    return listing
