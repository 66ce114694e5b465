"""Use cases over the catalog: import a catalog folder, read a batch against what is stored, list what
is stored, back it up."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from services.root.container import Container
from services.write.policy import origin_mode
from services.write.registry import operator_owned, taken_server_names
from services.write.writing import writes
from tool_selector.catalog.database import backup
from tool_selector.catalog.rows import ImportSummary
from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog_files.batch import ImportBatch, parse_batch_body, read_batch_file
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.config.settings import Settings
from tool_selector.core.choices import BatchFormat
from tool_selector.core.models import CreationMethod, ServerRecord
from tool_selector.trust.limits import refuse_oversize

logger = logging.getLogger(__name__)


@writes("catalog import")
def import_catalog_dir(
    container: Container, folder: Path, *, prune: bool = False, approve: bool = False, actor: str
) -> ImportSummary:
    """Read a benchmark-format folder and write it to the store in one transaction (all or nothing),
    audited as one ``catalog.import`` record when it changed anything. The index is not touched:
    ``tool-selector index build`` (or the next sync) brings it in line.

    Definitions are held for approval under the ``trust.imported`` policy, unless ``approve``: the
    actor approves them now (what the scanner quarantines is held either way). Servers the operator's
    configuration owns (configured, or discovered) are skipped and never pruned."""
    # a new server may not look like a name in use (with ``prune``, the catalog's go unless listed), nor a
    # new tool like one of the catalog's that stays (a listed server gets exactly its listed tools)
    taken = taken_server_names(container.settings, container.store, catalog=not prune)
    owned = operator_owned(container.settings, container.store)
    stored = [p for p in container.store.tool_names() if not prune or p[0] in owned]
    servers, tools = read_catalog_dir(
        folder, limit_bytes=container.settings.max_file_bytes, taken=taken, taken_tools=stored
    )
    # the caps of REST registration hold for files too, but for the count: a folder on the operator's
    # own disk may hold a whole organisation's catalog (100k tools: `tool-selector lab bench-scale`)
    refuse_oversize(servers, tools, max_tools=None)
    # what the operator's configuration and discovery own is never overwritten (nor pruned) by a file
    skipped = sorted({s.name for s in servers} & owned)
    if skipped:
        logger.warning("catalog import: skipped %s, owned by the server configuration", skipped)
    summary = container.writer.import_catalog(
        [s for s in servers if s.name not in owned],
        [t for t in tools if t.server not in owned],
        creation_method=CreationMethod.IMPORTED,
        prune=prune,
        keep=owned,
        actor=actor,
        source=str(folder),
        trust="pin" if approve else origin_mode(container.settings, "imported"),
    )
    summary.servers_skipped = skipped
    return summary


def list_servers(store: CatalogStore) -> list[ServerRecord]:
    """Every server of the catalog with its tool count, by name."""
    return store.list_servers()


def read_batch(
    settings: Settings,
    store: CatalogStore,
    *,
    raw: bytes | None = None,
    content_type: str = "",
    path: Path | None = None,
    fmt: Literal["auto"] | BatchFormat = "auto",
) -> ImportBatch:
    """A batch (a request body of ``content_type``, or the file at ``path``) parsed against the catalog:
    its tools may name the catalog's servers; no new server may copy a name in use up to case; held to
    the caps of a registration. Raises CatalogFileError listing every problem; nothing is stored."""
    known = {s.name for s in store.list_servers()}
    taken = taken_server_names(settings, store)
    stored = store.tool_names()  # a batch adds and updates tools: every stored one stays
    if path is not None:
        limit = settings.max_file_bytes
        return read_batch_file(
            path, fmt, known_servers=known, limit_bytes=limit, taken=taken, taken_tools=stored
        )
    batch = parse_batch_body(content_type, raw or b"", known_servers=known, taken=taken, taken_tools=stored)
    refuse_oversize(batch.servers, batch.tools)
    return batch


def backup_catalog(store: CatalogStore, out: Path) -> dict[str, object]:
    """A consistent, checked copy of the catalog database at ``out`` (a new file), and what it holds."""
    return {"backup": str(out), **backup(store, out)}


def catalog_counts(store: CatalogStore) -> tuple[int, int]:
    """Servers and tools stored; reading them refuses an empty, damaged or foreign catalog first."""
    return store.counts()
