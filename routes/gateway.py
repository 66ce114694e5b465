"""The MCP gateway: ``tool-selector serve`` over stdio (default) or streamable HTTP, on the mcp SDK.

Built on the SDK's low-level ``Server`` because the gateway's tool list is dynamic: its five own
tools plus, for every active power, that power's tools under ``power__tool`` names with the
schemas the power gave. When the list changes (activation, stop, idle stop, crash) the gateway
sends ``notifications/tools/list_changed`` to handshake-era clients (the tools-changed capability is
advertised) and publishes it to ``subscriptions/listen`` streams of 2026-07-28 clients. Clients
that ignore both still reach every tool through ``call_tool(power, tool, arguments)``.

Handlers parse, make one service call and render; errors become ``is_error`` tool results whose
text says what to do next (the one table in ``routes/errors.py`` plus the tool's error hints).
Rendering is where text leaves for the agent: answers, error texts and the proxied tool list are
stripped of invisible characters there (``tool_selector/trust/shown.py``); proxied tool results pass as
the upstream sent them, cut only to the gateway's size caps.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from routes.errors import mapping_for, mcp_text
from services.gateway.access import may_call
from services.gateway.hints import GATEWAY_HINTS
from services.gateway.starting import ServiceStart
from services.gateway.tools import INSTRUCTIONS, gateway_tools, proxied_listing
from tool_selector import installed_version
from tool_selector.core.errors import ToolSelectorError, UpstreamError
from tool_selector.route import messages
from tool_selector.route.failure import failure_kind
from tool_selector.trust.text import strip_invisible

if TYPE_CHECKING:  # imported once the client's initialize is answered (services/gateway/starting.py)
    from routes.gateway_auth import RequireKey
    from services.gateway.service import Caller, GatewayService
    from services.root.container import Container
    from tool_selector.config.settings import Settings

logger = logging.getLogger(__name__)


class _Notifier:
    """Tells every connected client that the tool list changed, in its protocol era's way."""

    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self.bus = bus
        self.sessions: dict[str, ServerSession] = {}
        self.sent = 0

    def remember(self, key: str, session: ServerSession) -> None:
        self.sessions[key] = session

    async def tools_changed(self, session: str | None = None) -> None:
        """A power started or stopped (``session`` None): every client; one session's own list changed:
        that session (a stateless client learns it through the subscription bus)."""
        await self.bus.publish(ToolsListChanged())
        keys = list(self.sessions) if session is None else [k for k in self.sessions if k == session]
        for key in keys:
            try:
                await self.sessions[key].send_tool_list_changed()
                self.sent += 1
            except Exception:  # the connection has gone; forget it
                logger.debug("could not notify %s; dropping it", key, exc_info=True)
                self.sessions.pop(key, None)


class GatewayServer(Server[ServiceStart]):
    """The low-level server with the tools-changed capability advertised on every transport."""

    refused: ToolSelectorError | None = None  # what kept the service from starting (``ServiceStart``)

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


def _caller(ctx: ServerRequestContext[ServiceStart], transport: str, process_key: str) -> Caller:
    """Who calls: over stdio the local user (one session per process); over HTTP the MCP session (bound
    to its key by routes/gateway_auth.py) and the key, whose id names its memory of confirmed choices. A
    stateless HTTP request has no session: its key's requests share one (``http-stateless-<key id>``),
    which is the key's own, never another key's."""
    from services.gateway.memory.recording import LOCAL
    from services.gateway.service import Caller

    params = ctx.session.client_params
    client = params.client_info.name if params is not None else ""
    if transport == "stdio":
        return Caller(process_key, "stdio", client, principal=LOCAL)
    from routes.gateway_auth import principal_of

    request = ctx.request
    headers = getattr(request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    principal = principal_of(getattr(request, "scope", {}))
    key_id = principal.key_id if principal is not None else None
    return Caller(
        f"http-{session_id}" if session_id else f"http-stateless-{key_id or 'no-key'}",
        "http",
        client,
        _scopes(ctx, transport),
        principal=f"key:{key_id}" if key_id is not None else None,
    )


def _scopes(ctx: ServerRequestContext[ServiceStart], transport: str) -> frozenset[str] | None:
    """The scopes of the caller's API key over HTTP (none without one); None over stdio (no keys)."""
    if transport == "stdio":
        return None
    from routes.gateway_auth import principal_of

    principal = principal_of(getattr(ctx.request, "scope", {}))
    return frozenset(principal.scopes) if principal is not None else frozenset()


def _json_result(answer: dict[str, Any]) -> types.CallToolResult:
    from services.gateway.service import render_answer
    from tool_selector.trust.shown import for_agent

    answer = for_agent(answer)  # every text an answer carries, stripped of invisible characters
    text = render_answer(answer)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=answer
    )


def _error_result(tool: str, error: ToolSelectorError) -> types.CallToolResult:
    code = mapping_for(error).code
    hint = GATEWAY_HINTS[tool].error_hints.get(code, "") if tool in GATEWAY_HINTS else ""
    text = strip_invisible(mcp_text(error) + (f" ({tool}: {hint})" if hint else ""))  # it may quote upstreams
    stuck = ("index_missing", "index_damaged", "calibration")  # nothing the agent does helps until fixed
    body = {"error": code, "message": text, "can_proceed": code not in stuck}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=body, is_error=True
    )


def _upstream_tool_error(power: str, tool: str, result: types.CallToolResult) -> types.CallToolResult:
    """The upstream's own error result, with one sentence added on what to do next, for what its text
    says failed (tool_selector/route/failure.py: the network, the arguments, or unknown)."""
    said = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
    advice = types.TextContent(type="text", text=messages.tool_failed(power, tool, failure_kind(said)))
    return result.model_copy(update={"content": [*result.content, advice]})


