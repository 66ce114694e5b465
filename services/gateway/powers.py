"""Use case: run the upstream MCP servers ("powers") the agent activates, and proxy calls to them.

    PowerManager (one per gateway process, used as ``async with``)
    ├── activate(name)     start + initialize + list tools under one deadline; idempotent
    ├── started(name)      ready to call: running, or its start (another session's, or a new one) awaited
    ├── call(name, tool)   one tools/call under the call deadline; a dead server is marked crashed
    ├── deactivate(name)   stop one (the MCP SDK closes stdin, then SIGTERM/SIGKILL its group)
    └── reaper             stops servers idle longer than ``idle_timeout_s``

Only names from the operator's configuration can be started: the manager is given a function that
reads that configuration, and nothing an agent sends can add a command. It opens each session through
the ``Connector`` it is given (services/upstream/connector.py: real processes and urls by default).
At most ``max_active`` servers run at once; activating one more stops the least recently used first.
Each server runs in a task of the manager's own task group, so leaving the ``async with`` (gateway
exit, SIGTERM, client disconnect) stops every one of them: no orphan processes.
"""

from __future__ import annotations

import logging
import math
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TextIO

import anyio
from anyio.abc import TaskGroup
from mcp import MCPError, types

from services.gateway.results import capped_result
from services.upstream.connector import Connector
from services.upstream.session import Phase, UpstreamSession, list_all_tools, stderr_tail, upstream_error
from services.write.quarantine import LiveCheck
from tool_selector.config.gateway import GatewaySettings
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import NotFoundError, ToolSelectorError, UpstreamError

logger = logging.getLogger(__name__)

PowerState = Literal["starting", "ready", "stopping", "stopped", "crashed", "failed"]
ChangeReason = Literal["activated", "deactivated", "evicted", "idle", "crashed"]


@dataclass
class Power:
    """One upstream server as the gateway runs it."""

    name: str
    config: ServerConfig
    state: PowerState = "starting"
    tools: list[types.Tool] = field(default_factory=list)  # the approved fields only (LiveCheck)
    held: dict[str, str] = field(default_factory=dict)  # tools held in quarantine -> what an agent reads
    instructions: str = ""  # the approved instructions, never the live session's
    note: str = ""  # the live instructions wait for approval: what an agent reads instead
    error: str = ""
    started_at: float = 0.0
    start_seconds: float = 0.0
    last_used: float = 0.0
    calls: int = 0
    upstream: UpstreamSession | None = None
    errlog: TextIO | None = None
    settled: anyio.Event = field(default_factory=anyio.Event)
    stop: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    phase: Phase = "start"

    @property
    def running(self) -> bool:
        return self.state in ("starting", "ready")

    def tool(self, name: str) -> types.Tool | None:
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True)
class Activation:
    """What ``activate`` did: the running power, whether it was already running, who made room."""

    power: Power
    already_active: bool
    evicted: list[str]


ChangeCallback = Callable[[str, ChangeReason], Awaitable[None]]
VetCallback = Callable[[str, ServerConfig, list[types.Tool], types.InitializeResult], Awaitable[LiveCheck]]
"""Checks what a server says live (its tools, its description and instructions) against what was
approved, before the power is ready; returns what an agent may see of it (services/write/quarantine.py):
held tools are never listed or called, and nothing of the live session outside the pins is shown."""


