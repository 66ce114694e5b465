"""An index holding another embedding model's vectors (a change of model, or an upgrade from a version
that used all-MiniLM-L6-v2): the refresh the sync runs makes it anew from the catalog database."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index, refresh_index
from tests.support.catalogs import write_catalog
from tool_selector.config.settings import Settings
from tool_selector.core.errors import IndexMissingError
from tool_selector.embedding.embedders import HashingEmbedder


def _model(name: str) -> HashingEmbedder:
    embedder = HashingEmbedder(dim=384)
    embedder.model_id = name
    return embedder


def test_the_refresh_makes_an_index_of_another_model_anew(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", sync={"enricher": "none"})
    catalog = write_catalog(tmp_path / "catalog", {"time": ["get_current_time"], "git": ["git_diff"]})
    with Container(settings, embedder=_model("old-model")) as container:
        import_catalog_dir(container, catalog, approve=True, actor="test")
        build_index(container)
    with Container(settings, embedder=_model("new-model")) as container:
        with pytest.raises(IndexMissingError) as refused:  # a reader is told what to do
            container.backend.count()
        assert "index rebuild" in str(refused.value) and refused.value.details["another_model"]
    with Container(settings, embedder=_model("new-model")) as container:
        summary = refresh_index(container)
        assert summary.documents == 2 and container.backend.count() == 2
