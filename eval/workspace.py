"""An evaluation workspace: a catalog store and index of one dataset's catalog, outside the repo,
keyed by the catalog files' hash so that re-runs reuse it and a changed catalog gets a fresh one.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from eval.dataset import DatasetPaths
from services.catalog import import_catalog_dir
from services.container import Container
from services.indexing import build_index
from tool_selector.confidence import Calibration
from tool_selector.embedding import Embedder
from tool_selector.settings import Settings

logger = logging.getLogger(__name__)


def catalog_files_hash(paths: DatasetPaths) -> str:
    digest = hashlib.sha256()
    for path in (paths.servers, paths.tools):
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def workspace_dir(settings: Settings, paths: DatasetPaths, embedder_id: str) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", paths.servers.parent.resolve().name) or "dataset"
    key = hashlib.sha256(f"{catalog_files_hash(paths)}:{embedder_id}".encode()).hexdigest()[:12]
    return settings.cache_dir / "eval" / f"{name}-{key}"


def open_workspace(
    settings: Settings,
    paths: DatasetPaths,
    *,
    embedder: Embedder | None = None,
    calibration: Calibration | None = None,
) -> tuple[Container, bool]:
    """A container over the dataset's own catalog and index; builds them when missing or stale.

    Only the catalog files go in: the queries never reach the store or the index.
    Returns the container and whether the index was (re)built.
    """
    model_id = embedder.model_id if embedder is not None else settings.embedding_model
    work = workspace_dir(settings, paths, model_id)
    container = Container(
        settings,
        embedder=embedder,
        calibration=calibration,
        db_path=work / "catalog.db",
        index_dir=work / "index",
    )
    store = container.store
    built = False
    stale = (
        store.get_meta("source_hash") != catalog_files_hash(paths)
        or store.get_meta("index_catalog_hash") != store.catalog_hash()
        or container.backend.count() == 0
    )
    if stale:
        logger.info("building eval workspace %s", work)
        import_catalog_dir(container, paths.servers.parent, prune=True)
        build_index(container)
        store.set_meta("source_hash", catalog_files_hash(paths))
        built = True
    return container, built
