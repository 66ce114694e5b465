"""The use cases behind the REST API, for one long-running process among any number on a data folder.

Reads (resolve, search, status) run concurrently and take no lock. Writes (registration, import, sync,
re-profile) hold the data folder's writer lock (tool_selector/catalog/writelock.py), shared with the other
API processes, the CLI and the sync, so two of them never interleave; a write waits for it up to
``api.write_wait_s`` (unset: ``write_lock_timeout_s``) and then fails with LockedError (409) naming
the holder: its pid, command, what it does and since when.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, TypeVar

import anyio
from pydantic import BaseModel, Field

from services.access.keys import Principal, check_still_valid
from services.api.jobs import JobRunner
from services.resolve.read_path import Answer, ReadPath
from services.root.container import Container
from services.write import importing, registry
from services.write.sync import SyncSummary, last_sync, run_sync
from tool_selector.catalog import admin
from tool_selector.catalog.admin import AuditRecord, JobRecord, JobState
from tool_selector.catalog.browse import BrowseState, ToolRow, browse_tools
from tool_selector.catalog_files.batch import ImportBatch
from tool_selector.core.choices import SearchMode
from tool_selector.core.models import DiscoveryStatus, ServerProfile, ServerRecord, ToolCandidate, ToolRecord
from tool_selector.index.mark import index_is_current

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ToolEnrichmentState(BaseModel):
    id: str
    name: str
    content_hash: str
    enrichment: Literal["current", "stale", "missing"]
    enricher: str | None = None
    updated_at: datetime


class ServerStatus(BaseModel):
    name: str
    creation_method: str
    description: str
    content_hash: str
    profile_hash: str | None
    profile_last_updated: datetime | None
    profiler: str | None
    profile: ServerProfile | None
    updated_at: datetime
    discovery: DiscoveryStatus | None
    enrichment: dict[str, int] = Field(description="tools per state: current, stale, missing")
    tools: list[ToolEnrichmentState]


class EnrichmentStats(BaseModel):
    servers: int
    tools: int
    servers_profiled: int
    tools_enriched: dict[str, int] = Field(description="current, stale, missing")
    enrichers: dict[str, int] = Field(description="current enrichments per enricher")
    discovery: dict[str, int] = Field(description="configured servers per state: ok, stale, failed")
    index_current: bool
    last_sync: SyncSummary | None
    quarantined: list[str] = Field(
        default_factory=list, description="tools held until approved (at most 200); GET /api/v1/quarantine"
    )


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    backend: str
    backend_reachable: bool
    backend_error: str = ""
    indexed_tools: int
    index_current: bool
    last_sync_at: datetime | None
    last_sync_ok: bool | None
    stale_servers: list[str]
    failed_servers: list[str]
    quarantined: list[str] = Field(
        default_factory=list,
        description="tools held until approved (at most 200): out of the index and the gateway; "
        "GET /api/v1/quarantine shows why",
    )
    warm: bool = Field(
        default=False,
        description="the process has loaded its index and model since it started (in the background): "
        "its first resolve will not wait for them",
    )


class Operations:
    def __init__(self, container: Container) -> None:
        self.container = container
        self.jobs = JobRunner(container)
        self.read_path = ReadPath(container, cache_size=container.settings.api.answer_cache_size)
        self.warm = threading.Event()  # set once warm_up has loaded the index and the model (or given up)
        # resolves that miss the answer cache running at once, in threads (api.resolve_threads): this
        # process's, whichever app serves it
        self.resolving = anyio.CapacityLimiter(container.settings.api.resolve_threads)

    def close(self) -> None:
        self.jobs.close()

    def warm_up(self) -> None:
        """Load the index and the model and run one resolve, so that the first request (a person opening
        the console, an agent's first resolve) does not wait for them. Never raises: a missing index is
        reported by the requests themselves."""
        try:
            self.read_path.decide("warm up")
        except Exception as exc:  # the routes say what is wrong, with what to do
            logger.info("warm-up skipped: %s", exc)
        finally:
            self.warm.set()

    # -- writes ----------------------------------------------------------------------------------

    @contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        try:
            with self.container.writing(what, wait_s=self.container.settings.api.write_wait_s):
                yield
        finally:
            self.read_path.expire()  # look for the new index at the next read

    def write(self, what: str, work: Callable[[], T], who: Principal) -> T:
        """``work`` under the writer lock, once ``who``'s key is checked again (it may have been revoked
        since the request began)."""
        with self._writing(what):
            check_still_valid(self.container.store, who)
            return work()

    def submit(
        self, kind: str, who: Principal, work: Callable[[Callable[[str, int, int], None]], BaseModel]
    ) -> JobRecord:
        def locked(progress: Callable[[str, int, int], None]) -> BaseModel:
            with self._writing(f"{kind} job"):
                check_still_valid(self.container.store, who)  # the key may have been revoked while it waited
                return work(progress)

        return self.jobs.submit(kind, who.actor, locked)

    def submit_sync(self, who: Principal) -> JobRecord:
        return self.submit("sync", who, lambda progress: run_sync(self.container, progress=progress))

    def submit_import(
        self, batch: ImportBatch, *, mode: registry.MatchingMode, scope: registry.MatchScope, who: Principal
    ) -> JobRecord:
        return self.submit(
            "import",
            who,
            lambda _: importing.import_batch(self.container, batch, mode=mode, scope=scope, actor=who.actor),
        )

    def reprofile(self, name: str, who: Principal) -> ServerStatus:
        registry.require_server_named(self.container.store, name)
        force = frozenset({name})
        self.write(f"re-profile of {name}", lambda: registry.refresh(self.container, force=force), who)
        return self.server_status(name)

    # -- reads -----------------------------------------------------------------------------------

    def audit(
        self, *, limit: int, before_seq: int | None, actor: str | None, target: str | None
    ) -> list[AuditRecord]:
        """Every mutation, newest first (a page of ``limit`` below ``before_seq``), filtered."""
        store = self.container.store
        return admin.read_audit(store, limit=limit, before_seq=before_seq, actor=actor, target=target)

    def list_jobs(
        self, *, kind: str | None, state: JobState | None, limit: int, offset: int
    ) -> tuple[int, list[JobRecord]]:
        return admin.list_jobs(self.container.store, kind=kind, state=state, limit=limit, offset=offset)

    def browse_tools(
        self, *, text: str | None, server: str | None, state: BrowseState | None, limit: int, offset: int
    ) -> tuple[int, list[ToolRow]]:
        """A page of the catalog's tools for the console, filtered by words, server and approval state."""
        return browse_tools(
            self.container.store, text=text, server=server, state=state, limit=limit, offset=offset
        )

    def cached_answer(self, query: str, mode: SearchMode, limit: int) -> Answer | None:
        return self.read_path.cached_answer(query, mode, limit)

    def resolve(self, query: str, mode: SearchMode, limit: int) -> Answer:
        return self.read_path.decide(query, mode=mode, limit=limit)

    def search_tools(self, query: str, mode: SearchMode, limit: int) -> list[ToolCandidate]:
        return self.read_path.decide(query, mode=mode, limit=limit).resolution.tools[:limit]

    def tool(self, tool_id: str) -> ToolRecord:
        return self.container.store.get_tool(tool_id)

    def require_tool(self, tool_id: str) -> ToolRecord:
        """The tool, or NotFoundError saying how tool ids read and how to find or register one."""
        return registry.require_tool(self.container.store, tool_id)

    def require_server(self, name: str) -> ServerRecord:
        """The server, or NotFoundError saying how to register one."""
        return registry.require_server_named(self.container.store, name)

    def server_status(self, name: str) -> ServerStatus:
        store = self.container.store
        server = registry.require_server_named(store, name)
        profile = store.get_profile(name)
        states: list[ToolEnrichmentState] = []
        for tool in store.list_tools(name):
            enrichment = store.get_enrichment(tool.id)
            state: Literal["current", "stale", "missing"] = (
                "missing"
                if enrichment is None
                else "current"
                if enrichment.tool_hash == tool.content_hash
                else "stale"
            )
            states.append(
                ToolEnrichmentState(
                    id=tool.id,
                    name=tool.name,
                    content_hash=tool.content_hash,
                    enrichment=state,
                    enricher=enrichment.enricher if enrichment else None,
                    updated_at=tool.updated_at,
                )
            )
        counts = {k: sum(1 for t in states if t.enrichment == k) for k in ("current", "stale", "missing")}
        return ServerStatus(
            name=name,
            creation_method=server.creation_method.value,
            description=server.description,
            content_hash=server.content_hash,
            profile_hash=profile.profile_hash if profile else None,
            profile_last_updated=profile.last_updated if profile else None,
            profiler=profile.profiler if profile else None,
            profile=profile,
            updated_at=server.updated_at,
            discovery=store.get_discovery().get(name),
            enrichment=counts,
            tools=states,
        )

    def enrichment_stats(self) -> EnrichmentStats:
        store = self.container.store
        tools = store.list_tools()
        enrichments = store.get_enrichments()
        states = {"current": 0, "stale": 0, "missing": 0}
        enrichers: dict[str, int] = {}
        for tool in tools:
            e = enrichments.get(tool.id)
            if e is None:
                states["missing"] += 1
            elif e.tool_hash == tool.content_hash:
                states["current"] += 1
                enrichers[e.enricher] = enrichers.get(e.enricher, 0) + 1
            else:
                states["stale"] += 1
        discovery: dict[str, int] = {"ok": 0, "stale": 0, "failed": 0}
        for status in store.get_discovery().values():
            discovery[status.state] += 1
        servers, _ = store.counts()
        return EnrichmentStats(
            servers=servers,
            tools=len(tools),
            servers_profiled=len(store.get_profiles()),
            tools_enriched=states,
            enrichers=enrichers,
            discovery=discovery,
            index_current=index_is_current(self.container),
            last_sync=last_sync(store),
            quarantined=sorted(store.held_tool_ids())[:200],
        )

    def health(self) -> Health:
        store = self.container.store
        reachable, error, indexed = True, "", 0
        try:
            indexed = self.container.backend.count()
        except Exception as exc:  # health reports, it does not raise
            reachable, error = False, f"{type(exc).__name__}: {exc}"
        statuses = store.get_discovery().values()
        raw = store.get_meta("last_sync")
        synced = None if raw is None else SyncSummary.model_validate_json(raw)
        sync_at = self._last_sync_at(store)
        index_current = index_is_current(self.container)
        return Health(
            status="ok" if reachable and indexed > 0 and index_current else "degraded",
            backend=self.container.settings.backend,
            backend_reachable=reachable,
            backend_error=error,
            indexed_tools=indexed,
            index_current=index_current,
            last_sync_at=sync_at,
            last_sync_ok=None if synced is None else synced.ok,
            stale_servers=sorted(s.server for s in statuses if s.state == "stale"),
            failed_servers=sorted(s.server for s in statuses if s.state == "failed"),
            quarantined=sorted(store.held_tool_ids())[:200],
            warm=self.warm.is_set(),
        )

    @staticmethod
    def _last_sync_at(store: Any) -> datetime | None:
        value = store.get_meta("last_sync_at")
        return None if value is None else datetime.fromisoformat(value)
