"""The live resolver: what a long-running process (the REST API, the MCP gateway) resolves with.

One owner, for both adapters, of "has a newer index been marked since we last looked?". At most
every ``index_check_s`` seconds a read looks at the index's mark (one SQLite read). It does so in the
caller's thread: the REST API calls from its thread pool and the gateway from a worker thread, never
on the event loop. When another process (a nightly sync, another API worker) or a write of this one
marked a new index, the backend reloads, a new ``ResolveService`` is built and the answer cache
empties: in every process within ``index_check_s`` of the mark, at once in the process that wrote.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from services.resolve.resolving import ResolveService
from services.shared.container import Container
from services.shared.indexing import indexed_seq
from tool_selector.core.errors import IndexDamagedError, IndexMissingError
from tool_selector.core.models import Decision, Resolution, SearchMode

logger = logging.getLogger(__name__)
UPDATE_MIN, UPDATE_SHARE = 64, 0.05  # a new index is read by what changed when at most this many servers did

Answer = tuple[Resolution, Decision]


class LiveResolver:
    """A ``ResolveService`` kept in line with the index, and an optional answer cache.

    ``writing`` says whether a write is under way (by default: whether any process holds the data
    folder's writer lock): the catalog is then ahead of the index for a moment, and the resolver
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
        self._service: ResolveService | None = None
        self._built_for: int | None = None  # the mark the service was built for (None: look again)
        self._checked_at = -math.inf
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple[str, str, int], Answer] = OrderedDict()
        self._answers_lock = threading.Lock()
        self.generation = 0  # grows with each new service; views derived from the catalog follow it

    def service(self) -> ResolveService:
        """The current resolve service; looks for a newer index when ``check_s`` has passed."""
        service = self._service
        if service is not None and time.monotonic() - self._checked_at < self._check_s:
            return service
        with self._lock:
            if self._service is not None and time.monotonic() - self._checked_at < self._check_s:
                return self._service
            self._checked_at = time.monotonic()
            mark = indexed_seq(self.container)
            if self._service is None or mark != self._built_for:
                self._reload(mark)
            assert self._service is not None
            return self._service

    def _reload(self, mark: int | None) -> None:
        self.container.backend.refresh()
        writing = self._writing()
        try:
            updated = self._updated(mark, writing)
            fresh = updated or ResolveService(self.container, allow_stale=writing)
        except IndexDamagedError:
            # the backend now holds nothing to serve: forget the service, so that every read looks
            # again and picks up the repair (`index rebuild` keeps the mark, so the mark cannot tell)
            self._service, self._built_for = None, None
            with self._answers_lock:
                self._answers.clear()
            raise
        except IndexMissingError:
            if self._service is None:
                raise
            # marked, then the catalog moved on again (a sync mid-way): keep serving what we have
            logger.warning("the index changed but is not current yet; still serving the previous one")
            return
        if self._service is not None:
            logger.info("the index changed; now resolving against the new one")
        self._service = fresh
        self._built_for = None if writing else mark
        if updated is None:
            # a service of 100k tools is millions of long-lived objects, which every full collection
            # walked again (2-4.7 s, measured inside a request): the collector skips them from now on
            # (what the old service held is still freed, by reference counting, when it goes)
            gc.freeze()
        self.generation += 1
        with self._answers_lock:
            self._answers.clear()

    def _updated(self, mark: int | None, writing: bool) -> ResolveService | None:
        """The service brought up to date with the servers changed since it was built, when the change
        log still says which and they are few; None: build it anew."""
        previous, built = self._service, self._built_for
        if previous is None or built is None or mark is None:
            return None
        changed = self.container.store.servers_changed_since(built)
        if changed is None or len(changed) > max(UPDATE_MIN, UPDATE_SHARE * len(previous.powers)):
            return None
        return ResolveService.updated(previous, changed, allow_stale=writing)

    def expire(self) -> None:
        """Look for a new index at the next read (after a write of this process)."""
        self._checked_at = -math.inf

    def resolve(
        self, query: str, *, mode: SearchMode = "hybrid", tools: int = 10, powers: int = 10
    ) -> Resolution:
        return self.service().resolve(query, mode=mode, tools=tools, powers=powers)

    def cached_answer(self, query: str, mode: SearchMode, limit: int) -> Answer | None:
        """The answer to a query asked before against the same index, without any I/O, so an event loop
        may call it: None when not remembered, or when the index is due to be looked at (the caller
        then goes through ``resolve_and_route`` in a worker thread, which looks)."""
        if self._service is None or time.monotonic() - self._checked_at >= self._check_s:
            return None
        return self._remembered((query, mode, limit))

    def _remembered(self, key: tuple[str, str, int]) -> Answer | None:
        with self._answers_lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found

    def resolve_and_route(self, query: str, *, mode: SearchMode = "hybrid", limit: int = 10) -> Answer:
        """The ranked candidates and the tiered decision (one resolve), from the cache when it has them.
        Answers are deterministic for one index, and agents repeat queries; the cache empties when the
        index changes."""
        service = self.service()
        found = self._remembered((query, mode, limit)) if self._cache_size else None
        if found is not None:
            return found
        answer = service.resolve_and_route(query, mode=mode, tools=limit, powers=limit)
        if self._cache_size:
            with self._answers_lock:
                if service is self._service:  # not computed against an index replaced meanwhile
                    self._answers[(query, mode, limit)] = answer
                    while len(self._answers) > self._cache_size:
                        self._answers.popitem(last=False)
        return answer

    def decide(self, query: str, *, mode: SearchMode = "hybrid") -> Decision:
        return self.resolve_and_route(query, mode=mode)[1]
