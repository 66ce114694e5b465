"""``build_index`` fills an empty embedded index in bulk (tool_selector/index/bulk.py): the same
documents, vectors, vector cache, summary and index files as a refresh, marked current the same way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from services.root.container import Container
from services.write import indexing
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import build_index, refresh_index
from tests.support.catalogs import write_catalog
from tests.support.index_damage import current_generation
from tool_selector.config.settings import Settings
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.index import bulk as indexing_rows
from tool_selector.index.build import build_documents, build_server_documents
from tool_selector.index.mark import index_is_current

EMBEDDER = HashingEmbedder(dim=384)
TOOLS = {
    "weather": ["get_forecast", "get_alerts"],
    "clock": ["get_time", "set_alarm"],
    "mail": ["send_email", "read_inbox", "delete_email"],
}
LEGACY = "mail::send_email"  # a server named like a tool id, as an older version let in: left out
FILES = ("meta.json", "docs.jsonl", "vectors.npy", "servers.jsonl", "server_vectors.npy")


def _container(root: Path) -> Container:
    settings = Settings(data_dir=root / "data", cache_dir=root / "cache", sync={"enricher": "offline"})
    container = Container(settings, embedder=EMBEDDER)
    import_catalog_dir(container, write_catalog(root / "catalog", TOOLS), approve=True, actor="test")
    legacy = ServerSpec.model_construct(name=LEGACY, description="mail service", metadata={})
    tool = ToolSpec.model_construct(
        server=LEGACY,
        name="resend",
        description="resend",
        input_schema={},
        annotations={},
        output_schema=None,
    )
    container.writer.import_catalog([legacy], [tool], creation_method=CreationMethod.IMPORTED, actor="older")
    enrich_catalog(container, container.enrichers())
    return container


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Container, Container]]:
    with _container(tmp_path / "bulk") as bulk, _container(tmp_path / "refresh") as refreshed:
        yield bulk, refreshed


def _files(container: Container) -> dict[str, bytes]:
    generation = current_generation(container.settings.index_dir)
    return {name: (generation / name).read_bytes() for name in FILES}


def _vectors(container: Container, keys: list[str]) -> dict[str, list[float]]:
    return {k: v.tolist() for k, v in container.store.get_vectors(EMBEDDER.model_id, keys).items()}


@pytest.mark.parametrize("read", ["whole", "a few servers at a time"])
def test_a_first_build_in_bulk_is_what_a_refresh_builds(
    pair: tuple[Container, Container], monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    if read != "whole":  # as a large catalog is read
        monkeypatch.setattr(indexing_rows, "READ_WHOLE", 0)
        monkeypatch.setattr(indexing_rows, "SERVERS_READ", 2)
    bulk, refreshed = pair
    calls: list[int] = []
    real = indexing.build_rows
    monkeypatch.setattr(indexing, "build_rows", lambda *a, **k: calls.append(1) or real(*a, **k))
    built = build_index(bulk)
    assert calls == [1]
    expected = refresh_index(refreshed)
    assert built.model_dump(exclude={"seconds"}) == expected.model_dump(exclude={"seconds"})
    assert (built.documents, built.servers_indexed) == (sum(map(len, TOOLS.values())), len(TOOLS))
    assert (
        list(built.left_out) == [f"server:{LEGACY}"] and "contains '::'" in built.left_out[f"server:{LEGACY}"]
    )
    assert _files(bulk) == _files(refreshed)
    assert bulk.backend.ids() == refreshed.backend.ids()
    assert index_is_current(bulk) and index_is_current(refreshed)
    assert bulk.store.get_meta(bulk.index_key + indexing.SEQ_MARK) == str(bulk.store.change_seq())
    texts = [*build_documents(bulk.store)[1].values(), *build_server_documents(bulk.store)[1].values()]
    keys = [sha256_of([EMBEDDER.model_id, t]) for t in texts]
    assert _vectors(bulk, keys) == _vectors(refreshed, keys) and len(_vectors(bulk, keys)) == len(set(keys))


def test_an_index_with_documents_a_rebuild_and_a_legacy_server_named_like_a_tool_id_are_refreshed(
    pair: tuple[Container, Container],
) -> None:
    bulk, refreshed = pair
    built = build_index(bulk)  # the server "mail::send_email" is left out, the tool of that id indexed
    expected = refresh_index(refreshed)
    assert built.model_dump(exclude={"seconds"}) == expected.model_dump(exclude={"seconds"})
    assert bulk.backend.ids(target="servers") == refreshed.backend.ids(target="servers")
    assert LEGACY not in bulk.backend.ids(target="servers") and LEGACY in bulk.backend.ids()
    assert index_is_current(bulk)
    again = build_index(bulk)  # an index with documents: a refresh, which finds it current
    assert (again.written, again.unchanged) == (0, built.documents)
    rebuilt = build_index(bulk, rebuild=True)
    assert rebuilt.written == built.documents
