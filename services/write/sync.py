"""Use case: the nightly sync. Discover the configured servers, then profile -> enrich -> index.

Incremental at every stage: unchanged servers keep their tools, unchanged profiles and enrichments
are not made again, unchanged documents are not re-embedded. A server that fails discovery keeps
its last known tools, marked stale, and the summary says why. Two syncs never overlap (a lock file),
its writes hold the data folder's writer lock (other writers wait for them; discovery runs outside it),
and every write is one transaction or an atomic swap, so a sync killed at any moment leaves the last
good state and the next run finishes the work.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from services.write.discovery import DiscoveredServer, LeftOutTool, discover_servers
from services.write.policy import configured_mode
from tool_selector.catalog.rows import ImportSummary
from tool_selector.config.servers import ServerConfig, load_servers
from tool_selector.config.settings import Settings
from tool_selector.core.disk import disk_refused
from tool_selector.core.errors import LockedError
from tool_selector.core.models import CreationMethod, DiscoveryState, DiscoveryStatus

if TYPE_CHECKING:
    from services.root.container import Container
    from services.upstream.connector import Connector
    from tool_selector.catalog.store import CatalogStore
    from tool_selector.catalog.writer import CatalogWriter
    from tool_selector.index.build import IndexSummary

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
SYNC_ACTOR = "sync"  # who the audit log names for changes the sync finds
QUARANTINE_LISTED = 200
AUDIT_LEFT_OUT = 100  # left-out tools listed in one audit record (its count says how many there were)


class SyncSummary(BaseModel):
    """What one sync did; printed as JSON by ``tool-selector sync``."""

    ok: bool = True
    servers_configured: int = 0
    servers_seen: int = Field(default=0, description="configured servers that answered")
    servers_changed: int = 0
    servers_failed: int = 0
    servers_removed: int = 0
    failed: dict[str, str] = Field(default_factory=dict, description="server -> what went wrong")
    stale: list[str] = Field(default_factory=list, description="failed servers whose last tools were kept")
    waiting: list[str] = Field(
        default_factory=list,
        description="imported entries switched on but not started: the operator adopts each on the "
        "machine with `tool-selector servers enable NAME`",
    )
    tools_added: int = 0
    tools_changed: int = 0
    tools_removed: int = 0
    tools_unchanged: int = 0
    tools_held: list[str] = Field(
        default_factory=list,
        description="tool ids this sync held: changed, new on an approved server, or poisoned",
    )
    servers_held: list[str] = Field(
        default_factory=list,
        description="servers whose new description waits for approval (changed since approved, or poisoned)",
    )
    tools_flagged: list[str] = Field(
        default_factory=list, description="tool ids the scanner flagged but let through"
    )
    tools_left_out: list[LeftOutTool] = Field(
        default_factory=list,
        description="tools a server listed that the catalog did not take, each with why (its name breaks "
        "the naming rule or looks like another tool's; its definition is over the JSON limits or invalid; "
        "its name was listed twice); also in the audit (sync.left_out)",
    )
    quarantined: list[str] = Field(
        default_factory=list,
        description="every tool held now (at most 200), kept out of the index and the gateway until "
        "`tool-selector quarantine approve`",
    )
    enricher: str = "none"
    servers_profiled: int = 0
    tools_enriched: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    enrichment_fallbacks: int = 0
    enrichment_errors: list[str] = Field(default_factory=list)
    documents_embedded: int = 0
    documents_written: int = 0
    documents_removed: int = 0
    index_errors: dict[str, str] = Field(default_factory=dict)
    seconds: dict[str, float] = Field(default_factory=dict, description="per phase and total")


def _refused(exc: OSError, path: Path) -> None:
    """StoreError when the disk refused writing the sync's lock (full, read-only ...)."""
    refused = disk_refused(exc, f"The sync's lock {path}", path.parent)
    if refused is not None:
        raise refused from exc


