"""The composition root: builds the store, embedder, backend and resolver from the settings, lazily."""

from __future__ import annotations

import logging
import threading
import weakref
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from tool_selector.catalog.store import CatalogStore
from tool_selector.confidence import Calibration, load_calibration
from tool_selector.embedding import Embedder, LazyEmbedder, MiniLMEmbedder
from tool_selector.resolve import Resolver
from tool_selector.search.backend import SearchBackend
from tool_selector.search.embedded import EmbeddedBackend
from tool_selector.settings import Settings

if TYPE_CHECKING:
    from tool_selector.search.weaviate_backend import WeaviateConfig

logger = logging.getLogger(__name__)


def weaviate_config(settings: Settings) -> WeaviateConfig:
    from tool_selector.search.weaviate_backend import WeaviateConfig

    key = settings.weaviate_api_key
    return WeaviateConfig(
        url=settings.weaviate_url,
        grpc_url=settings.weaviate_grpc_url,
        api_key=key.get_secret_value() if key is not None else None,
        collection=settings.weaviate_collection,
        connect_timeout_s=settings.weaviate_connect_timeout_s,
        query_timeout_s=settings.weaviate_query_timeout_s,
        insert_timeout_s=settings.weaviate_insert_timeout_s,
        max_attempts=settings.weaviate_max_attempts,
    )


class Container:
    """Owns the long-lived parts of one process. Close it (or use ``with``) when done."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        index_dir: Path | None = None,
        db_path: Path | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._calibration = calibration
        self._index_dir = index_dir or settings.index_dir
        self._db_path = db_path or settings.db_path
        self._local = threading.local()
        # weak: a worker thread that ends drops its connection (closed when collected), so a
        # long-running server whose thread pool retires threads does not pile up connections
        self._stores: weakref.WeakSet[CatalogStore] = weakref.WeakSet()
        self._stores_lock = threading.Lock()

    def __enter__(self) -> Container:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

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

    @cached_property
    def embedder(self) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        s = self.settings
        return LazyEmbedder(
            lambda: MiniLMEmbedder(s.cache_dir, engine=s.embedding_engine, threads=s.embedding_threads),
            model_id=MiniLMEmbedder.model_id,
            dim=MiniLMEmbedder.dim,
        )

    @cached_property
    def backend(self) -> SearchBackend:
        if self.settings.backend == "embedded":
            return EmbeddedBackend(self._index_dir, model_id=self.embedder.model_id, dim=self.embedder.dim)
        from tool_selector.search.weaviate_backend import WeaviateBackend  # weaviate loads only when used

        return WeaviateBackend(
            weaviate_config(self.settings), model_id=self.embedder.model_id, dim=self.embedder.dim
        )

    @property
    def index_key(self) -> str:
        """The catalog-store meta key remembering which catalog the configured index holds. Each
        backend (and each Weaviate collection) has its own: filling one says nothing of another."""
        s = self.settings
        if s.backend == "embedded":
            return "index_catalog_hash"
        return f"index_catalog_hash@weaviate:{s.weaviate_url}/{s.weaviate_collection}"

    def indexed_catalog_hash(self) -> str | None:
        """The catalog hash the configured index was last brought in line with."""
        return self.store.get_meta(self.index_key)

    def index_is_current(self) -> bool:
        return self.indexed_catalog_hash() == self.store.catalog_hash()

    def mark_index_current(self) -> None:
        self.store.set_meta(self.index_key, self.store.catalog_hash())

    @cached_property
    def calibration(self) -> Calibration:
        if self._calibration is not None:
            return self._calibration
        return load_calibration(self.settings.calibration_file)

    @cached_property
    def resolver(self) -> Resolver:
        s = self.settings
        return Resolver(
            self.backend,
            self.embedder,
            self.calibration,
            alpha=s.alpha,
            field_boosts=s.field_boosts,
            candidates=s.candidates,
            max_query_chars=s.max_query_chars,
            fusion=s.fusion,
        )

    def close(self) -> None:
        if "backend" in self.__dict__:
            self.backend.close()
        with self._stores_lock:
            stores, self._stores = list(self._stores), weakref.WeakSet()
        for store in stores:
            store.close()
        self._local = threading.local()
