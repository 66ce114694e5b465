"""An eval workspace (eval/quality/workspace.py) whose index was damaged is built anew on the next run, not
refused with advice meant for the operator's own index."""

from __future__ import annotations

from pathlib import Path

from eval.quality.dataset import DatasetPaths
from eval.quality.workspace import open_workspace, workspace_dir
from tests.support.catalogs import write_catalog
from tests.support.index_damage import damage
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import HashingEmbedder


def test_a_damaged_workspace_index_is_built_anew(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path / "dataset", {"weather": ["get_forecast"], "files": ["read_file"]})
    paths = DatasetPaths(servers=folder / "servers.json", tools=folder / "tools.json", queries=folder / "q")
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", sync={"enricher": "none"})
    embedder = HashingEmbedder(dim=384)
    container, built = open_workspace(settings, paths, embedder=embedder)
    with container:
        assert built and container.backend.count() == 2
    damage(workspace_dir(settings, paths, embedder.model_id, "none") / "index", "truncated vectors.npy")
    container, built = open_workspace(settings, paths, embedder=embedder)
    with container:
        assert built
        assert container.backend.count() == 2
