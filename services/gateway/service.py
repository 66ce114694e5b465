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
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import anyio
from mcp import types

from services.gateway.access import may_call, require_call
from services.gateway.answer import (
    Facts,
    Filled,
    GatewayAnswer,
    NextCall,
    Started,
    power_answer,
    resolve_answer,
)
from services.gateway.catalog_query.view import CatalogView
from services.gateway.hints import HintTracker, Suggestion
from services.gateway.memory.recording import LOCAL, ChoiceMemory
from services.gateway.powers import Activation, ChangeReason, Power, PowerManager
from services.gateway.runnable import mark_runnable
from services.gateway.sessions import SessionViews
from services.resolve.read_path import Answer, ReadPath
from services.root.container import Container
from services.write.quarantine import LiveCheck, refresh_after_vet, refuse_held, vet_live_server
from tool_selector.config.servers import ServerConfig, load_servers
from tool_selector.core.errors import InvalidInputError, NotFoundError
from tool_selector.core.models import Decision, GatewaySessionStats, PowerSummary, Resolution
from tool_selector.core.names import MAX_NAME_CHARS, server_of, shown_name, tool_of
from tool_selector.resolve.spelling import corrected
from tool_selector.route import messages
from tool_selector.route.arguments.carry import next_arguments
from tool_selector.route.tiers import PowerInfo
from tool_selector.trust.limits import cut
from tool_selector.trust.shown import server_instructions

logger = logging.getLogger(__name__)

MAX_TOOL_NAME = 64  # what Claude's API accepts for a tool name: ^[a-zA-Z0-9_-]{1,64}$
STEERING_CHARS = 300  # the operator's steering or a server's approved instructions, once per session
RESOLVE_THREADS = 4  # resolve_intent calls running at once; their query embeddings share model calls
SURELY = 0.95  # a catalog-only best fit this sure is not second-guessed with configured alternatives
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


ChangeListener = Callable[..., Awaitable[None]]  # (session=None: every client; else only that session's)


