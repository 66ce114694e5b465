"""The gateway's memory of confirmed choices: what it records from a session, and how a decision uses it.

Whose: every remembered choice belongs to the **principal** who confirmed it (``local``: the person who
runs the gateway over stdio; ``key:<id>``: an API key over HTTP) and decides only for that principal:
one key's choices never decide another key's requests. A caller without a principal (an HTTP request
that no key check let through) has no memory.

Within one MCP session of a principal (a stateless HTTP client's requests share one slot per key), after
a ``resolve_intent``, the next ``window_calls`` gateway calls are watched: the power the agent activates
(one of the candidates shown, or the one the gateway activated), then a successful call of a tool the
answer named for that power (one the resolver matched for the request, or the remembered one). That
confirms the choice: the request's embedding (with its arguments taken out), a hash of it, and the power
and tool are remembered in catalog.db (tool_selector/catalog/memory.py); the request's words only under
``memory.keep_text``. A caller whose key lacks the ``call`` scope neither confirms nor refutes.

A remembered choice is refuted when the agent goes back on it: it deactivates the power the memory
activated before a successful call, or it asks again for the same request in other words and then
chooses another power for it. "The same request in other words": asked before any tool was called after
the remembered decision (once the agent called a tool, failed or not, it acted on the answer: what it
asks next is a new request), not with other user's words when both carry them (``resolve_intent``'s
``request``), at least ``REPHRASING`` close and not the same query (a retry is no correction). A new,
different request refutes nothing: one after a tool call, one with other user's words, one less close.
(The same user's words alone do not make the same request: a message of two requests is asked as two.)

How a remembered choice changes a decision is tool_selector/route/memory.py. Recording is
bookkeeping: a write that fails (a full disk) is logged and never fails the agent's call. A damaged row
is skipped, logged once with its repair. Nothing here leaves the machine; ``tool-selector memory``
lists, shows, forgets and clears.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from services.root.container import Container
from tool_selector.catalog import memory as rows
from tool_selector.core.errors import ToolSelectorError
from tool_selector.core.models import Decision, MatchType, Resolution
from tool_selector.core.names import tool_of
from tool_selector.route.memory import (
    ChoiceIndex,
    MemoryModel,
    Recalled,
    Remembered,
    apply_memory,
)
from tool_selector.route.tiers import PowerInfo, tools_hash

logger = logging.getLogger(__name__)

LOCAL = rows.LOCAL  # the principal of the person over stdio
MAX_SESSIONS = 1_000  # sessions followed at once (an HTTP gateway); the oldest is dropped past it
MAX_PRINCIPALS = 64  # principals whose remembered choices are held in RAM at once; the least recent goes
# a new request at least this close to the last one (not the same words), which the memory decided,
# rephrases it: if the agent then chooses another power for it, the remembered choice is refuted. On the
# six personal setups (relevance model, arguments taken out): a request and its second phrasing are
# >= 0.6 in 51 % of pairs (median 0.60); two different requests of different powers in 0.08 % (of 26,003),
# of the same power in 3.7 % (which choose the same power, so refute nothing). docs/measurements.md
REPHRASING = 0.6
NAMED_WHEN_NONE_MATCHED = 3  # a power the resolver matched no tool of: the answer names its first tools

Observer = Callable[[str, "Recalled | None", float], None]


@dataclass
class _Pending:
    """A session's last resolve_intent, waiting for its choice to be confirmed."""

    principal: str
    vector: np.ndarray
    request_hash: str
    request: str
    named: dict[str, frozenset[str]]  # each power the answer showed -> the tools it named for it
    hashes: dict[str, str]
    chosen: str | None = None
    fired: Recalled | None = None  # the remembered choice that made this decision
    doubted: Recalled | None = None  # one that decided a request this one rephrases
    calls: int = 0
    words: str | None = None  # the hash of the user's own words, when the agent gave them
    called: bool = False  # a tool was called since: the agent acted on this answer


@dataclass
class _Loaded:
    generation: int = -1
    index: ChoiceIndex = field(default_factory=lambda: ChoiceIndex([], np.zeros((0, 0), np.float32)))


def request_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()


def _remembered(choice: rows.Choice) -> Remembered:
    return Remembered(
        choice.id,
        choice.power,
        choice.tool,
        choice.tools_hash,
        choice.confirmed,
        choice.refuted,
        choice.confirmed_time,
    )


