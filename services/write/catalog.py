"""Use cases over the catalog: import a catalog folder, list what is stored."""

from __future__ import annotations

import logging
from pathlib import Path

from services.shared.container import Container
from tool_selector.catalog.files import read_catalog_dir
from tool_selector.catalog.rows import ImportSummary
from tool_selector.models import CreationMethod

logger = logging.getLogger(__name__)


def import_catalog_dir(
    container: Container, folder: Path, *, prune: bool = False, actor: str
) -> ImportSummary:
    """Read a benchmark-format folder and write it to the store in one transaction (all or nothing),
    audited as one ``catalog.import`` record when it changed anything. The index is not touched:
    ``tool-selector index build`` (or the next sync) brings it in line."""
    servers, tools = read_catalog_dir(folder)
    return container.writer.import_catalog(
        servers, tools, creation_method=CreationMethod.IMPORTED, prune=prune, actor=actor, source=str(folder)
    )
