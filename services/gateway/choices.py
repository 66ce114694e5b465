"""The gateway's memory of confirmed choices: what it records from a session, and how a decision uses it.

Within one MCP session, after a ``resolve_intent``, the next ``window_calls`` gateway calls are watched:
the power the agent activates (one of the candidates shown, or the one the gateway activated), then a
tool of that power called without error. That confirms the choice: the request's embedding (with its
arguments taken out), a hash of it, and the power and tool are remembered in catalog.db
(tool_selector/catalog/choices.py); the request's words only under ``memory.keep_text``. When a decision
was made from memory and the agent then deactivates that power without a successful call, or asks
``resolve_intent`` again before one, the remembered choice is refuted once.

How a remembered choice changes a decision is tool_selector/route/remembered.py. Nothing here leaves
the machine; ``tool-selector memory`` lists, shows, forgets and clears.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources

import numpy as np

from services.shared.container import Container
from tool_selector.catalog import choices as rows
from tool_selector.core.models import Decision, Resolution
from tool_selector.route.remembered import (
    ChoiceIndex,
    MemoryModel,
    Recalled,
    Remembered,
    apply_memory,
)
from tool_selector.route.tiers import PowerInfo, tools_hash

MAX_SESSIONS = 1_000  # sessions followed at once (an HTTP gateway); the oldest is dropped past it
MODEL_FILE = "memory-v1.json"  # tool_selector/calibration/: eval/fitting/memory_fit.py writes it
REPHRASING = 0.5  # a new request at least this close to the last one, before a successful call, rephrases it

Observer = Callable[[str, "Recalled | None", float], None]


@cache
def shipped_model() -> MemoryModel | None:
    """The memory's judge shipped in the package (tool_selector/calibration/memory-v1.json); None only
    before the first ``lab memory-fit`` wrote it (then the memory records but never decides)."""
    found = resources.files("tool_selector.calibration").joinpath(MODEL_FILE)
    return MemoryModel.model_validate_json(found.read_text(encoding="utf-8")) if found.is_file() else None


@dataclass
class _Pending:
    """A session's last resolve_intent, waiting for its choice to be confirmed."""

    vector: np.ndarray
    request_hash: str
    request: str
    shown: frozenset[str]
    hashes: dict[str, str]
    chosen: str | None = None
    fired: Recalled | None = None
    calls: int = 0


@dataclass
class _Loaded:
    generation: int = -1
    index: ChoiceIndex = field(default_factory=lambda: ChoiceIndex([], np.zeros((0, 0), np.float32)))


def request_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()


