"""Use case: ask each configured MCP server who it is and which tools it has.

``discover_one`` never raises for a server's failure (crash, hang, bad command, non-MCP output,
HTTP error, missing ``${VAR}``): it returns a ``DiscoveredServer`` with ``ok=False``, the phase it
reached and a sentence saying what happened and what to do. ``discover_servers`` runs many at once,
each under its own deadline, so one slow or broken server costs only its own time. Sessions are opened
by the ``Connector`` the caller passes (services/upstream/connector.py; the sync passes the container's).
"""

from __future__ import annotations

import functools
import logging
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp import types
from pydantic import BaseModel, Field, ValidationError

from services.upstream.connector import Connector
from services.upstream.session import Phase, UpstreamSession, list_all_tools, stderr_tail, upstream_error
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import ToolSelectorError, UpstreamError
from tool_selector.core.models import ServerSpec, ToolSpec
from tool_selector.core.names import MAX_NAME_CHARS, TakenToolNames, tool_copy_problem

logger = logging.getLogger(__name__)

DiscoveryPhase = Literal["start", "initialize", "list_tools", "done"]
DESCRIPTION_CHARS = 500
INSTRUCTIONS_CHARS = 2000  # of a server's ``instructions``: what an agent may read of them as steering


class LeftOutTool(BaseModel):
    """A tool a server listed that the catalog does not take, and why."""

    server: str
    tool: str = Field(description="its name as the server gave it (at most 300 characters shown)")
    reason: str = Field(description="what is wrong with it, and what the server's author should change")


class DiscoveredServer(BaseModel):
    """What discovery found out about one configured server."""

    name: str
    ok: bool
    server: ServerSpec | None = None
    tools: list[ToolSpec] = Field(default_factory=list)
    left_out: list[LeftOutTool] = Field(
        default_factory=list,
        description="tools it listed that were left out: a name breaking the naming rule or looking like "
        "another tool's, a definition over the JSON limits or otherwise invalid, a name listed twice",
    )
    error: str = Field(default="", description="what went wrong and what to do, when not ok")
    warnings: list[str] = Field(default_factory=list, description="oddities that did not stop discovery")
    seconds: float = Field(description="wall time from start to the session's close")
    phase: DiscoveryPhase = Field(description="the last phase reached; 'done' when ok")


def tool_spec(server: str, tool: types.Tool) -> ToolSpec:
    """The catalog's view of an MCP tool: the fields an approval pins (its title stands in for a missing
    description). Nothing else of it (``title`` beside a description, ``_meta``, ``icons``,
    ``execution``) is kept, pinned or ever shown to an agent."""
    hints = tool.annotations
    return ToolSpec(
        server=server,
        name=tool.name,
        description=tool.description or tool.title or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=hints.model_dump(mode="json", by_alias=True, exclude_none=True) if hints else {},
    )


def server_spec(name: str, config: ServerConfig, init: types.InitializeResult) -> ServerSpec:
    """The catalog's view of a server: the description it gives itself (``serverInfo.description``,
    else the start of its ``instructions``, else its title), its ``instructions`` (their first
    ``INSTRUCTIONS_CHARS``, always present so that instructions appearing later are a change) and the
    operator's options. Both texts are gated and pinned (catalog/server_pins.py): what an agent reads of
    them is the approved text, never the live session's. Its name and version are kept for the
    operator; its other fields (website, icons) are not kept."""
    info = init.server_info
    instructions = init.instructions or ""
    description = info.description or instructions[:DESCRIPTION_CHARS] or info.title or ""
    metadata: dict[str, Any] = {
        "transport": config.transport,
        "server_info": {"name": info.name, "version": info.version},
        "instructions": instructions[:INSTRUCTIONS_CHARS].strip(),
    }
    if config.steering:
        metadata["steering"] = config.steering
    if config.keywords:
        metadata["keywords"] = list(config.keywords)
    return ServerSpec(name=name, description=description.strip(), metadata=metadata)


@dataclass
class _Progress:
    phase: Phase = "start"
    found: DiscoveredServer | None = None

    def enter(self, phase: Phase) -> None:
        self.phase = phase


TWICE = "its name was listed twice in the server's tools/list; the first one listed is kept"


@dataclass
class DiscoveredTools:
    kept: list[ToolSpec]
    left_out: list[LeftOutTool]


def invalid_reason(exc: ValidationError) -> str:
    """Why a tool's definition was refused: each problem, with the field it is in."""
    reasons = []
    for error in exc.errors()[:3]:
        field = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"])
        reasons.append(message if not field or field in message else f"{field}: {message}")
    return "; ".join(reasons)


