"""Damage done to the files of an embedded index, as a full disk, a crash outside our writes, a person or a
partial restore might do it: each kind hits one file, and ``damage`` returns that file's path. And a data
folder indexed without loading the model, for the commands that meet such an index."""

from __future__ import annotations

from pathlib import Path

from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tests.support.catalogs import write_catalog
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import HashingEmbedder, MiniLMEmbedder, relevance_model_id
from tool_selector.search.embedded.files import parse_pointer

DAMAGES = ("truncated vectors.npy", "truncated docs.jsonl", "garbage meta.json", "empty CURRENT")


def current_generation(index_dir: Path) -> Path:
    """The base generation folder CURRENT names (it may count deltas on top: ``gen-<id>+<n>``)."""
    pointer = (index_dir / "CURRENT").read_text(encoding="utf-8").strip()
    return index_dir / parse_pointer(index_dir, pointer)[0]


def damage(index_dir: Path, kind: str) -> Path:
    """Damage the index in ``index_dir`` (a folder with CURRENT) in the way ``kind`` names: the files of
    its base generation, or CURRENT itself."""
    pointer = index_dir / "CURRENT"
    generation = current_generation(index_dir)
    if kind == "empty CURRENT":
        pointer.write_bytes(b"")
        return pointer
    if kind == "garbage meta.json":
        target = generation / "meta.json"
        target.write_bytes(b"\x00\x17{not json at all")
        return target
    name = {"truncated vectors.npy": "vectors.npy", "truncated docs.jsonl": "docs.jsonl"}[kind]
    target = generation / name
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])  # cut mid-way, as an interrupted copy leaves it
    return target


def indexed_without_the_model(folder: Path, tools: dict[str, list[str]]) -> Path:
    """A data folder with ``tools`` imported and indexed, whose vectors are HashingEmbedder ones stored
    under the real model's id and size: the CLI then finds every vector in the catalog's cache, so an
    ``index rebuild`` (and a resolve that fails before embedding its query) never loads the model.
    Only for tests of what happens around the index, never of ranking."""
    data = folder / "data"
    settings = Settings(data_dir=data, cache_dir=folder / "cache")
    with Container(settings, embedder=stand_in()) as container:
        import_catalog_dir(container, write_catalog(folder / "catalog", tools), approve=True, actor="test")
        build_index(container)
    return data


def stand_in() -> HashingEmbedder:
    """HashingEmbedder vectors under the real model's id and size (see ``indexed_without_the_model``)."""
    embedder = HashingEmbedder(dim=MiniLMEmbedder.dim)
    embedder.model_id = relevance_model_id()  # the default model's id
    return embedder
