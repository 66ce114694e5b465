"""Use case: stages 1-2 over the catalog store (profile every server, enrich every tool), incrementally.

Only servers whose profile hash changed (or whose profile is too old, or made by another profiler)
are profiled again, and only tools whose enrichment hash changed are enriched again. Results are
written as they come, a few servers in one transaction (at most ``SAVE_TOOLS`` tools or
``SAVE_SECONDS`` apart), so a run killed half-way keeps what it finished and the next run does the
rest.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from semantic_enrichment.base import Enrichers
from semantic_enrichment.cache import EnrichmentCache
from semantic_enrichment.enrichment import EnrichOutcome, enrich_server_tools, enrichment_hash_of
from semantic_enrichment.profiling import ProfileOutcome, compute_profile_hash, needs_profile, profile_server
from services.root.container import Container
from services.write.writing import writes
from tool_selector.core.errors import NotFoundError
from tool_selector.core.models import ServerProfile, ServerRecord, ToolEnrichment, ToolRecord

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore

logger = logging.getLogger(__name__)


class EnrichSummary(BaseModel):
    enricher: str = "none"
    servers_profiled: int = 0
    profiles_unchanged: int = 0
    tools_enriched: int = 0
    tools_unchanged: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    fallbacks: int = 0
    errors: list[str] = Field(default_factory=list)
    seconds: float = 0.0


SAVE_TOOLS = 1000  # enrichments written in one transaction, at most
SAVE_SECONDS = 1.0  # ... and results waiting at most this long (a Claude run's are written at once)


@dataclass
class _Work:
    server: ServerRecord
    tools: list[ToolRecord]
    stored: ServerProfile | None
    enrichment_hashes: dict[str, str]
    tool_hashes: dict[str, str]  # each tool's compute_hash(), by id: computed once
    changed: list[ToolRecord] = field(default_factory=list)
    forced: bool = False


def _plan(
    store: CatalogStore,
    enrichers: Enrichers,
    now: datetime,
    max_age: timedelta,
    force: frozenset[str],
    servers: Collection[str] | None = None,
) -> list[_Work]:
    """What to profile and enrich: the whole catalog, or only ``servers`` (those a write changed)."""
    by_server: dict[str, list[ToolRecord]] = defaultdict(list)
    if servers is None:
        records = store.list_servers()
        for tool in store.list_tools(cleared_only=True):  # held text never reaches an enricher (Claude)
            by_server[tool.server].append(tool)
        profiles = store.get_profiles()
        hashes = store.enrichment_hashes()
    else:
        records, profiles, hashes = [], {}, {}
        for name in sorted(set(servers) | force):
            try:
                records.append(store.get_server(name))
            except NotFoundError:
                continue
            by_server[name] = store.list_tools(name, cleared_only=True)
            profile = store.get_profile(name)
            if profile is not None:
                profiles[name] = profile
            for tool in by_server[name]:
                enrichment = store.get_enrichment(tool.id)
                if enrichment is not None:
                    hashes[tool.id] = enrichment.enrichment_hash
    plan: list[_Work] = []
    for server in records:
        tools = by_server.get(server.name, [])
        tool_hashes = {t.id: t.compute_hash() for t in tools}
        work = _Work(
            server, tools, profiles.get(server.name), {t.id: hashes.get(t.id, "") for t in tools}, tool_hashes
        )
        profile_hash = compute_profile_hash(server, tools, tool_hashes)
        if server.name in force:
            work.stored, work.forced, work.enrichment_hashes = None, True, {t.id: "" for t in tools}
        elif needs_profile(work.stored, profile_hash, enrichers.profiler, now=now, max_age=max_age):
            work.stored = None
        else:
            work.changed = [
                t
                for t in tools
                if hashes.get(t.id)
                != enrichment_hash_of(t, profile_hash, enrichers.enricher, tool_hashes[t.id])
            ]
            if not work.changed:
                continue
        plan.append(work)
    return plan


def _run_one(
    work: _Work, enrichers: Enrichers, cache: EnrichmentCache, now: datetime, max_age: timedelta
) -> tuple[ProfileOutcome | None, EnrichOutcome]:
    profiled: ProfileOutcome | None = None
    profile = work.stored
    if profile is None:
        profiled = profile_server(
            work.server,
            work.tools,
            enrichers.profiler,
            cache,
            now=now,
            max_age=max_age,
            fallback=enrichers.fallback_profiler,
            refresh=work.forced,
            tool_hashes=work.tool_hashes,
        )
        profile = profiled.profile
        work.changed = [
            t
            for t in work.tools
            if work.enrichment_hashes[t.id]
            != enrichment_hash_of(t, profile.profile_hash, enrichers.enricher, work.tool_hashes[t.id])
        ]
    enriched = enrich_server_tools(
        work.server,
        profile,
        work.changed,
        enrichers.enricher,
        cache,
        now=now,
        fallback=enrichers.fallback_enricher,
        tool_hashes=work.tool_hashes,
    )
    return profiled, enriched


@writes("enrichment")
def enrich_catalog(
    container: Container,
    enrichers: Enrichers | None,
    *,
    progress: Callable[[int, int], None] | None = None,
    concurrency: int = 1,
    force: frozenset[str] = frozenset(),
    servers: Collection[str] | None = None,
) -> EnrichSummary:
    """Profile and enrich what changed in the catalog; ``None`` removes all enrichment instead.
    Servers named in ``force`` are re-profiled (past the cache) and their tools re-enriched.
    ``servers`` (the servers a write changed) limits the work to them."""
    started = time.perf_counter()
    store = container.store
    if enrichers is None:
        removed = store.clear_enrichments()
        logger.info("enrichment off: removed %d enrichments", removed)
        return EnrichSummary(seconds=round(time.perf_counter() - started, 3))
    summary = EnrichSummary(enricher=enrichers.kind)
    now = datetime.now(UTC)
    max_age = timedelta(days=container.settings.sync.profile_max_age_days)
    plan = _plan(store, enrichers, now, max_age, force, servers)
    total_tools = sum(len(w.tools) for w in plan) if servers is not None else store.counts()[1]
    calls_before = enrichers.llm_calls()
    with EnrichmentCache(container.settings.enrichment_cache_dir) as cache, cache.deferred():
        done = 0
        saving = _Saving(container)

        def run(work: _Work) -> tuple[ProfileOutcome | None, EnrichOutcome]:
            return _run_one(work, enrichers, cache, now, max_age)

        threads = len(plan) > 1  # a write's one server is enriched here: no thread of its own to start
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) if threads else nullcontext() as pool:
            results = pool.map(run, plan) if pool is not None else map(run, plan)
            try:
                for work, (profiled, enriched) in zip(plan, results, strict=True):
                    _count(work, profiled, enriched, summary)
                    saving.add(profiled, enriched)
                    done += 1
                    if progress is not None:
                        progress(done, len(plan))
            finally:  # what was finished is kept, even when a server failed
                saving.flush()
    summary.tools_unchanged = total_tools - summary.tools_enriched - summary.fallbacks
    known = len(set(servers) | force) if servers is not None else store.counts()[0]
    summary.profiles_unchanged = known - summary.servers_profiled
    summary.llm_calls = enrichers.llm_calls() - calls_before
    summary.seconds = round(time.perf_counter() - started, 3)
    logger.info("enriched: %s", summary.model_dump())
    return summary


class _Saving:
    """Profiles and enrichments written a few servers at a time, each time in one transaction."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self.profiles: list[ServerProfile] = []
        self.enrichments: list[ToolEnrichment] = []
        self.since = time.monotonic()

    def add(self, profiled: ProfileOutcome | None, enriched: EnrichOutcome) -> None:
        if profiled is not None:
            self.profiles.append(profiled.profile)
        self.enrichments.extend(enriched.enrichments)
        if len(self.enrichments) >= SAVE_TOOLS or time.monotonic() - self.since >= SAVE_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.profiles or self.enrichments:
            store = self.container.store
            with self.container.writer.batch():
                store.put_profiles(self.profiles)
                store.put_enrichments(self.enrichments)
        self.profiles, self.enrichments, self.since = [], [], time.monotonic()


def _count(
    work: _Work, profiled: ProfileOutcome | None, enriched: EnrichOutcome, summary: EnrichSummary
) -> None:
    if profiled is not None:
        summary.servers_profiled += 1
        summary.cache_hits += int(profiled.cache_hit)
        if profiled.fell_back:
            summary.errors.append(f"{work.server.name}: profile fell back to offline: {profiled.error}")
    summary.tools_enriched += len(enriched.enrichments) - enriched.fallbacks
    summary.fallbacks += enriched.fallbacks
    summary.cache_hits += enriched.cache_hits
    summary.errors.extend(enriched.errors)
