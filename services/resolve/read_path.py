"""The read path: a query to its ranked candidates and its whole decision (``ReadPath.decide``), the one
verb every reader calls: the REST API, the MCP gateway, the CLI and the lab.

Inside it, in order:
- the index snapshot it reads (services/resolve/snapshot.py: the power directory and the catalog's
  words), looked at again when a newer index has been marked;
- the answer cache: answers are deterministic for one index, and agents repeat queries; it empties when
  the index changes;
- the resolve (stage 4, tool_selector/resolve) and the route (stage 5, tool_selector/route, which adds a
  multi-step request's steps): the decision leaves the route stage whole;
- the caller's ``revise`` hook, if any, with the directory of the same snapshot (the gateway applies its
  memory of confirmed choices there): never cached, since it is the caller's own.

A long-running process (``ReadPath(container)``) looks at the index's mark (one SQLite read) at most
every ``index_check_s`` seconds, in the caller's thread: the REST API calls from its thread pool and the
gateway from a worker thread, never on the event loop. When another process (a nightly sync, another
API worker) or a write of this one marked a new index, the backend reloads, a new snapshot is built and
the answer cache empties: in every process within ``index_check_s`` of the mark, at once in the process
that wrote. A command that runs once (``ReadPath.fixed``) reads the index as it is and never looks again.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from services.resolve.snapshot import IndexSnapshot
from services.root.container import Container
from tool_selector.core.choices import SearchMode
from tool_selector.core.errors import IndexDamagedError, IndexMissingError
from tool_selector.core.models import Decision, Resolution
from tool_selector.index.mark import indexed_seq
from tool_selector.route.steps import with_known_parts
from tool_selector.route.tiers import PowerInfo, route

logger = logging.getLogger(__name__)
UPDATE_MIN, UPDATE_SHARE = 64, 0.05  # a new index is read by what changed when at most this many servers did


class Answer(NamedTuple):
    """What the read path answers: the ranked candidates and the whole decision made from them."""

    resolution: Resolution
    decision: Decision


# The caller's revision of a decision: given the resolution, the decision and the power directory they
# were made with, the decision to answer with.
Revise = Callable[[Resolution, Decision, Mapping[str, PowerInfo]], Decision]
_Key = tuple[str, str | None, str, int]  # query, request, mode, limit


class ReadPath:
    """One read path over the index, kept in line with it, with an optional answer cache.

    ``writing`` says whether a write is under way (by default: whether any process holds the data
    folder's writer lock): the catalog is then ahead of the index for a moment, and the read path
    serves the index it has instead of refusing.
    """

    def __init__(
        self,
        container: Container,
        *,
        check_s: float | None = None,
        cache_size: int = 0,
        writing: Callable[[], bool] | None = None,
    ) -> None:
        self.container = container
        self._check_s = container.settings.index_check_s if check_s is None else check_s
        self._cache_size = cache_size
        self._writing = container.write_lock.busy if writing is None else writing
        self._snapshot: IndexSnapshot | None = None
        self._built_for: int | None = None  # the mark the snapshot was built for (None: look again)
        self._checked_at = -math.inf
        self._lock = threading.Lock()
        # each answer with the snapshot it was made with, so that a revision reads that directory
        self._answers: OrderedDict[_Key, tuple[IndexSnapshot, Answer]] = OrderedDict()
        self._answers_lock = threading.Lock()
        self.generation = 0  # grows with each new snapshot; views derived from the catalog follow it

    @classmethod
    def fixed(cls, container: Container, *, allow_stale: bool = False) -> ReadPath:
        """The index as it is now, never looked at again: for a command that runs once (the CLI, the lab).
        Refuses, saying what to do, an index that is missing, empty or (unless ``allow_stale``) older
        than the catalog."""
        path = cls(container, check_s=math.inf)
        path._snapshot = IndexSnapshot(container, allow_stale=allow_stale)
        path._checked_at = time.monotonic()
        path.generation = 1
        return path

    def snapshot(self) -> IndexSnapshot:
        """The current snapshot; looks for a newer index when ``check_s`` has passed."""
        snapshot = self._snapshot
        if snapshot is not None and time.monotonic() - self._checked_at < self._check_s:
            return snapshot
        with self._lock:
            if self._snapshot is not None and time.monotonic() - self._checked_at < self._check_s:
                return self._snapshot
            self._checked_at = time.monotonic()
            mark = indexed_seq(self.container)
            if self._snapshot is None or mark != self._built_for:
                self._reload(mark)
            assert self._snapshot is not None
            return self._snapshot

    def _reload(self, mark: int | None) -> None:
        self.container.backend.refresh()
        writing = self._writing()
        try:
            updated = self._updated(mark, writing)
            fresh = updated or IndexSnapshot(self.container, allow_stale=writing)
        except IndexDamagedError:
            # the backend now holds nothing to serve: forget the snapshot, so that every read looks
            # again and picks up the repair (`index rebuild` keeps the mark, so the mark cannot tell)
            self._snapshot, self._built_for = None, None
            with self._answers_lock:
                self._answers.clear()
            raise
        except IndexMissingError:
            if self._snapshot is None:
                raise
            # marked, then the catalog moved on again (a sync mid-way): keep serving what we have
            logger.warning("the index changed but is not current yet; still serving the previous one")
            return
        if self._snapshot is not None:
            logger.info("the index changed; now resolving against the new one")
        self._snapshot = fresh
        self._built_for = None if writing else mark
        if updated is None:
            # a snapshot of 100k tools is millions of long-lived objects, which every full collection
            # walked again (2-4.7 s, measured inside a request): the collector skips them from now on
            # (what the old snapshot held is still freed, by reference counting, when it goes)
            gc.freeze()
        self.generation += 1
        with self._answers_lock:
            self._answers.clear()

    def _updated(self, mark: int | None, writing: bool) -> IndexSnapshot | None:
        """The snapshot brought up to date with the servers changed since it was built, when the change
        log still says which and they are few; None: build it anew."""
        previous, built = self._snapshot, self._built_for
        if previous is None or built is None or mark is None:
            return None
        changed = self.container.store.servers_changed_since(built)
        if changed is None or len(changed) > max(UPDATE_MIN, UPDATE_SHARE * len(previous.powers)):
            return None
        return IndexSnapshot.updated(previous, changed, allow_stale=writing)

    def expire(self) -> None:
        """Look for a new index at the next read (after a write of this process)."""
        self._checked_at = -math.inf

    def decide(
        self,
        query: str,
        *,
        mode: SearchMode = "hybrid",
        limit: int = 10,
        request: str | None = None,
        revise: Revise | None = None,
    ) -> Answer:
        """The ranked candidates (``limit`` tools and ``limit`` powers) and the whole decision for
        ``query``, from the cache when it has them, then ``revise`` applied to the decision.
        ``request``: the user's own words beside the agent's query, for the resolver to read."""
        snapshot = self.snapshot()
        key: _Key = (query, request, mode, limit)
        found = self._remembered(key) if self._cache_size else None
        if found is not None:
            snapshot, answer = found
        else:
            answer = self._answer(snapshot, query, mode=mode, limit=limit, request=request)
            if self._cache_size:
                with self._answers_lock:
                    if snapshot is self._snapshot:  # not computed against an index replaced meanwhile
                        self._answers[key] = (snapshot, answer)
                        while len(self._answers) > self._cache_size:
                            self._answers.popitem(last=False)
        if revise is None:
            return answer
        return Answer(answer.resolution, revise(answer.resolution, answer.decision, snapshot.powers))

    def _answer(
        self, snapshot: IndexSnapshot, query: str, *, mode: SearchMode, limit: int, request: str | None
    ) -> Answer:
        """One resolve and the route of its resolution (for a multi-step request, the parts keep only the
        powers and tools the snapshot's directory holds, as the decision's steps do)."""
        options: dict[str, Any] = {} if request is None else {"request": request}
        resolution = self.container.resolver.resolve(
            query, snapshot.terms, mode=mode, tools=limit, powers=limit, **options
        )
        resolution = with_known_parts(resolution, snapshot.powers)
        return Answer(
            resolution, route(resolution, snapshot.powers, self.container.settings.confidence.thresholds)
        )

    def cached_answer(
        self, query: str, mode: SearchMode, limit: int, request: str | None = None
    ) -> Answer | None:
        """The answer to a query asked before against the same index, without any I/O, so an event loop
        may call it: None when not remembered, or when the index is due to be looked at (the caller
        then goes through ``decide`` in a worker thread, which looks)."""
        if self._snapshot is None or time.monotonic() - self._checked_at >= self._check_s:
            return None
        found = self._remembered((query, request, mode, limit))
        return None if found is None else found[1]

    def _remembered(self, key: _Key) -> tuple[IndexSnapshot, Answer] | None:
        with self._answers_lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found
