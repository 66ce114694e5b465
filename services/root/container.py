"""The composition root: the one place that builds components from the settings, each lazily and once.

It owns the catalog store (one connection per thread) and its writer (with the shadowing check, over the
shipped relevance model and the catalog's vector cache), the writer lock of the data folder, the
embedder, the search backend (with its field boosts), the calibration, the resolver, the enrichers
(with their Claude client) and the connector to the upstream MCP servers (services/upstream).
Tests pass a ready component instead (``embedder=``, ``backend=``, ``calibration=``, ``enrichers=``,
``shadow_embedder=``, ``connector=``). The shadowing check reads the shipped relevance model's vectors:
a container given a test double of another model as its embedder has no shadowing check by meaning
unless it is given one.
"""

from __future__ import annotations

import logging
import threading
import weakref
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writelock import WRITE_LOCK_FILE, WriteLock, write_lock_for
from tool_selector.core.errors import ConfigurationError

# each part's code is imported when the part is first built: a command imports what it uses (the
# model, the search, the resolver, the enrichers), never all of it (issue 42: every start paid ~2 s)
if TYPE_CHECKING:
    from semantic_enrichment.base import Enrichers
    from services.upstream.connector import Connector
    from tool_selector.catalog.writer import CatalogWriter
    from tool_selector.config.settings import Settings
    from tool_selector.embedding.embedders import Embedder
    from tool_selector.resolve.confidence import Calibration
    from tool_selector.resolve.rerank.model import RankerModel
    from tool_selector.resolve.resolver import Resolver
    from tool_selector.route.memory import MemoryModel
    from tool_selector.search.backend import SearchBackend
    from tool_selector.trust.intent import LazyIntentCheck
    from tool_selector.trust.likeness import Embeds, ShadowModel

logger = logging.getLogger(__name__)

ENRICHER_CHOICES = ("auto", "offline", "claude", "none")


def enricher_kind(settings: Settings, choice: str | None = None) -> str:
    """What ``choice`` (default: the ``enricher`` setting) comes to: offline, claude or none."""
    wanted = choice or settings.sync.enricher
    if wanted not in ENRICHER_CHOICES:
        raise ConfigurationError(
            f"Unknown enricher {wanted!r}.",
            hint="Use auto, offline, claude or none (TOOL_SELECTOR_SYNC__ENRICHER).",
        )
    if wanted == "auto":
        return "claude" if settings.claude.api_key is not None else "offline"
    return wanted