async def _dispatch(service: GatewayService, caller: Caller, name: str, args: dict[str, Any]) -> Any:
    if name == "resolve_intent":
        return await service.resolve_intent(caller, args.get("query"), args.get("request"))
    if name == "activate_power":
        return await service.activate_power(caller, args.get("name"))  # type: ignore[arg-type]
    if name == "deactivate_power":
        return await service.deactivate_power(caller, args.get("name"))  # type: ignore[arg-type]
    if name == "catalog_query":
        return await service.catalog_query(caller, args.get("query_type"), args.get("filters"))
    if name == "call_tool":
        power, tool = args.get("power"), args.get("tool")
        result = await service.call_tool(caller, power, tool, args.get("arguments"))  # type: ignore[arg-type]
        power, tool = str(power).strip(), str(tool).strip()  # as the service read them
    else:
        result = await service.call_namespaced(caller, name, args)
        if not result.is_error:
            return result
        found = service.proxied_tools().get(name)  # its power and tool; the name may split two ways at "__"
        power, _, tool = name.partition("__")
        power, tool = (found[0].name, found[1].name) if found else (power, tool)
    if not result.is_error:
        return result
    service.hints.on_error(caller.session_id, power)  # the upstream's own error: a failed call of power
    return _upstream_tool_error(power, tool, result)


def _failed_power(name: str, exc: ToolSelectorError) -> str | None:
    """The power whose proxied call failed in the world (could not start or be reached, crashed, timed
    out): an UpstreamError of call_tool or of a power's own tool names its server."""
    proxied = name == "call_tool" or name not in GATEWAY_HINTS
    server = exc.details.get("server") if isinstance(exc, UpstreamError) and proxied else None
    return server if isinstance(server, str) else None


def build_server(
    settings: Settings, *, transport: str, make_container: Callable[[], Container] | None = None
) -> GatewayServer:
    """The gateway's MCP server; its lifespan opens the catalog and owns the upstream servers.
    ``make_container`` lets a caller (tests, benchmarks) share an embedder already loaded."""
    bus = InMemorySubscriptionBus()
    notifier = _Notifier(bus)
    process_key = f"stdio-{os.getpid()}-{int(time.time())}"

    @asynccontextmanager
    async def lifespan(_: Server[ServiceStart]) -> AsyncIterator[ServiceStart]:
        starting = ServiceStart(settings, make_container)
        async with anyio.create_task_group() as group:
            group.start_soon(starting.run, notifier.tools_changed)
            try:
                yield starting
            finally:
                starting.stop.set()  # the service stops its upstream servers; a start under way ends first
        server.refused = server.refused or starting.error

    async def list_tools(
        ctx: ServerRequestContext[ServiceStart], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        service = ctx.lifespan_context.service  # none yet (starting): no power is active either
        proxied = []
        if service is not None:
            proxied = proxied_listing(service.proxied_tools(_caller(ctx, transport, process_key).session_id))
        if not may_call(_scopes(ctx, transport)):
            proxied = []  # a key without `call` could not call them: no need to show them
        return types.ListToolsResult(tools=gateway_tools() + proxied)

    async def call_tool(
        ctx: ServerRequestContext[ServiceStart], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            service = await ctx.lifespan_context.get()
        except ToolSelectorError as exc:  # the index cannot be served: every call says what to do
            return _error_result(params.name, exc)
        caller = _caller(ctx, transport, process_key)
        notifier.remember(caller.session_id, ctx.session)
        service.hints.on_call(
            caller.session_id, params.name, transport=caller.transport, client=caller.client
        )
        try:
            result = await _dispatch(service, caller, params.name, dict(params.arguments or {}))
        except ToolSelectorError as exc:
            service.hints.on_error(caller.session_id, _failed_power(params.name, exc))
            return _error_result(params.name, exc)
        finally:
            service.hints.flush(caller.session_id)  # one write per call
        return result if isinstance(result, types.CallToolResult) else _json_result(result)

    server = GatewayServer(
        "tool-selector",
        version=installed_version("0"),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    return server


async def _stop_on_signals(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async for signum in signals:
            logger.info("received signal %d; stopping the upstream servers and exiting", signum)
            scope.cancel()
            return


async def serve_stdio(settings: Settings) -> None:
    """Serve one client over stdin/stdout until it disconnects or a SIGTERM/SIGINT/SIGHUP arrives;
    either way every upstream server is stopped before this returns. An index that could not be served
    is raised here, once the client has gone (its calls were answered with it)."""
    server = build_server(settings, transport="stdio")
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signals, group.cancel_scope)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        group.cancel_scope.cancel()
    if server.refused is not None:
        raise server.refused


def http_app(
    settings: Settings,
    keys: Container,
    *,
    host: str = "127.0.0.1",
    make_container: Callable[[], Container] | None = None,
) -> RequireKey:
    """The gateway's streamable HTTP app (at /mcp) behind the key check of routes/gateway_auth.py, which
    reads the keys through ``keys`` (a container of its own: the gateway's is replaced on index reload)."""
    from routes.gateway_auth import RequireKey

    server = build_server(settings, transport="http", make_container=make_container)
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    return RequireKey(app, keys, needs="read", key_check_s=settings.gateway.key_check_s)


async def serve_http(settings: Settings, *, host: str, port: int) -> None:
    """Serve streamable HTTP at http://host:port/mcp (uvicorn handles SIGTERM/SIGINT gracefully).
    Every request needs ``Authorization: Bearer <key>`` of a key with the read scope; running upstream
    tools needs the call scope; a session works only with the key that opened it."""
    import uvicorn

    from services.root.container import Container

    with Container(settings) as keys:
        guarded = http_app(settings, keys, host=host)
        config = uvicorn.Config(guarded, host=host, port=port, log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve()