class GatewayService:
    """See the module docstring. Enter it (``async with``) to own the upstream servers' lifetimes."""

    def __init__(
        self,
        container: Container,
        *,
        environ: Mapping[str, str],
        configs: Callable[[], Mapping[str, ServerConfig]] | None = None,
        on_tools_changed: ChangeListener | None = None,
        read_path: ReadPath | None = None,  # one whose snapshot was read (a worker thread: routes/gateway.py)
    ) -> None:
        self.container = container
        settings = container.settings
        self.read_path = read_path or ReadPath(container)
        self.read_path.snapshot()  # refuses here, at start, when there is no current index
        self.hints = HintTracker(sink=self._record_session)
        self.memory = ChoiceMemory(container)
        self.on_tools_changed = on_tools_changed
        self._limiter = anyio.CapacityLimiter(1)  # the catalog view is read and kept by one thread at a time
        # resolves of concurrent callers (an HTTP gateway) overlap; their query embeddings are batched
        self._resolving = anyio.CapacityLimiter(RESOLVE_THREADS)
        self._view: tuple[int, CatalogView] | None = None  # the live resolver's generation it was read at
        self.sessions = SessionViews()
        self._reindex_pending = False  # an activation's holds wait for a write under way to end
        self.powers = PowerManager(
            configs or (lambda: load_servers(settings.servers_path).mcpServers),
            connector=container.connector,
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

    def proxied_tools(self, session: str | None = None) -> dict[str, tuple[Power, types.Tool]]:
        """The active powers' tools under their namespaced names: every one (``session`` None), or those in
        the session's tool list (the tools its requests matched or it called)."""
        listed = None if session is None else self.sessions.listed(session)
        found: dict[str, tuple[Power, types.Tool]] = {}
        for power in self.powers.active():
            for tool in power.tools:
                if listed is None or (power.name, tool.name) in listed:
                    found.setdefault(namespaced(power.name, tool.name), (power, tool))
        return found

    async def _list(self, session: str, power: str, tools: Collection[str]) -> None:
        """``tools`` of ``power`` in the session's tool list as its most recently used (at most
        ``gateway.max_listed``: the least recently used leave it); tell the clients when it changed."""
        view = self.sessions.get(session)
        active = {p.name for p in self.powers.active()}  # a stopped power's tools hold no place in the list
        changed = view.list_tools(
            [(power, t) for t in tools], self.container.settings.gateway.max_listed, active
        )
        if changed and self.on_tools_changed is not None:
            await self.on_tools_changed(session=session)  # only this session's list changed

    # -- resolve_intent ------------------------------------------------------------------------------

    def _decide(self, caller: Caller, query: str, request: str | None = None) -> Answer:
        """The read path's answer (a worker thread), its decision revised by the caller's memory of confirmed
        choices (``_remembered``), and the answer shown left to wait for the caller's choice."""
        if not self.memory.enabled or caller.principal is None:
            return self.read_path.decide(query, request=request)
        return self.read_path.decide(
            query, request=request, revise=partial(self._remembered, caller, request)
        )

    def _remembered(
        self,
        caller: Caller,
        words: str | None,
        resolution: Resolution,
        decision: Decision,
        powers: Mapping[str, PowerInfo],
    ) -> Decision:
        """The decision with the caller's memory applied, made with the same index's ``powers``
        (services/gateway/memory/recording.py); ``words``: the user's own words, when the agent gave them."""
        session, principal = caller.session_id, caller.principal
        try:
            remembered, fired = self.memory.decide(session, resolution, decision, powers, principal=principal)
            confirms = may_call(caller.scopes)
            self.memory.on_resolve(
                session,
                resolution,
                remembered,
                powers,
                fired,
                principal=principal,
                confirms=confirms,
                words=words,
            )
        except Exception:  # the memory only helps: the resolver's own decision stands without it
            logger.warning(
                "the memory of confirmed choices could not be read; deciding without it", exc_info=True
            )
            return decision
        return remembered

    async def resolve_intent(self, caller: Caller, query: Any, request: Any = None) -> dict[str, Any]:
        """``query``: the capability needed, in the agent's words; ``request``: the user's own words, read for
        the arguments of the next call (the query's own arguments otherwise)."""
        query = _text(query, "query", 'resolve_intent(query="convert a time between two time zones")')
        words = _text(request, "request", "") if request is not None else query
        resolution, decision = await anyio.to_thread.run_sync(
            self._decide, caller, query, None if request is None else words, limiter=self._resolving
        )
        respelled = await anyio.to_thread.run_sync(self._respelled, words, limiter=self._resolving)
        view = self.sessions.get(caller.session_id)
        runnable = self.powers.configured()
        started: Started | None = None
        error: str | None = None
        power = decision.power if decision.status == "activated" else None
        if power is not None and power in runnable and may_call(caller.scopes):
            try:
                started = self._started(await self.powers.activate(power), view)
            except Exception as exc:  # the match stands; the agent learns why the power is not ready
                error = str(exc)
        facts = Facts(
            runnable,
            may_call(caller.scopes),
            started,
            error,
            set(view.seen),
            filler(words, query, respelled=respelled, earlier=view.earlier()),
            _blurbs(runnable),
            fit=_fit(resolution, power),
            top3=max(resolution.top3_confidence, resolution.confidence),
            alternatives=self._alternatives(resolution, power, runnable),
        )
        answer = resolve_answer(decision, facts)
        view.words = words
        view.named = {m.power: list(m.tools) for m in decision.matches or []}
        if power is not None:
            view.named[power] = [t.name for t in decision.tools or []]
        await self._read(caller, answer)
        return self._offer(caller, answer)

    def _respelled(self, words: str) -> str:  # as the resolver reads them: "tiem" -> "time" tells a kind
        frequency = self.read_path.snapshot().terms.document_frequency
        return corrected(words, frequency) if self.container.settings.search.spelling else ""

    def _alternatives(
        self, resolution: Resolution, power: str | None, runnable: Collection[str]
    ) -> list[PowerSummary]:
        """When the best fit is only in the catalog, and not almost surely right: the configured powers among
        the first three (the agent can use those; the best fit it cannot)."""
        if power is None or power in runnable or resolution.confidence >= SURELY:
            return []
        directory = self.read_path.snapshot().powers
        found = []
        for candidate in resolution.powers[1:3]:
            info = directory.get(candidate.name)
            if info is not None and candidate.name in runnable:
                tools = [tool_of(t) for t in candidate.tools[:5]]
                found.append(
                    PowerSummary(
                        power=info.name, description=info.description, score=candidate.score, tools=tools
                    )
                )
        return found

    def _started(self, activation: Activation, view: Any) -> Started:
        """A running power as the answer shows it; its steering only the first time the session meets it."""
        power = activation.power
        shown = steering(power) if power.name not in view.steering else ""
        view.steering.add(power.name)
        return Started(
            name=power.name,
            tools=power.tools,
            already=activation.already_active,
            evicted=activation.evicted,
            steering=shown,
            held=power.held,
            instructions_held=bool(power.note),
        )

    async def _read(self, caller: Caller, answer: GatewayAnswer) -> None:
        """What the agent now holds: the tool lines it read, and those tools in its tool list."""
        if answer.power is None or not answer.shown:
            return
        view = self.sessions.get(caller.session_id)
        view.seen |= {f"{answer.power}::{line.split('(', 1)[0]}" for line in answer.tools or []}
        if self.powers.get(answer.power) is not None:
            await self._list(caller.session_id, answer.power, answer.shown[::-1])  # the best used last

    def _offer(self, caller: Caller, answer: GatewayAnswer) -> dict[str, Any]:
        """The answer as the agent reads it; its next calls recorded as the hints the session was given."""
        self.hints.offer(caller.session_id, [_suggestion(n) for n in answer.next])
        return answer.as_json()

    # -- activate / deactivate -----------------------------------------------------------------------

    async def activate_power(self, caller: Caller, name: str) -> dict[str, Any]:
        name = _required(name, "name", "activate_power(name='git')")
        require_call(caller.scopes, f"start the power '{name}'")
        prerequisite = self.hints.prerequisite(caller.session_id, "activate_power")
        activation = await self.powers.activate(name)
        self.memory.on_activate(caller.session_id, name, principal=caller.principal)
        view = self.sessions.get(caller.session_id)
        started = self._started(activation, view)
        facts = Facts(
            self.powers.configured(),
            True,
            started,
            seen=set(view.seen),
            fill=filler(view.words, earlier=view.earlier()),
        )
        answer = power_answer(started, view.named.get(name, []), facts, prerequisite)
        await self._read(caller, answer)
        return self._offer(caller, answer)

    async def deactivate_power(self, caller: Caller, name: str) -> dict[str, Any]:
        name = _required(name, "name", "deactivate_power(name='git')")
        require_call(caller.scopes, f"stop the power '{name}'")
        stopped = await self.powers.deactivate(name)
        await anyio.to_thread.run_sync(
            lambda: self.memory.on_deactivate(caller.session_id, name, principal=caller.principal)
        )
        answer = GatewayAnswer(
            status="deactivated" if stopped else "not_active",
            power=name,
            message=messages.stopped(name, stopped),
            next=[NextCall(tool="resolve_intent", arguments={"query": "..."}, why="for the next request")],
        )
        return self._offer(caller, answer)

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
        await self._called(caller, power_name, tool, result, arguments or {})
        await self._list(caller.session_id, power_name, [tool])  # a tool it needed: listed from now on
        return result

    async def _called(
        self,
        caller: Caller,
        power: str,
        tool: str,
        result: types.CallToolResult,
        arguments: Mapping[str, Any],
    ) -> None:
        """A call went through: the session keeps the values it passed (sessions.py, ``used``) and the
        memory learns whether it served the session's last request. The upstream has served it, so
        nothing here may turn it into a failure (a full disk): logged only."""
        ok = not result.is_error
        if ok:
            self.sessions.get(caller.session_id).passed(power, arguments)
        if not self.memory.enabled:
            return
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
        await self._called(caller, power.name, tool.name, result, arguments or {})
        await self._list(caller.session_id, power.name, [tool.name])  # the most recently used now
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
        answer["next"] = self.hints.offer(caller.session_id, suggestions)
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


def _text(value: Any, field: str, example: str) -> str:
    """A request's text: a non-empty string (cut to the resolver's input limit by the resolver)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"'{field}' must be a non-empty string.", hint=f"Call it like {example}." if example else ""
        )
    return value.strip()


def filler(
    *texts: str, respelled: str = "", earlier: Mapping[str, Mapping[str, Any]] | None = None
) -> Callable[[str, types.Tool], Filled]:
    """The next call's arguments (tool_selector/route/arguments/carry.py ``next_arguments``) for a power's
    tool: ``texts`` the user's words first, ``earlier`` what the session always passed each power."""

    def fill(power: str, tool: types.Tool) -> Filled:
        now, passed = datetime.now().astimezone(), (earlier or {}).get(power, {})
        found, missing = next_arguments(
            dict(tool.input_schema), texts, respelled=respelled, passed=passed, now=now
        )
        return Filled(arguments=found, missing=missing)

    return fill


def _fit(resolution: Resolution, power: str | None) -> dict[str, float]:
    """How well each of ``power``'s tools fits the request, relative to its best one (1.0)."""
    scores = {tool_of(t.id): t.score for t in resolution.tools if server_of(t.id) == power}
    best = max(scores.values(), default=0.0)
    return {name: score / best for name, score in scores.items()} if best > 0 else {}


def _blurbs(configs: Mapping[str, ServerConfig]) -> dict[str, str]:
    """The operator's line for each configured power (its steering in servers.json): what a candidate
    says it does, before the server's own description."""
    return {name: config.steering for name, config in configs.items() if config.steering}


def _suggestion(call: NextCall) -> Suggestion:
    """A next call as the hint tracker follows it (a proxied tool's own name counts as its call_tool)."""
    args = call.arguments
    accepts: frozenset[str] = frozenset()
    if call.tool == "call_tool" and isinstance(args.get("power"), str) and isinstance(args.get("tool"), str):
        accepts = frozenset({namespaced(args["power"], args["tool"])})
    return Suggestion(call.tool, call.why or "", dict(args), accepts=accepts)