def accepted_tools(server: str, tools: Sequence[types.Tool], twice: Sequence[str] = ()) -> DiscoveredTools:
    """The tools of a listing the catalog takes, and those it leaves out with why (the naming rule and
    the look-alike names of tool_selector/core/names.py, the JSON limits of core/json_limits.py)."""
    kept: list[ToolSpec] = []
    left_out = [
        LeftOutTool(server=server, tool=n[:MAX_NAME_CHARS], reason=TWICE) for n in dict.fromkeys(twice)
    ]
    names = TakenToolNames()
    for tool in tools:
        try:
            spec = tool_spec(server, tool)
        except ValidationError as exc:
            left_out.append(
                LeftOutTool(server=server, tool=tool.name[:MAX_NAME_CHARS], reason=invalid_reason(exc))
            )
            continue
        copied = names.copied_by(server, spec.name)
        if copied is not None:
            reason = tool_copy_problem(spec.id, copied)
            left_out.append(LeftOutTool(server=server, tool=spec.name, reason=reason))
            continue
        names.add(server, spec.name)
        kept.append(spec)
    return DiscoveredTools(kept, left_out)


async def _list(name: str, config: ServerConfig, upstream: UpstreamSession, progress: _Progress) -> None:
    progress.enter("list_tools")
    listing = await list_all_tools(upstream.session)
    found = accepted_tools(name, listing.tools, listing.twice)
    for out in found.left_out:
        logger.warning("%s: the tool %r was left out: %s", name, out.tool[:80], out.reason)
    progress.found = DiscoveredServer(
        name=name,
        ok=True,
        server=server_spec(name, config, upstream.init_result),
        tools=found.kept,
        left_out=found.left_out,
        warnings=list(listing.notes),
        seconds=0.0,
        phase="done",
    )
    progress.enter("done")


async def discover_one(
    name: str, config: ServerConfig, *, connector: Connector, timeout_s: float, environ: Mapping[str, str]
) -> DiscoveredServer:
    """Start, initialize and list one server under one deadline (``config.timeout_s`` wins)."""
    deadline = config.timeout_s or timeout_s
    progress = _Progress()
    started = time.perf_counter()
    error = ""
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.move_on_after(deadline) as scope:
                async with connector.open(
                    name, config, environ=environ, errlog=errlog, on_phase=progress.enter
                ) as upstream:
                    await _list(name, config, upstream, progress)
            if scope.cancelled_caught and progress.found is None:
                tail = stderr_tail(errlog)
                error = str(
                    upstream_error(
                        name, config, progress.phase, timeout_s=deadline, stderr=tail, environ=environ
                    )
                )
        except UpstreamError as exc:
            error, progress.phase = str(exc), exc.details.get("phase", progress.phase)
        except ToolSelectorError as exc:  # a ${VAR} the environment lacks
            error = str(exc)
        except Exception as exc:  # anything else a server can make the client raise
            tail = stderr_tail(errlog)
            error = str(upstream_error(name, config, progress.phase, exc, stderr=tail, environ=environ))
    seconds = round(time.perf_counter() - started, 3)
    if progress.found is not None:
        if error:
            logger.warning("%s: tools listed, but closing the session failed: %s", name, error)
        return progress.found.model_copy(update={"seconds": seconds})
    phase: DiscoveryPhase = progress.phase if progress.phase != "call_tool" else "list_tools"
    logger.info("%s: discovery failed after %.2f s: %s", name, seconds, error)
    return DiscoveredServer(name=name, ok=False, error=error, seconds=seconds, phase=phase)


async def discover_all(
    configs: Mapping[str, ServerConfig],
    *,
    connector: Connector,
    concurrency: int,
    timeout_s: float,
    environ: Mapping[str, str],
    on_done: Callable[[DiscoveredServer], None] | None = None,
) -> list[DiscoveredServer]:
    """``discover_one`` for every server, at most ``concurrency`` at a time; results in input order.
    ``on_done`` is called (in the event loop) as each server finishes."""
    names = list(configs)
    results: dict[str, DiscoveredServer] = {}
    limiter = anyio.CapacityLimiter(max(1, concurrency))

    async def run(name: str) -> None:
        async with limiter:
            found = await discover_one(
                name, configs[name], connector=connector, timeout_s=timeout_s, environ=environ
            )
        results[name] = found
        if on_done is not None:
            on_done(found)

    async with anyio.create_task_group() as group:
        for name in names:
            group.start_soon(run, name)
    return [results[name] for name in names]


def discover_servers(
    configs: Mapping[str, ServerConfig],
    *,
    connector: Connector,
    concurrency: int,
    timeout_s: float,
    environ: Mapping[str, str],
    on_done: Callable[[DiscoveredServer], None] | None = None,
) -> list[DiscoveredServer]:
    """``discover_all`` in an event loop of its own (call it from synchronous code only)."""
    run = functools.partial(
        discover_all,
        configs,
        connector=connector,
        concurrency=concurrency,
        timeout_s=timeout_s,
        environ=environ,
        on_done=on_done,
    )
    return anyio.run(run)
