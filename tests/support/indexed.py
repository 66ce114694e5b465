"""Small indexed catalogs for the tests of the write path and of a running reader: imported (approved,
trust on first use), enriched offline and indexed with the hashing embedder (no model), and a spy on the
reader's updates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from services.resolve.snapshot import IndexSnapshot
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import refresh_index
from tests.support.catalogs import tofu_settings
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.index.build import IndexSummary

EMBEDDER = HashingEmbedder(dim=384)
SMALL_TOOLS = {
    "weather": ["get_forecast", "get_alerts"],
    "clock": ["get_time", "set_alarm"],
    "mail": ["send_email", "read_inbox", "delete_email"],
}


@contextmanager
def indexed_catalog(tmp_path: Path, catalog: Path) -> Iterator[tuple[Container, IndexSummary]]:
    """The catalog folder imported into a data folder under ``tmp_path``, enriched and indexed; the
    container and the first build's summary."""
    with Container(tofu_settings(tmp_path), embedder=EMBEDDER) as opened:
        import_catalog_dir(opened, catalog, approve=True, actor="test")
        enrich_catalog(opened, opened.enrichers())
        yield opened, refresh_index(opened)


def spy_service_updates(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """Each reader update from now on, as the set of servers it was given."""
    updates: list[set[str]] = []
    real = IndexSnapshot.updated

    def spy(previous: IndexSnapshot, changed: set[str], *, allow_stale: bool) -> IndexSnapshot:
        updates.append(set(changed))
        return real(previous, changed, allow_stale=allow_stale)

    monkeypatch.setattr(IndexSnapshot, "updated", staticmethod(spy))
    return updates
