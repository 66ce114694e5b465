"""Use cases over the catalog: import a catalog folder, list what is stored."""

from __future__ import annotations

import logging
from pathlib import Path

from services.shared.container import Container
from services.shared.policy import origin_mode
from services.shared.writing import writes
from services.write.registry import operator_owned, taken_server_names
from tool_selector.catalog.files import read_catalog_dir
from tool_selector.catalog.rows import ImportSummary
from tool_selector.core.models import CreationMethod
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
    # a new server may not copy a name in use up to case (with ``prune``, the catalog's go unless listed)
    taken = taken_server_names(container, catalog=not prune)
    servers, tools = read_catalog_dir(folder, limit_bytes=container.settings.max_file_bytes, taken=taken)
    # the caps of REST registration hold for files too, but for the count: a folder on the operator's
    # own disk may hold a whole organisation's catalog (100k tools: `tool-selector lab bench-scale`)
    refuse_oversize(servers, tools, max_tools=None)
    # what the operator's configuration and discovery own is never overwritten (nor pruned) by a file
    owned = operator_owned(container)
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
