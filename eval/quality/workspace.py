"""An evaluation workspace: a catalog store and index of one dataset's catalog, outside the repo,
keyed by the catalog files' hash so that re-runs reuse it and a changed catalog gets a fresh one.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from eval.quality.dataset import DatasetPaths
from services.root.container import Container, enricher_kind
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import build_index
from tool_selector.config.settings import Settings
from tool_selector.core.errors import IndexDamagedError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_bytes_limited
from tool_selector.embedding.embedders import Embedder
from tool_selector.index.mark import index_is_current
from tool_selector.resolve.confidence import Calibration

logger = logging.getLogger(__name__)


def catalog_files_hash(paths: DatasetPaths, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> str:
    digest = hashlib.sha256()
    for path in (paths.servers, paths.tools):
        digest.update(read_bytes_limited(path, limit_bytes=limit_bytes, what="catalog file"))
        digest.update(b"\0")
    return digest.hexdigest()


def workspace_dir(settings: Settings, paths: DatasetPaths, embedder_id: str, enricher: str = "none") -> Path:
    """One workspace per catalog, embedder and enricher, so runs with different enrichers never
    rewrite each other's index."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", paths.servers.parent.resolve().name) or "dataset"
    source = catalog_files_hash(paths, settings.max_file_bytes)
    key = hashlib.sha256(f"{source}:{embedder_id}".encode()).hexdigest()[:12]
    return settings.cache_dir / "eval" / f"{name}-{key}-{enricher}"


def open_workspace(
    settings: Settings,
    paths: DatasetPaths,
    *,
    embedder: Embedder | None = None,
    calibration: Calibration | None = None,
    enricher: str | None = None,
) -> tuple[Container, bool]:
    """A container over the dataset's own catalog and index; builds them when missing or stale.

    Only the catalog files go in: the queries never reach the store, the enricher or the index.
    The catalog is enriched as the sync would (``enricher`` overrides ``settings.sync.enricher``; ``none``
    leaves it unenriched), incrementally. Returns the container and whether the index was (re)built.
    """
    model_id = embedder.model_id if embedder is not None else settings.embedding.model
    kind = enricher_kind(settings, enricher)
    work = workspace_dir(settings, paths, model_id, kind)
    container = Container(
        settings,
        embedder=embedder,
        calibration=calibration,
        db_path=work / "catalog.db",
        index_dir=work / "index",
    )
    store = container.store
    built = False
    source = catalog_files_hash(paths, settings.max_file_bytes)
    if store.get_meta("source_hash") != source:
        logger.info("importing the catalog into eval workspace %s", work)
        import_catalog_dir(container, paths.servers.parent, prune=True, approve=True, actor="eval")
        store.set_meta("source_hash", catalog_files_hash(paths, settings.max_file_bytes))
    enrich_catalog(container, container.enrichers(kind))
    try:
        usable = index_is_current(container) and container.backend.count() > 0
    except IndexDamagedError:  # a damaged workspace index: build_index makes it anew
        usable = False
    if not usable:
        logger.info("indexing eval workspace %s", work)
        build_index(container)
        built = True
    return container, built