class PowerManager:
    """Starts, proxies and stops configured upstream servers; see the module docstring."""

    def __init__(
        self,
        configs: Callable[[], Mapping[str, ServerConfig]],
        *,
        connector: Connector,
        environ: Mapping[str, str],
        settings: GatewaySettings,
        vet: VetCallback,
        on_change: ChangeCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._configs = configs
        self._connector = connector
        self.vet = vet
        self._environ = dict(environ)
        self.settings = settings
        self.on_change = on_change
        self._clock = clock
        self._powers: dict[str, Power] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._group: TaskGroup | None = None
        self.failures: dict[str, str] = {}  # the last failure of each server, until it starts again

    # -- lifetime ------------------------------------------------------------------------------------

    async def __aenter__(self) -> PowerManager:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._reap_idle)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._group is not None
        with anyio.CancelScope(shield=True):
            await self.stop_all()
        self._group.cancel_scope.cancel()
        return await self._group.__aexit__(exc_type, exc, tb)

    def in_background(self, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``job`` in the manager's task group: it ends, at the latest, when the manager does."""
        assert self._group is not None, "use the PowerManager as an async context manager"
        self._group.start_soon(job)

    async def stop_all(self) -> None:
        async with anyio.create_task_group() as group:
            for power in list(self._powers.values()):
                group.start_soon(self._stop, power)

    # -- queries -------------------------------------------------------------------------------------

    def configured(self) -> Mapping[str, ServerConfig]:
        return {n: c for n, c in self._configs().items() if c.runnable}

    def config_of(self, name: str) -> ServerConfig:
        """The configuration of an enabled server, or NotFoundError naming the closest ones."""
        configs = self._configs()
        config = configs.get(name)
        if config is not None and config.runnable:
            return config
        from difflib import get_close_matches

        enabled = sorted(n for n, c in configs.items() if c.runnable)
        lowered = {n.lower(): n for n in enabled}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
        close += [c for c in get_close_matches(name, enabled, n=3, cutoff=0.4) if c not in close]
        why = (
            "is not in the gateway's configuration"
            if config is None
            else "was imported and waits for the operator to allow it"
            if config.origin == "import"
            else "is configured but disabled"
        )
        raise NotFoundError(
            f"The power {name!r} {why}."
            + (f" Closest configured names: {', '.join(close)}." if close else "")
            + (f" Configured: {', '.join(enabled[:20])}." if not close and enabled else ""),
            hint="Use one of the configured names exactly, or call resolve_intent to find the right one.",
            name=name,
            closest=close,
        )

    def get(self, name: str) -> Power | None:
        power = self._powers.get(name)
        return power if power is not None and power.running else None

    def active(self) -> list[Power]:
        """The ready powers, most recently used first."""
        ready = [p for p in self._powers.values() if p.state == "ready"]
        return sorted(ready, key=lambda p: p.last_used, reverse=True)

    # -- activation ----------------------------------------------------------------------------------

    async def activate(self, name: str) -> Activation:
        """Start ``name`` (a configured, enabled server) unless it runs already; raises UpstreamError
        with what happened and what to do if it cannot be started within the start timeout."""
        config = self.config_of(name)
        lock = self._locks.setdefault(name, anyio.Lock())
        async with lock:
            current = self._powers.get(name)
            if current is not None and current.state == "ready":
                current.last_used = self._clock()
                return Activation(current, already_active=True, evicted=[])
            evicted = await self._make_room()
            power = Power(name=name, config=config, started_at=self._clock())
            self._powers[name] = power
            assert self._group is not None, "use the PowerManager as an async context manager"
            self._group.start_soon(self._run, power)
            await power.settled.wait()
            if power.state != "ready":
                self._powers.pop(name, None)
                self.failures[name] = power.error
                raise UpstreamError(power.error, server=name, phase=power.phase)
            self.failures.pop(name, None)
            power.last_used = self._clock()
        await self._changed(name, "activated")
        return Activation(power, already_active=False, evicted=evicted)

    async def started(self, name: str) -> Power:
        """``name`` ready to call: running already; being started by another session (waited for: the
        start ends within its own timeout, and its failure is this caller's too); or started now."""
        power = self._powers.get(name)
        if power is not None and power.state == "starting":
            logger.info("%s is starting for another session; waiting for its start", name)
            await power.settled.wait()
            if not power.running:  # its start failed: that is this call's answer too
                stopped = f"The power {name!r} was stopped while it was starting."
                hint = "" if power.error else f"Call activate_power('{name}') again."
                raise UpstreamError(power.error or stopped, hint=hint, server=name, phase=power.phase)
        elif power is None or power.state != "ready":
            return (await self.activate(name)).power
        power.last_used = self._clock()
        return power

    async def _make_room(self) -> list[str]:
        running = [p for p in self._powers.values() if p.running]
        evicted: list[str] = []
        while len(running) >= self.settings.max_active:
            victim = min(running, key=lambda p: p.last_used)
            running.remove(victim)
            logger.info("stopping %s to make room (at most %d active)", victim.name, self.settings.max_active)
            await self._stop(victim)
            evicted.append(victim.name)
            await self._changed(victim.name, "evicted")
        return evicted

    async def _run(self, power: Power) -> None:
        """The task that owns one upstream session from start to stop."""
        started = time.perf_counter()
        timeout = power.config.timeout_s or self.settings.start_timeout_s

        def enter(phase: Phase) -> None:
            power.phase = phase

        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            power.errlog = errlog
            try:
                with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                    async with self._connector.open(
                        power.name, power.config, environ=self._environ, errlog=errlog, on_phase=enter
                    ) as upstream:
                        power.phase = "list_tools"
                        listing = await list_all_tools(upstream.session)
                        shown = await self.vet(power.name, power.config, listing.tools, upstream.init_result)
                        scope.deadline = math.inf
                        power.upstream, power.held, power.tools = upstream, shown.held, shown.tools
                        power.instructions, power.note = shown.instructions, shown.note
                        power.start_seconds = time.perf_counter() - started
                        power.state, power.phase = "ready", "done"
                        power.settled.set()
                        await power.stop.wait()
                if scope.cancelled_caught and power.state == "starting":
                    tail = stderr_tail(errlog)
                    error = upstream_error(
                        power.name,
                        power.config,
                        power.phase,
                        timeout_s=timeout,
                        stderr=tail,
                        environ=self._environ,
                    )
                    power.error = str(error)
            except UpstreamError as exc:
                power.error = str(exc)
            except ToolSelectorError as exc:  # a ${VAR} the environment lacks
                power.error = str(exc)
            except Exception as exc:
                tail = stderr_tail(errlog)
                power.error = str(
                    upstream_error(
                        power.name, power.config, power.phase, exc, stderr=tail, environ=self._environ
                    )
                )
                logger.info("%s ended: %s", power.name, power.error)
            finally:
                ended: dict[PowerState, PowerState] = {"starting": "failed", "stopping": "stopped"}
                power.state = ended.get(power.state, "crashed" if power.state == "ready" else power.state)
                power.upstream, power.errlog = None, None
                power.settled.set()
                power.done.set()

    # -- stopping ------------------------------------------------------------------------------------

    async def deactivate(self, name: str) -> bool:
        """Stop ``name``; False if it was not running. Unknown names raise NotFoundError."""
        power = self._powers.get(name)
        if power is None or not power.running:
            self.config_of(name)  # a name that was never configured is an error, not a no-op
            return False
        await self._stop(power)
        await self._changed(name, "deactivated")
        return True

    async def _stop(self, power: Power) -> None:
        if power.state in ("ready", "starting"):
            power.state = "stopping"
        power.stop.set()
        with anyio.move_on_after(self.settings.stop_timeout_s):
            await power.done.wait()
        if self._powers.get(power.name) is power:
            del self._powers[power.name]

    async def _changed(self, name: str, reason: ChangeReason) -> None:
        if self.on_change is not None:
            try:
                await self.on_change(name, reason)
            except Exception:
                logger.exception("the change callback failed for %s (%s)", name, reason)

    async def _reap_idle(self) -> None:
        interval = max(0.05, min(30.0, self.settings.idle_timeout_s / 4))
        while True:
            await anyio.sleep(interval)
            now = self._clock()
            for power in list(self._powers.values()):
                if power.state == "ready" and now - power.last_used > self.settings.idle_timeout_s:
                    logger.info("stopping %s: idle for %.0f s", power.name, now - power.last_used)
                    await self._stop(power)
                    await self._changed(power.name, "idle")

    # -- calls ---------------------------------------------------------------------------------------

    async def call(self, name: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """One ``tools/call`` on a ready power. Upstream failures raise UpstreamError with what to do;
        a tool's own error comes back as the upstream's ``is_error`` result, unchanged. Results are
        cut to the gateway's size caps (``services/gateway/results.py``)."""
        power = self.get(name)
        if power is None or power.upstream is None:
            raise UpstreamError(
                f"The power {name!r} is not active.",
                hint=f"Call activate_power('{name}') first (call_tool does it for you).",
                server=name,
                phase="call_tool",
            )
        power.last_used = self._clock()
        power.calls += 1
        timeout = self.settings.call_timeout_s
        try:
            result = await power.upstream.session.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise UpstreamError(
                    f"The MCP server {name!r} did not answer {tool!r} within {timeout:.0f} s; "
                    "the call was cancelled and the server keeps running.",
                    hint="Retry once with smaller input; if it hangs again, tell the user.",
                    server=name,
                    phase="call_tool",
                ) from exc
            if exc.code == types.CONNECTION_CLOSED:
                tail = stderr_tail(power.errlog)
                await self._crashed(power)
                raise upstream_error(
                    name, power.config, "call_tool", exc, stderr=tail, environ=self._environ
                ) from exc
            raise upstream_error(name, power.config, "call_tool", exc, environ=self._environ) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            await self._crashed(power)
            raise upstream_error(name, power.config, "call_tool", exc, environ=self._environ) from exc
        limits = self.settings
        return capped_result(
            result, max_chars=limits.max_result_chars, max_media_bytes=limits.max_result_media_bytes
        )

    async def _crashed(self, power: Power) -> None:
        power.state = "crashed"
        self.failures[power.name] = f"{power.name} exited while it was active"
        power.stop.set()
        with anyio.move_on_after(self.settings.stop_timeout_s):
            await power.done.wait()
        if self._powers.get(power.name) is power:
            del self._powers[power.name]
        await self._changed(power.name, "crashed")
