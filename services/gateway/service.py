"""Use case: the gateway an agent talks to. One object per gateway process, shared by its sessions.

    resolve_intent(query)          resolve + route; on "activated" the power is started at once; a
                                   multi-step request also lists its ``parts``, the best powers per step
    activate_power(name)           start a configured server; its tools are listed under namespaced names
    deactivate_power(name)         stop it
    call_tool(power, tool, args)   the stable proxy (starts the power when needed)
    catalog_query(type, filters)   structured questions about the catalog

Answers are JSON objects. Each carries ``suggested_next_actions`` (see ``services/gateway/hints.py``), and
every tool an answer shows keeps the description and schema its server gave: enriched text is for
retrieval only. Routes (``routes/gateway.py``) turn these into MCP results and errors.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
from mcp import types

from services.gateway.access import lacks_call, may_call, require_call
from services.gateway.catalog_query.view import CatalogView
from services.gateway.choices import LOCAL, ChoiceMemory
from services.gateway.hints import HintTracker, Suggestion
from services.gateway.powers import Activation, ChangeReason, Power, PowerManager
from services.gateway.runnable import catalog_only, mark_runnable, not_runnable_note
from services.resolve.read_path import ReadPath
from services.shared.container import Container
from services.write.quarantine import LiveCheck, refresh_after_vet, refuse_held, vet_live_server
from tool_selector.config.servers import ServerConfig, load_servers
from tool_selector.core.errors import InvalidInputError, NotFoundError
from tool_selector.core.models import Decision, GatewaySessionStats, Resolution, StepMatch, ToolSummary
from tool_selector.core.names import MAX_NAME_CHARS, shown_name
from tool_selector.route.steps import best_powers
from tool_selector.route.tiers import PowerInfo
from tool_selector.trust.limits import cut
from tool_selector.trust.shown import server_instructions

logger = logging.getLogger(__name__)

MAX_TOOL_NAME = 64  # what Claude's API accepts for a tool name: ^[a-zA-Z0-9_-]{1,64}$
SUMMARY_CHARS = 240  # a power's description in a list of candidates; activate_power shows it all
STEERING_CHARS = 2000  # a server's approved instructions, as steering
RESOLVE_THREADS = 4  # resolve_intent calls running at once; their query embeddings share model calls
REINDEX_WAIT_S = 0.5  # each wait for the writer lock of a refresh left for after another write


def namespaced(power: str, tool: str) -> str:
    """``power__tool`` made of the characters every client accepts, at most 64 long."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", power).strip("_") or "power"
    clean = re.sub(r"[^A-Za-z0-9_-]+", "_", tool)
    name = f"{slug}__{clean}"
    if len(name) <= MAX_TOOL_NAME and clean == tool:
        return name
    digest = hashlib.sha256(f"{power}\0{tool}".encode()).hexdigest()[:6]
    return f"{slug[:20]}__{clean[: MAX_TOOL_NAME - 30]}_{digest}"


def steering(power: Power) -> str:
    """What an agent reads as a power's steering: the operator's (servers.json), else the server's
    approved instructions (capped, withheld when the scanner says so), else nothing; never the text of
    the live session (services/write/quarantine.py: LiveCheck)."""
    return power.config.steering or cut(server_instructions(power.instructions), STEERING_CHARS)


def tool_json(power: str, tool: ToolSummary | types.Tool) -> dict[str, Any]:
    """A tool as an answer shows it: its approved description (cut) and input schema, and its call_as
    name; a power's tools are the approved fields only (``Power.tools``), never the live title or _meta."""
    if isinstance(tool, types.Tool):
        description, schema = tool.description or "", dict(tool.input_schema)
    else:
        description, schema = tool.description, tool.input_schema
    return {
        "name": tool.name,
        "description": cut(description),  # at most limits.DESCRIPTION_CHARS, whatever the upstream sent
        "input_schema": schema,
        "call_as": namespaced(power, tool.name),
    }


@dataclass(frozen=True)
class Caller:
    """Who is calling: a session id (per MCP connection), its transport and client name, the scopes of its
    API key (None over stdio: the local operator may do everything; see access.py), and whose memory of
    confirmed choices it uses and feeds (``local`` over stdio, ``key:<id>`` over HTTP, None: none)."""

    session_id: str
    transport: str = "stdio"
    client: str = ""
    scopes: frozenset[str] | None = None
    principal: str | None = LOCAL