class ChoiceMemory:
    """One per gateway process. ``decide`` applies the memory to a decision; the ``on_*`` methods are the
    session's events. Thread-safe (resolves run in worker threads)."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self.settings = container.settings.memory
        self._lock = threading.Lock()
        self._loaded = _Loaded()
        self._pending: dict[str, _Pending] = {}
        self.model: MemoryModel | None = shipped_model()
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

    def index(self) -> ChoiceIndex:
        """The remembered choices of this embedding model, read again when another write changed them."""
        database = self.container.store.database
        current = rows.generation(database)
        with self._lock:
            if current == self._loaded.generation:
                return self._loaded.index
        model = self.container.embedder.model_id
        found = [c for c in rows.list_choices(database) if c.model == model]
        index = ChoiceIndex(
            [
                Remembered(
                    c.id,
                    c.power,
                    c.tool,
                    c.tools_hash,
                    c.confirmed,
                    c.refuted,
                    datetime.fromisoformat(c.confirmed_at),
                )
                for c in found
            ],
            np.stack([c.vector for c in found]) if found else np.zeros((0, 0), np.float32),
        )
        with self._lock:
            self._loaded = _Loaded(current, index)
        return index

    # -- the decision --------------------------------------------------------------------------------

    def decide(
        self, session: str, resolution: Resolution, decision: Decision, powers: Mapping[str, PowerInfo]
    ) -> tuple[Decision, Recalled | None]:
        """The decision with the memory applied (unchanged when it has nothing to say), and the choice
        that changed it."""
        vector = resolution.vector
        # only a request the resolver found candidates for and could not settle: never an activation it
        # made, never one it found nothing for (not_found), never a request of several steps
        undecided = decision.status in ("multiple_matches", "weak_matches")
        if not self.enabled or not undecided or decision.parts or vector is None:
            return decision, None
        allowed = self.runnable() if self.runnable is not None else None
        ranked = [p.name for p in resolution.powers if allowed is None or p.name in allowed]
        top3 = max(resolution.top3_confidence, resolution.confidence)
        recalled = self.index().recall(
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
        thresholds = self.container.settings.thresholds
        changed = apply_memory(decision, recalled, probability, powers, thresholds)
        return changed, (recalled if changed is not decision else None)

    # -- a session's events --------------------------------------------------------------------------

    def on_resolve(
        self,
        session: str,
        resolution: Resolution,
        decision: Decision,
        powers: Mapping[str, PowerInfo],
        fired: Recalled | None,
    ) -> None:
        """A resolve_intent answered: what it showed waits for the agent's choice (a rephrasing before a
        successful call refutes a choice memory made)."""
        if not self.enabled:
            return
        with self._lock:
            before = self._pending.pop(session, None)
        if (
            before is not None
            and before.fired is not None
            and resolution.vector is not None
            and float(before.vector @ np.asarray(resolution.vector, dtype=np.float32)) >= REPHRASING
        ):
            rows.refute(self.container.store.database, before.fired.choice.id)
        shown = [m.power for m in decision.matches or []] + ([decision.power] if decision.power else [])
        if resolution.vector is None or decision.parts or not shown:
            return
        pending = _Pending(
            vector=np.asarray(resolution.vector, dtype=np.float32),
            request_hash=request_hash(resolution.query),
            request=resolution.query,
            shown=frozenset(shown),
            hashes={p: self._hash_of(powers, p) for p in shown if p in powers},
            chosen=decision.power if decision.status == "activated" else None,
            fired=fired,
        )
        with self._lock:
            if len(self._pending) >= MAX_SESSIONS:
                self._pending.pop(next(iter(self._pending)))
            self._pending[session] = pending

    def _current(self, session: str) -> _Pending | None:
        """The session's pending choice, counting this call against its window."""
        with self._lock:
            pending = self._pending.get(session)
            if pending is None:
                return None
            pending.calls += 1
            if pending.calls > self.settings.window_calls:
                del self._pending[session]
                return None
            return pending

    def on_activate(self, session: str, power: str) -> None:
        pending = self._current(session)
        if pending is not None and power in pending.shown:
            pending.chosen = power

    def on_deactivate(self, session: str, power: str) -> None:
        pending = self._current(session)
        if pending is None or pending.chosen != power:
            return
        with self._lock:
            self._pending.pop(session, None)
        if pending.fired is not None and pending.fired.choice.power == power:
            rows.refute(self.container.store.database, pending.fired.choice.id)

    def on_call(self, session: str, power: str, tool: str, *, ok: bool) -> None:
        """A tool call through the gateway; a successful one of the chosen power (or, when none was
        chosen yet, of a power the answer showed: calling its tool is choosing it) confirms the choice."""
        pending = self._current(session)
        if pending is None or not ok or power not in pending.hashes:
            return
        if pending.chosen not in (None, power):  # another power was chosen for this request
            return
        with self._lock:
            self._pending.pop(session, None)
        rows.remember(
            self.container.store.database,
            request_hash=pending.request_hash,
            power=power,
            tool=tool,
            tools_hash=pending.hashes[power],
            model=self.container.embedder.model_id,
            vector=pending.vector,
            request=pending.request if self.settings.keep_text else None,
        )

    def on_other(self, session: str) -> None:
        """Any other gateway call: it counts against the window."""
        self._current(session)