class Container:
    """Owns the long-lived parts of one process. Close it (or use ``with``) when done."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        backend: SearchBackend | None = None,
        calibration: Calibration | None = None,
        enrichers: Enrichers | None = None,
        index_dir: Path | None = None,
        db_path: Path | None = None,
        ranker: RankerModel | None = None,
        shadow_embedder: Embeds | None = None,
        connector: Connector | None = None,
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._shadow_embedder = shadow_embedder
        self._backend = backend
        self._calibration = calibration
        self._ranker = ranker
        self._connector = connector
        self._enrichers_override = enrichers
        self._index_dir = index_dir or settings.index_dir
        self._db_path = db_path or settings.db_path
        self._local = threading.local()
        # weak: a worker thread that ends drops its connection (closed when collected), so a
        # long-running server whose thread pool retires threads does not pile up connections
        self._stores: weakref.WeakSet[CatalogStore] = weakref.WeakSet()
        self._stores_lock = threading.Lock()
        self._enrichers: dict[str, Enrichers] = {}
        self._enrichers_lock = threading.Lock()
        # beside the catalog: it guards the catalog and the index made from it
        self.write_lock: WriteLock = write_lock_for(self._db_path.with_name(WRITE_LOCK_FILE))

    def __enter__(self) -> Container:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the catalog -----------------------------------------------------------------------------

    @property
    def store(self) -> CatalogStore:
        """This thread's connection to the catalog database (SQLite connections are per thread; the
        REST API serves from a thread pool)."""
        store: CatalogStore | None = getattr(self._local, "store", None)
        if store is None:
            store = CatalogStore(self._db_path)
            self._local.store = store
            with self._stores_lock:
                self._stores.add(store)
        return store

    @property
    def writer(self) -> CatalogWriter:
        """The only way to change servers and tools: every change is audited in its transaction, and
        every new or changed tool is vetted, shadowing of the configured servers' tools included."""
        from tool_selector.catalog.writer import CatalogWriter
        from tool_selector.trust.likeness import ShadowCheck

        reads = self.shadow_embedder
        shadows = None if reads is None else ShadowCheck(reads, self.store, self.shadow_model)
        return CatalogWriter(self.store, shadows=shadows, intent=self.intent)

    @cached_property
    def intent(self) -> LazyIntentCheck | None:
        """The scanner's learned check (what a definition asks the model to do), loaded at its first
        reading; None when ``trust.intent`` is off."""
        from tool_selector.embedding.intent import intent_check
        from tool_selector.trust.intent import LazyIntentCheck

        if not self.settings.trust.intent:
            return None
        threads = self.settings.embedding.threads
        return LazyIntentCheck(lambda: intent_check(threads=threads))

    @cached_property
    def memory_model(self) -> MemoryModel | None:
        """The memory of confirmed choices' judge (None before one was fitted)."""
        from tool_selector.route.memory import load_memory_model

        return load_memory_model()

    @cached_property
    def shadow_model(self) -> ShadowModel:
        from tool_selector.trust.likeness import load_shadow_model

        return load_shadow_model()

    @cached_property
    def shadow_embedder(self) -> Embeds | None:
        """The model the shadowing check reads (the shipped relevance model, on whose vectors its thresholds
        were measured): the one given, the search's embedder when it is that model, else that model loaded
        on first use; None when the container was given a test double of another model (no check)."""
        from tool_selector.embedding.embedders import (
            LazyEmbedder,
            MiniLMEmbedder,
            relevance_embedder,
            relevance_model_id,
        )

        if self._shadow_embedder is not None:
            return self._shadow_embedder
        if self.embedder.model_id == self.shadow_model.model_id:
            return self.embedder
        if self._embedder is not None:
            return None
        threads = self.settings.embedding.threads
        return LazyEmbedder(
            lambda: relevance_embedder(threads), model_id=relevance_model_id(), dim=MiniLMEmbedder.dim
        )

    def writing(self, what: str, *, wait_s: float | None = None) -> AbstractContextManager[None]:
        """Hold the data folder's writer lock (tool_selector/catalog/writelock.py) around a change of the
        catalog
        and the index; waits up to ``wait_s`` (default: ``write_lock_timeout_s``), then LockedError."""
        wait = self.settings.write_lock_timeout_s if wait_s is None else wait_s
        return self.write_lock.held(what, wait_s=wait)

    # -- search ----------------------------------------------------------------------------------

    @cached_property
    def embedder(self) -> Embedder:
        from tool_selector.embedding.batching import QueryBatcher
        from tool_selector.embedding.embedders import (
            RELEVANCE_MODEL_ID,
            LazyEmbedder,
            MiniLMEmbedder,
            model_id_of,
            relevance_embedder,
        )

        if self._embedder is not None:
            return self._embedder
        s, cache_dir = self.settings.embedding, self.settings.cache_dir

        def load() -> Embedder:
            if s.model == RELEVANCE_MODEL_ID:
                return relevance_embedder(s.threads)
            return MiniLMEmbedder(cache_dir, engine=s.engine, threads=s.threads)

        lazy = LazyEmbedder(load, model_id=model_id_of(s.model, s.engine), dim=MiniLMEmbedder.dim)
        if s.query_batch_window_ms <= 0:
            return lazy
        # concurrent resolves (REST API, gateway) share model calls; a lone one goes straight through
        return QueryBatcher(lazy, window_s=s.query_batch_window_ms / 1000, max_batch=s.query_batch_max)

    @cached_property
    def backend(self) -> SearchBackend:
        if self._backend is not None:
            return self._backend
        s = self.settings
        if s.backend == "embedded":
            from tool_selector.search.embedded.backend import EmbeddedBackend

            return EmbeddedBackend(
                self._index_dir,
                model_id=self.embedder.model_id,
                dim=self.embedder.dim,
                ann_min=s.search.ann_min_documents,
            )
        try:  # weaviate loads only when used; the client is the `weaviate` extra
            from tool_selector.search.weaviate.backend import WeaviateBackend
        except ImportError as exc:
            raise ConfigurationError(
                f"backend = 'weaviate' needs the Weaviate client, which is not installed ({exc}).",
                hint="Install it with `pip install 'tool-selector[weaviate]'` (or the project's set-up, "
                "bash scripts/setup.sh), or set TOOL_SELECTOR_BACKEND=embedded.",
            ) from exc

        return WeaviateBackend(
            s.weaviate,
            model_id=self.embedder.model_id,
            dim=self.embedder.dim,
            field_boosts=s.search.field_boosts,
            server_field_boosts=s.search.server_field_boosts,
        )

    @property
    def index_key(self) -> str:
        """The catalog-store meta key remembering which catalog the configured index holds. Each
        backend (and each Weaviate collection) has its own: filling one says nothing of another. It
        names the index layout too (``INDEX_LAYOUT``): an index made before server documents existed
        has no mark under it, so the next sync fills it in instead of taking it for current."""
        from tool_selector.index.build import INDEX_LAYOUT

        s = self.settings
        key = f"index_catalog_hash.{INDEX_LAYOUT}"
        if s.backend == "embedded":
            return key
        return f"{key}@weaviate:{s.weaviate.url}/{s.weaviate.collection}"

    @cached_property
    def calibration(self) -> Calibration:
        from tool_selector.resolve.confidence import load_calibration

        if self._calibration is not None:
            return self._calibration
        settings = self.settings
        return load_calibration(settings.confidence.calibration_file, limit_bytes=settings.max_file_bytes)

    @cached_property
    def resolver(self) -> Resolver:
        from tool_selector.resolve.judge import capability_judge
        from tool_selector.resolve.resolver import Resolver

        s, judged = self.settings.search, self.settings.confidence
        return Resolver(
            self.backend,
            self.embedder,
            self.calibration,
            alpha=s.alpha,
            field_boosts=s.field_boosts,
            candidates=s.candidates,
            max_query_chars=s.max_query_chars,
            fusion=s.fusion,
            server_field_boosts=s.server_field_boosts,
            ranker=self.ranker,
            arguments=s.arguments,
            argument_weight=s.argument_weight,
            spelling=s.spelling,
            capability=(
                capability_judge(judged.judge_dir, self.settings.embedding.threads) if judged.judge else None
            ),
        )

    @cached_property
    def ranker(self) -> RankerModel | None:
        """The learned ranker the resolver reorders candidates with; None when ``rerank`` is off."""
        if self._ranker is not None:
            return self._ranker
        if not self.settings.search.rerank:
            return None
        from tool_selector.resolve.rerank.model import load_ranker

        return load_ranker(self.settings.search.ranker_file, limit_bytes=self.settings.max_file_bytes)

    # -- upstream servers ------------------------------------------------------------------------

    @cached_property
    def connector(self) -> Connector:
        """What opens a session with a configured MCP server (discovery, the gateway's powers): the
        stdio / streamable HTTP one unless the container was given another."""
        if self._connector is not None:
            return self._connector
        from services.upstream.connector import StdioHttpConnector

        return StdioHttpConnector()

    # -- enrichment ------------------------------------------------------------------------------

    def enrichers(self, choice: str | None = None) -> Enrichers | None:
        """The profiler and enricher ``choice`` asks for, built once per process (one Claude client);
        None when enrichment is switched off."""
        if self._enrichers_override is not None:
            return self._enrichers_override
        kind = enricher_kind(self.settings, choice)
        if kind == "none":
            return None
        with self._enrichers_lock:
            if kind not in self._enrichers:
                self._enrichers[kind] = self._build_enrichers(kind)
            return self._enrichers[kind]

    def _build_enrichers(self, kind: str) -> Enrichers:
        from semantic_enrichment.base import Enrichers
        from semantic_enrichment.offline import OfflineEnricher, OfflineProfiler

        if kind == "offline":
            return Enrichers(OfflineProfiler(), OfflineEnricher())
        from semantic_enrichment.claude import ClaudeEnricher, ClaudeProfiler
        from semantic_enrichment.claude_client import ClaudeClient

        client = ClaudeClient.from_settings(self.settings.claude)
        return Enrichers(
            ClaudeProfiler(client),
            ClaudeEnricher(client),
            fallback_profiler=OfflineProfiler(),
            fallback_enricher=OfflineEnricher(),
            llm_calls=lambda: client.calls,
            close=client.close,
        )

    def close(self) -> None:
        if "backend" in self.__dict__ and self._backend is None:
            self.backend.close()
        embedder = self.__dict__.get("embedder")
        if embedder is not None:
            from tool_selector.embedding.batching import QueryBatcher

            if isinstance(embedder, QueryBatcher):
                embedder.close()
        with self._enrichers_lock:
            built, self._enrichers = list(self._enrichers.values()), {}
        for enrichers in built:
            enrichers.close()
        with self._stores_lock:
            stores, self._stores = list(self._stores), weakref.WeakSet()
        for store in stores:
            store.close()
        self._local = threading.local()