def named_tools(
    resolution: Resolution, decision: Decision, powers: Mapping[str, PowerInfo], fired: Recalled | None
) -> dict[str, frozenset[str]]:
    """The tools the answer names per power it shows: the resolver's matches for the request on that power
    (the ``tools`` a match lists, at most five), the remembered tool of a remembered activation; a power
    the resolver matched no tool of is named by its first tools, as the answer's message names it."""
    shown = [m.power for m in decision.matches or []] + ([decision.power] if decision.power else [])
    matched = {p.name: [tool_of(t) for t in p.tools[:5]] for p in resolution.powers}
    named: dict[str, frozenset[str]] = {}
    for power in dict.fromkeys(shown):
        info = powers.get(power)
        own = {t.name for t in info.tools} if info is not None else set()
        tools = {t for t in matched.get(power, []) if t in own}
        if fired is not None and fired.choice.power == power and decision.match_type == MatchType.REMEMBERED:
            tools.add(fired.choice.tool)
        if not tools and info is not None:
            tools = {t.name for t in info.tools[:NAMED_WHEN_NONE_MATCHED]}
        named[power] = frozenset(tools)
    return named


class ChoiceMemory:
    """One per gateway process. ``decide`` applies a principal's memory to a decision; the ``on_*``
    methods are a session's events (a session is named by its id and its principal). Thread-safe
    (resolves run in worker threads)."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self.settings = container.settings.memory
        self._lock = threading.Lock()
        self._loaded: OrderedDict[str, _Loaded] = OrderedDict()
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._warned: set[int] = set()  # damaged rows already logged
        self.model: MemoryModel | None = container.memory_model
        self.apply = True  # False: judge and tell the observer, change nothing (the lab's fitting replays)
        self.observer: Observer | None = None
        # the powers this gateway may start (set by GatewayService: its configured servers); a remembered
        # choice of any other power (removed from the configuration, or only in the catalog) is not used.
        # None: every power of the catalog (the lab's replays, whose catalogs cannot run)
        self.runnable: Callable[[], Collection[str]] | None = None
        self._hashes: tuple[Mapping[str, PowerInfo], dict[str, str]] = ({}, {})

    def _hash_of(self, powers: Mapping[str, PowerInfo], name: str) -> str:
        """``tools_hash`` of a power of this directory, computed once per directory (a new index brings a
        new directory object; the old one is held here so its id cannot be reused meanwhile)."""
        directory, hashes = self._hashes
        if directory is not powers:
            directory, hashes = powers, {}
            self._hashes = (directory, hashes)
        if name not in hashes:
            hashes[name] = tools_hash(powers[name])
        return hashes[name]

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    # -- the memory in RAM ---------------------------------------------------------------------------

    def _problem(self, choice: rows.Choice) -> str | None:
        embedder = self.container.embedder
        if choice.problem is None and choice.vector.shape[0] != embedder.dim:
            return f"its vector has {choice.vector.shape[0]} values, not the model's {embedder.dim}"
        return choice.problem

    def _usable(self, choice: rows.Choice) -> bool:
        """Whether the row can be recalled; a damaged one is logged once, with its repair."""
        problem = self._problem(choice)
        if problem is not None and choice.id not in self._warned:
            self._warned.add(choice.id)
            logger.warning(
                "remembered choice %d is damaged and is not used: %s. Repair: tool-selector memory forget %d",
                choice.id,
                problem,
                choice.id,
            )
        return problem is None

    def index(self, principal: str = LOCAL) -> ChoiceIndex:
        """The principal's remembered choices of this embedding model, read again only when a write of
        another process changed that principal's memory (another principal's writes do not; this
        process's own writes are followed in RAM: ``_follow``)."""
        database = self.container.store.database
        current = rows.generation(database, principal)
        with self._lock:
            loaded = self._loaded.get(principal)
            if loaded is not None and current == loaded.generation >= 0:
                self._loaded.move_to_end(principal)
                return loaded.index
        model = self.container.embedder.model_id
        usable = [c for c in rows.list_choices(database, principal=principal, model=model) if self._usable(c)]
        index = ChoiceIndex(
            [_remembered(c) for c in usable],
            np.stack([c.vector for c in usable]) if usable else np.zeros((0, 0), np.float32),
        )
        with self._lock:
            self._loaded[principal] = _Loaded(current, index)
            self._loaded.move_to_end(principal)
            while len(self._loaded) > MAX_PRINCIPALS:
                self._loaded.popitem(last=False)
        return index

    def _follow(self, written: rows.Written | None) -> None:
        """This process's own write, applied to the principal's memory in RAM when nothing else wrote
        since it was read (else the next look reads it all again)."""
        if written is None:
            return
        choice = written.choice
        put, drop = [], list(written.evicted)
        if choice is not None and choice.model == self.container.embedder.model_id and self._usable(choice):
            put.append((_remembered(choice), choice.vector))
        elif choice is not None:
            drop.append(choice.id)
        with self._lock:
            loaded = self._loaded.get(written.principal)
            if loaded is not None and loaded.generation == written.generation - 1:
                self._loaded[written.principal] = _Loaded(written.generation, loaded.index.changed(put, drop))

    # -- the decision --------------------------------------------------------------------------------

    def decide(
        self,
        session: str,
        resolution: Resolution,
        decision: Decision,
        powers: Mapping[str, PowerInfo],
        *,
        principal: str | None = LOCAL,
    ) -> tuple[Decision, Recalled | None]:
        """The decision with the principal's memory applied (unchanged when it has nothing to say), and
        the choice that changed it. No principal, no memory."""
        vector = resolution.vector
        # only a request the resolver found candidates for and could not settle: never an activation it
        # made, never one it found nothing for (not_found), never a request of several steps
        undecided = decision.status in ("multiple_matches", "weak_matches")
        if not self.enabled or principal is None or not undecided or decision.parts or vector is None:
            return decision, None
        allowed = self.runnable() if self.runnable is not None else None
        ranked = [p.name for p in resolution.powers if allowed is None or p.name in allowed]
        top3 = max(resolution.top3_confidence, resolution.confidence)
        recalled = self.index(principal).recall(
            vector,
            ranked,
            powers,
            top3,
            max_age_days=self.settings.max_age_days,
            hash_of=lambda name: self._hash_of(powers, name),
        )
        probability = 0.0
        if recalled is not None and self.model is not None:
            probability = self.model.probability(recalled.features)
        if self.observer is not None:
            self.observer(session, recalled, probability)
        if recalled is None or not self.apply:
            return decision, None
        thresholds = self.container.settings.confidence.thresholds
        changed = apply_memory(decision, recalled, probability, powers, thresholds)
        return changed, (recalled if changed is not decision else None)

    # -- a session's events --------------------------------------------------------------------------

    def _write(self, what: str, write: Callable[[], rows.Written | None]) -> None:
        """A write of the memory, followed in RAM; one that fails (a full disk, a locked database) is
        logged, never raised: the memory is bookkeeping, and what the agent asked for has been done."""
        try:
            written = write()
        except Exception as exc:  # a StoreError says it all; anything else shows where it came from
            unexpected = not isinstance(exc, ToolSelectorError)
            logger.warning(
                "could not %s in the memory of confirmed choices: %s", what, exc, exc_info=unexpected
            )
            return
        self._follow(written)

    def _refute(self, choice: Recalled) -> None:
        self._write(
            "count a refutation", lambda: rows.refute(self.container.store.database, choice.choice.id)
        )

    @staticmethod
    def _doubted(before: _Pending | None, resolution: Resolution, words: str | None) -> Recalled | None:
        """The remembered choice that decided the session's last request (or one it rephrased) when this
        request asks for the same thing in other words: before any tool was called after it, not with
        other user's words (``words``, a hash, when both requests carry them), at least ``REPHRASING``
        close; a retry of the same query is no correction. Anything else is a new request: no doubt."""
        if before is None or before.called or resolution.vector is None:
            return None  # after a tool call the agent has acted on the answer: this is a new request
        if words is not None and before.words is not None and words != before.words:
            return None  # the user said something else: a new request, however close the queries
        if request_hash(resolution.query) == before.request_hash:
            return before.doubted  # the same query again: what was in doubt still is, nothing more
        suspect = before.fired or before.doubted
        close = float(before.vector @ np.asarray(resolution.vector, dtype=np.float32)) >= REPHRASING
        return suspect if close else None

    def on_resolve(
        self,
        session: str,
        resolution: Resolution,
        decision: Decision,
        powers: Mapping[str, PowerInfo],
        fired: Recalled | None,
        *,
        principal: str | None = LOCAL,
        confirms: bool = True,
        words: str | None = None,
    ) -> None:
        """A resolve_intent answered: what it showed waits for the agent's choice. ``confirms``: whether
        the caller may run tools (the ``call`` scope); one that may not leaves nothing to confirm or
        refute. ``words``: the user's own words when the agent gave them (``request``), beside its query."""
        if not self.enabled or principal is None:
            return
        with self._lock:
            before = self._pending.pop((principal, session), None)
        named = named_tools(resolution, decision, powers, fired)
        if not confirms or resolution.vector is None or decision.parts or not named:
            return
        words_hash = request_hash(words) if words is not None else None
        doubted = self._doubted(before, resolution, words_hash)
        if doubted is not None and fired is not None and doubted.choice.id == fired.choice.id:
            doubted = None  # decided by the same choice again: deactivating it refutes it
        pending = _Pending(
            principal=principal,
            vector=np.asarray(resolution.vector, dtype=np.float32),
            request_hash=request_hash(resolution.query),
            request=resolution.query,
            named=named,
            hashes={p: self._hash_of(powers, p) for p in named if p in powers},
            chosen=decision.power if decision.status == "activated" else None,
            fired=fired,
            doubted=doubted,
            words=words_hash,
        )
        with self._lock:
            if len(self._pending) >= MAX_SESSIONS:
                self._pending.pop(next(iter(self._pending)))
            self._pending[(principal, session)] = pending

    def _current(self, session: str, principal: str | None) -> _Pending | None:
        """The session's pending choice, counting this call against its window."""
        if principal is None:
            return None
        key = (principal, session)
        with self._lock:
            pending = self._pending.get(key)
            if pending is None:
                return None
            pending.calls += 1
            if pending.calls > self.settings.window_calls:
                del self._pending[key]
                return None
            return pending

    def _chose(self, pending: _Pending, power: str) -> None:
        """The agent chose ``power`` for a request that rephrased one the memory decided: another power
        than the remembered one refutes it; the same one clears the doubt."""
        with self._lock:
            doubted, pending.doubted = pending.doubted, None
        if doubted is not None and doubted.choice.power != power:
            self._refute(doubted)

    def on_activate(self, session: str, power: str, *, principal: str | None = LOCAL) -> None:
        pending = self._current(session, principal)
        if pending is not None and power in pending.named:
            pending.chosen = power
            self._chose(pending, power)

    def on_deactivate(self, session: str, power: str, *, principal: str | None = LOCAL) -> None:
        pending = self._current(session, principal)
        if pending is None or pending.chosen != power:
            return
        with self._lock:
            self._pending.pop((pending.principal, session), None)
        if pending.fired is not None and pending.fired.choice.power == power:
            self._refute(pending.fired)

    def on_call(
        self, session: str, power: str, tool: str, *, ok: bool, principal: str | None = LOCAL
    ) -> None:
        """A tool call through the gateway; a successful call of a tool the answer named for the chosen
        power (or, when none was chosen yet, for a power it showed: calling its tool is choosing it)
        confirms the choice."""
        pending = self._current(session, principal)
        if pending is None:
            return
        pending.called = True  # whatever the agent asks next is a new request
        if not ok or power not in pending.hashes or tool not in pending.named[power]:
            return
        if pending.chosen not in (None, power):  # another power was chosen for this request
            return
        with self._lock:
            self._pending.pop((pending.principal, session), None)
        self._chose(pending, power)
        self._write(
            "remember a confirmed choice",
            lambda: rows.confirm(
                self.container.store.database,
                request_hash=pending.request_hash,
                power=power,
                tool=tool,
                tools_hash=pending.hashes[power],
                model=self.container.embedder.model_id,
                vector=pending.vector,
                request=pending.request if self.settings.keep_text else None,
                principal=pending.principal,
                max_rows=self.settings.max_choices,
            ),
        )

    def on_other(self, session: str, *, principal: str | None = LOCAL) -> None:
        """Any other gateway call: it counts against the window."""
        self._current(session, principal)