@contextmanager
def sync_lock(path: Path) -> Iterator[None]:
    """An exclusive, non-blocking lock held for the whole sync; released by the OS if we die."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        _refused(exc, path)
        raise
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise LockedError(
                f"Another sync is running (pid {holder}, lock {path}).",
                hint="Wait for it to finish; this run changed nothing.",
                pid=holder,
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except OSError as exc:  # a full disk: the sync has not started, nothing changed
            _refused(exc, path)
            raise
        yield
    finally:
        os.close(fd)


def _apply_discovery(
    container: Container,
    found: list[DiscoveredServer],
    summary: SyncSummary,
    configs: Mapping[str, ServerConfig],
) -> None:
    store = container.store
    known = {s.name for s in store.list_servers()}
    previous = store.get_discovery()
    now = datetime.now(UTC)
    statuses: list[DiscoveryStatus] = []
    good = [d for d in found if d.ok and d.server is not None]
    summary.tools_left_out = [out for d in good for out in d.left_out]
    if good:
        imported: ImportSummary = container.writer.import_catalog(
            [d.server for d in good if d.server is not None],
            [t for d in good for t in d.tools],
            creation_method=CreationMethod.DISCOVERED,
            actor=SYNC_ACTOR,
            source="discovery",
            trust={d.name: configured_mode(container.settings, configs.get(d.name)) for d in good},
        )
        summary.tools_held = imported.held
        summary.servers_held = imported.servers_held
        summary.tools_flagged = imported.flagged
        summary.servers_changed = imported.servers_added + imported.servers_changed
        summary.tools_added = imported.tools_added
        summary.tools_changed = imported.tools_changed
        summary.tools_removed = imported.tools_removed
        summary.tools_unchanged = imported.tools_unchanged
    if summary.tools_left_out:
        left_out = summary.tools_left_out
        container.writer.record(
            SYNC_ACTOR,
            "sync.left_out",
            "sync",
            count=len(left_out),
            tools=[out.model_dump() for out in left_out[:AUDIT_LEFT_OUT]],
        )
    for d in found:
        if d.ok:
            statuses.append(
                DiscoveryStatus(server=d.name, state="ok", last_attempt_at=now, last_success_at=now)
            )
            continue
        summary.servers_failed += 1
        summary.failed[d.name] = d.error
        last_ok = previous[d.name].last_success_at if d.name in previous else None
        state: DiscoveryState = "stale" if d.name in known else "failed"
        if state == "stale":
            summary.stale.append(d.name)
        statuses.append(
            DiscoveryStatus(
                server=d.name, state=state, error=d.error, last_attempt_at=now, last_success_at=last_ok
            )
        )
    store.put_discovery(statuses)
    summary.servers_seen = len(good)


def _remove_unconfigured(
    store: CatalogStore, writer: CatalogWriter, configured: set[str], summary: SyncSummary
) -> None:
    """Discovered servers that left the configuration (or were disabled) leave the catalog."""
    for server in store.list_servers():
        if server.creation_method == CreationMethod.DISCOVERED and server.name not in configured:
            removed = writer.delete_server(
                server.name, cascade=True, actor=SYNC_ACTOR, reason="no longer configured or switched off"
            )
            summary.tools_removed += len(removed)
            summary.servers_removed += 1
    gone = [n for n in store.get_discovery() if n not in configured]
    if gone:
        store.delete_discovery(gone)


def run_sync(
    container: Container,
    *,
    environ: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    enricher: str | None = None,
) -> SyncSummary:
    """Discover, profile, enrich and index; see the module docstring. Raises LockedError when
    another sync runs, or when another writer holds the writer lock past ``write_lock_timeout_s``;
    everything else that fails is reported in the summary (``ok`` false).

    Discovery runs outside the writer lock (it only talks to the servers); applying what it found,
    enriching and indexing run under it, so a registration or an import of another process waits for
    them instead of interleaving."""
    settings = container.settings
    summary = SyncSummary()
    started = time.perf_counter()
    with sync_lock(settings.sync_lock_path):
        phase = time.perf_counter()
        configured = load_servers(settings.servers_path).mcpServers
        configs = {n: c for n, c in configured.items() if c.runnable}
        summary.waiting = sorted(n for n, c in configured.items() if c.enabled and not c.runnable)
        summary.servers_configured = len(configs)
        found = _discover(configs, settings, container.connector, environ, progress)
        with container.writing("sync"):
            _apply_discovery(container, found, summary, configs)
            _remove_unconfigured(container.store, container.writer, set(configs), summary)
            summary.seconds["discover"] = round(time.perf_counter() - phase, 3)
            _enrich_and_index(container, summary, progress, enricher)
    summary.quarantined = sorted(container.store.held_tool_ids())[:QUARANTINE_LISTED]
    summary.ok = not (summary.failed or summary.enrichment_errors or summary.index_errors)
    summary.seconds["total"] = round(time.perf_counter() - started, 3)
    container.store.set_meta("last_sync", summary.model_dump_json())
    container.store.set_meta("last_sync_at", datetime.now(UTC).isoformat())
    logger.info("sync: %s", summary.model_dump())
    return summary


def _discover(
    configs: Mapping[str, ServerConfig],
    settings: Settings,
    connector: Connector,
    environ: Mapping[str, str] | None,
    progress: Progress | None,
) -> list[DiscoveredServer]:
    if not configs:
        return []
    done = 0

    def on_done(_: DiscoveredServer) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress("discover", done, len(configs))

    return discover_servers(
        configs,
        connector=connector,
        concurrency=settings.sync.discovery_concurrency,
        timeout_s=settings.sync.discovery_timeout_s,
        environ=dict(os.environ if environ is None else environ),
        on_done=on_done,
    )


def _enrich_and_index(
    container: Container, summary: SyncSummary, progress: Progress | None, enricher: str | None
) -> None:
    from services.write.enriching import enrich_catalog

    phase = time.perf_counter()
    enrichers = container.enrichers(enricher)
    enriched = enrich_catalog(
        container,
        enrichers,
        progress=(lambda d, t: progress("enrich", d, t)) if progress is not None else None,
        concurrency=container.settings.claude.concurrency
        if enrichers is not None and enrichers.kind == "claude"
        else 1,
    )
    summary.enricher = enriched.enricher
    summary.servers_profiled = enriched.servers_profiled
    summary.tools_enriched = enriched.tools_enriched
    summary.llm_calls = enriched.llm_calls
    summary.cache_hits = enriched.cache_hits
    summary.enrichment_fallbacks = enriched.fallbacks
    summary.enrichment_errors = enriched.errors
    summary.seconds["enrich"] = round(time.perf_counter() - phase, 3)

    phase = time.perf_counter()
    indexed = _index(container, progress)
    summary.documents_embedded = indexed.embedded
    summary.documents_written = indexed.written
    summary.documents_removed = indexed.removed
    summary.index_errors = indexed.errors
    summary.seconds["index"] = round(time.perf_counter() - phase, 3)


def _index(container: Container, progress: Progress | None) -> IndexSummary:
    from services.write.indexing import refresh_index

    return refresh_index(
        container,
        only_if_stale=True,
        progress=(lambda d, t: progress("embed", d, t)) if progress is not None else None,
    )


def last_sync(store: CatalogStore) -> SyncSummary | None:
    raw = store.get_meta("last_sync")
    return None if raw is None else SyncSummary.model_validate_json(raw)