ChangeListener = Callable[[], Awaitable[None]]


class GatewayService:
    """See the module docstring. Enter it (``async with``) to own the upstream servers' lifetimes."""

    def __init__(
        self,
        container: Container,
        *,
        environ: Mapping[str, str],
        configs: Callable[[], Mapping[str, ServerConfig]] | None = None,
        on_tools_changed: ChangeListener | None = None,
    ) -> None:
        self.container = container
        settings = container.settings
        self.read_path = ReadPath(container)
        self.read_path.snapshot()  # refuses here, at start, when there is no current index
        self.hints = HintTracker(sink=self._record_session)
        self.memory = ChoiceMemory(container)
        self.on_tools_changed = on_tools_changed
        self._limiter = anyio.CapacityLimiter(1)  # the catalog view is read and kept by one thread at a time
        # resolves of concurrent callers (an HTTP gateway) overlap; their query embeddings are batched
        self._resolving = anyio.CapacityLimiter(RESOLVE_THREADS)
        self._view: tuple[int, CatalogView] | None = None  # the live resolver's generation it was read at
        self._reindex_pending = False  # an activation's holds wait for a write under way to end
        self.powers = PowerManager(
            configs or (lambda: load_servers(settings.servers_path).mcpServers),
            environ=environ,
            settings=settings.gateway,
            vet=self._vet,
            on_change=self._powers_changed,
        )
        self.memory.runnable = lambda: self.powers.configured().keys()

    def _record_session(self, stats: GatewaySessionStats) -> None:
        self.container.store.put_gateway_session(stats)

    async def __aenter__(self) -> GatewayService:
        await self.powers.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.powers.__aexit__(*exc)
        if self._reindex_pending:  # left for a write that was under way: done before the gateway goes
            with anyio.CancelScope(shield=True):
                await self._refresh(wait_s=self.container.settings.write_lock_timeout_s)

    async def warm_up(self) -> None:
        """Load the embedding model in a worker thread so that the first resolve is fast."""
        await anyio.to_thread.run_sync(self.read_path.decide, "warm up", limiter=self._resolving)

    async def _vet(
        self, name: str, config: ServerConfig, tools: list[types.Tool], init: types.InitializeResult
    ) -> LiveCheck:
        """What the server says live checked against what was approved (a worker thread: it reads and
        writes the catalog); when this changed which of its tools are held (held anew, or back to their
        approved definition), the index is brought in line so that it stays current."""
        shown = await anyio.to_thread.run_sync(vet_live_server, self.container, name, config, tools, init)
        if shown.reindex:
            await self._reindex()
        return shown

    async def _reindex(self) -> None:
        """The index brought in line after an activation's vet: at once, or (another write under way)
        once that write is over, in the background and at the latest when the gateway stops."""
        if not await self._refresh(wait_s=0):
            self._reindex_pending = True
            self.powers.in_background(self._refresh_when_free)

    async def _refresh_when_free(self) -> None:
        while self._reindex_pending and not await self._refresh(wait_s=REINDEX_WAIT_S):
            pass  # the wait for the writer lock is the pause

    async def _refresh(self, *, wait_s: float) -> bool:
        """One try (a worker thread); True when done or failed (logged: the next write retries)."""
        try:
            done = await anyio.to_thread.run_sync(lambda: refresh_after_vet(self.container, wait_s=wait_s))
        except Exception:
            logger.exception("the index could not be brought in line with the activation's holds")
            done = True
        if done:
            self._reindex_pending = False
            self.read_path.expire()
        return done

    async def _powers_changed(self, name: str, reason: ChangeReason) -> None:
        logger.info("power %s %s", name, reason)
        if self.on_tools_changed is not None:
            await self.on_tools_changed()

    # -- the tool list -------------------------------------------------------------------------------

    def proxied_tools(self) -> dict[str, tuple[Power, types.Tool]]:
        """Every active power's tools under their namespaced names."""
        found: dict[str, tuple[Power, types.Tool]] = {}
        for power in self.powers.active():
            for tool in power.tools:
                found.setdefault(namespaced(power.name, tool.name), (power, tool))
        return found

    # -- resolve_intent ------------------------------------------------------------------------------

    def _decide(self, caller: Caller, query: str) -> Decision:
        """The read path's decision (a worker thread), revised by the caller's memory of confirmed choices
        (``_remembered``), and the answer shown left to wait for the caller's choice."""
        if not self.memory.enabled or caller.principal is None:
            return self.read_path.decide(query).decision
        return self.read_path.decide(query, revise=partial(self._remembered, caller)).decision

    def _remembered(
        self, caller: Caller, resolution: Resolution, decision: Decision, powers: Mapping[str, PowerInfo]
    ) -> Decision:
        """The decision with the caller's memory applied, made with the same index's ``powers``
        (services/gateway/choices.py)."""
        session, principal = caller.session_id, caller.principal
        try:
            remembered, fired = self.memory.decide(session, resolution, decision, powers, principal=principal)
            confirms = may_call(caller.scopes)
            self.memory.on_resolve(
                session, resolution, remembered, powers, fired, principal=principal, confirms=confirms
            )
        except Exception:  # the memory only helps: the resolver's own decision stands without it
            logger.warning(
                "the memory of confirmed choices could not be read; deciding without it", exc_info=True
            )
            return decision
        return remembered

    async def resolve_intent(self, caller: Caller, query: str) -> dict[str, Any]:
        decision = await anyio.to_thread.run_sync(self._decide, caller, query, limiter=self._resolving)
        steps = decision.parts or []  # a multi-step request: one power per step
        answer = decision_json(decision)
        runnable = self.powers.configured()
        mark_runnable(answer, runnable)
        suggestions: list[Suggestion] = []
        browse = Suggestion("catalog_query", "to browse", {"query_type": "servers"})
        if decision.status == "activated" and decision.power is not None and decision.power not in runnable:
            catalog_only(answer, decision.power, decision.confidence)  # never started: not configured here
            suggestions.append(browse)
        elif decision.status == "activated" and decision.power is not None and not may_call(caller.scopes):
            lacks_call(answer, decision.power, decision.confidence)  # the key may not start anything
            suggestions.append(browse)
        elif decision.status == "activated" and decision.power is not None:
            try:
                activation = await self.powers.activate(decision.power)
            except Exception as exc:  # the match stands; the agent learns why the power is not ready
                answer["ready"] = False
                answer["message"] = (
                    f"'{decision.power}' is the right power ({decision.confidence:.0%} sure) but it could "
                    f"not be started: {exc} Retry with activate_power('{decision.power}'), or tell the user."
                )
                suggestions.append(Suggestion("activate_power", "retry the start", {"name": decision.power}))
            else:
                answer.update(self._activation_json(activation))
                suggestions += _call_suggestions(activation.power)
                suggestions += _step_suggestions(steps, runnable, started=decision.power)
        elif decision.status == "multiple_matches":
            suggestions += _step_suggestions(steps, runnable)
            offered = {s.arguments.get("name") for s in suggestions}
            for match in decision.matches or []:
                if match.power in runnable and match.power not in offered:
                    suggestions.append(
                        Suggestion("activate_power", f"if {match.power} fits", {"name": match.power})
                    )
        elif decision.status == "weak_matches":
            suggestions.append(Suggestion("resolve_intent", "after the user clarifies", {"query": "..."}))
        if decision.status in ("multiple_matches", "weak_matches") or steps:
            shown = [m.power for m in decision.matches or []] + best_powers(steps)
            idle = [p for p in dict.fromkeys(shown) if p not in runnable and p != decision.power]
            answer["message"] += not_runnable_note(idle) if idle else ""
        if not suggestions or decision.status == "weak_matches":
            suggestions.append(browse)
        answer["suggested_next_actions"] = self.hints.offer(caller.session_id, suggestions)
        return answer

    # -- activate / deactivate -----------------------------------------------------------------------

    def _activation_json(self, activation: Activation) -> dict[str, Any]:
        power = activation.power
        answer: dict[str, Any] = {
            "power": power.name,
            "ready": True,
            "already_active": activation.already_active,
            "tools": [tool_json(power.name, t) for t in power.tools],
            "steering": steering(power),
        }
        if power.note:
            answer["instructions_held"] = power.note  # the live instructions wait: never shown
        if power.held:
            answer["held_tools"] = power.held  # held in quarantine: named, never shown or callable
        if activation.evicted:
            answer["stopped_to_make_room"] = activation.evicted
        return answer

    async def activate_power(self, caller: Caller, name: str) -> dict[str, Any]:
        name = _required(name, "name", "activate_power(name='git')")
        require_call(caller.scopes, f"start the power '{name}'")
        prerequisite = self.hints.prerequisite(caller.session_id, "activate_power")
        activation = await self.powers.activate(name)
        self.memory.on_activate(caller.session_id, name, principal=caller.principal)
        answer = {"status": "activated", **self._activation_json(activation)}
        answer["message"] = (
            f"'{name}' is {'already ' if activation.already_active else ''}running with "
            f"{len(activation.power.tools)} tools. Call them by their call_as name, or through "
            f"call_tool(power='{name}', tool=..., arguments=...)."
        )
        if prerequisite is not None:
            answer["hint"] = prerequisite
        answer["suggested_next_actions"] = self.hints.offer(
            caller.session_id, _call_suggestions(activation.power)
        )
        return answer

    async def deactivate_power(self, caller: Caller, name: str) -> dict[str, Any]:
        name = _required(name, "name", "deactivate_power(name='git')")
        require_call(caller.scopes, f"stop the power '{name}'")
        stopped = await self.powers.deactivate(name)
        await anyio.to_thread.run_sync(
            lambda: self.memory.on_deactivate(caller.session_id, name, principal=caller.principal)
        )
        suggestions = [Suggestion("resolve_intent", "for the next request", {"query": "..."})]
        return {
            "status": "deactivated" if stopped else "not_active",
            "power": name,
            "message": f"'{name}' {'was stopped' if stopped else 'was not running'}; its tools are gone.",
            "suggested_next_actions": self.hints.offer(caller.session_id, suggestions),
        }

    # -- calls ---------------------------------------------------------------------------------------

    async def call_tool(
        self, caller: Caller, power_name: str, tool: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        require_call(caller.scopes, "call an upstream tool")
        power_name = _required(power_name, "power", "call_tool(power='time', tool='get_current_time')")
        tool = _required(tool, "tool", "call_tool(power='time', tool='get_current_time')")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise InvalidInputError(
                "call_tool's 'arguments' must be a JSON object.",
                hint='Pass the tool\'s arguments as an object, e.g. {"timezone": "Europe/Paris"}.',
            )
        power = await self.powers.started(power_name)  # another session's start of it is waited for
        if tool in power.held:
            raise refuse_held(power_name, tool, power.held[tool])
        if power.tool(tool) is None:
            raise NotFoundError(
                f"The power {power_name!r} has no tool {tool!r}. Its tools: "
                + ", ".join(t.name for t in power.tools[:40])
                + ".",
                hint="Call call_tool again with one of these names.",
                power=power_name,
                tool=tool,
            )
        result = await self.powers.call(power_name, tool, dict(arguments or {}))
        await self._called(caller, power_name, tool, result)
        return result

    async def _called(self, caller: Caller, power: str, tool: str, result: types.CallToolResult) -> None:
        """A call went through: the memory learns whether it served the session's last request. The
        upstream has served it, so nothing here may turn it into a failure (a full disk): logged only."""
        if not self.memory.enabled:
            return
        ok = not result.is_error
        try:
            await anyio.to_thread.run_sync(
                lambda: self.memory.on_call(caller.session_id, power, tool, ok=ok, principal=caller.principal)
            )
        except Exception:
            logger.warning("the call of %s's %s was served; recording it failed", power, tool, exc_info=True)

    async def call_namespaced(
        self, caller: Caller, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        require_call(caller.scopes, f"call the tool {shown_name(name)}")
        found = self.proxied_tools().get(name)
        for power in self.powers.active() if found is None else ():
            for held, message in power.held.items():
                if namespaced(power.name, held) == name:
                    raise refuse_held(power.name, held, message)
        if found is None:
            raise NotFoundError(
                f"No active tool is called {shown_name(name)}: its power is not active (it may have been "
                "stopped for being idle, to make room, or because it crashed).",
                hint="Call resolve_intent or activate_power again, or use call_tool(power, tool, arguments).",
                tool=name[:MAX_NAME_CHARS],
            )
        power, tool = found
        result = await self.powers.call(power.name, tool.name, dict(arguments or {}))
        await self._called(caller, power.name, tool.name, result)
        return result

    # -- catalog_query -------------------------------------------------------------------------------

    def _catalog_view(self) -> tuple[CatalogView, set[str]]:
        """The catalog view read at the read path's current index, and the power names (in a worker
        thread: the read path may look at the database)."""
        snapshot = self.read_path.snapshot()
        if self._view is None or self._view[0] != self.read_path.generation:
            self._view = (self.read_path.generation, CatalogView.load(self.container.store))
        return self._view[1], set(snapshot.powers)

    async def catalog_query(self, caller: Caller, query_type: Any, filters: Any) -> dict[str, Any]:
        if not isinstance(query_type, str):
            raise InvalidInputError(
                "'query_type' must be one of servers, tools, check_tool, profile.",
                hint='Call it like catalog_query(query_type="tools", filters={"server": "git"}).',
            )
        view, powers = await anyio.to_thread.run_sync(self._catalog_view, limiter=self._limiter)
        self.memory.on_other(caller.session_id, principal=caller.principal)
        answer = view.query(query_type, filters)
        runnable = self.powers.configured()
        mark_runnable(answer, runnable)
        suggestions: list[Suggestion] = []
        server = answer.get("server") or (answer.get("filters") or {}).get("server")
        if isinstance(server, str) and server in powers and server in runnable:
            suggestions.append(Suggestion("activate_power", f"to use {server}", {"name": server}))
        suggestions.append(Suggestion("resolve_intent", "to let the gateway pick", {"query": "..."}))
        answer["suggested_next_actions"] = self.hints.offer(caller.session_id, suggestions)
        return answer


def _required(value: Any, field: str, example: str) -> str:
    """A name the agent gave (a power's or a tool's), stripped; an error echoes at most MAX_NAME_CHARS of
    it (a model sent 100 kB once and would have read all of it back)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"'{field}' must be a non-empty string.", hint=f"Call it like {example}.")
    if len(value) > MAX_NAME_CHARS:
        raise InvalidInputError(
            f"'{field}' is no power's or tool's name: {shown_name(value)}; a name has at most "
            f"{MAX_NAME_CHARS} characters.",
            hint="Call resolve_intent with what you want to do first, then use the exact name it returns.",
        )
    return value.strip()


def render_answer(answer: dict[str, Any]) -> str:
    """An answer as the agent reads it: one line of JSON (indentation costs tokens, not clarity)."""
    return json.dumps(answer, ensure_ascii=False)


def decision_json(decision: Decision) -> dict[str, Any]:
    """A decision as resolve_intent answers it (its ``parts`` only for a multi-step request)."""
    answer = decision.model_dump(mode="json", exclude_none=True)
    for key in ("matches", "available_powers"):
        for summary in answer.get(key, []):
            text = summary.get("description", "")
            if len(text) > SUMMARY_CHARS:
                summary["description"] = text[: SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    answer["confidence"] = round(decision.confidence, 4)
    if decision.power is not None and decision.tools is not None:
        answer["tools"] = [tool_json(decision.power, t) for t in decision.tools]
    return answer


def _step_suggestions(
    steps: Sequence[StepMatch], runnable: Collection[str], *, started: str | None = None
) -> list[Suggestion]:
    """activate_power for each step's best power this gateway can run, in step order (not the one
    already ``started``)."""
    found: dict[str, Suggestion] = {}
    for i, step in enumerate(steps, start=1):
        best = step.powers[0] if step.powers else None
        if best is not None and best in runnable and best != started and best not in found:
            found[best] = Suggestion("activate_power", f"for step {i}", {"name": best})
    return list(found.values())


def _call_suggestions(power: Power) -> list[Suggestion]:
    names = [t.name for t in power.tools[:3]]
    accepts = frozenset(namespaced(power.name, t.name) for t in power.tools)
    return [
        Suggestion(
            "call_tool",
            f"run one of {power.name}'s tools (or call it as {namespaced(power.name, names[0])})"
            if names
            else f"{power.name} listed no tools",
            {"power": power.name, "tool": names[0] if names else "", "arguments": {}},
            accepts=accepts,
        )
    ]
