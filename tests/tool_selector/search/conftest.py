"""The backends every contract test of this folder runs against (test_backend_contract.py,
test_backend_capabilities.py): embedded, Weaviate through its SDK against the loopback stand-in, and a
live Weaviate when ``WEAVIATE_URL`` is set."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.backends import CATALOG, EMBEDDER, LIVE_API_KEY, LIVE_GRPC_URL, LIVE_SKIP, LIVE_URL
from tests.support.weaviate_fake import FakeWeaviate
from tool_selector.search.backend import SearchBackend
from tool_selector.search.embedded.backend import EmbeddedBackend
from tool_selector.search.weaviate.backend import WeaviateBackend, WeaviateConfig

KINDS = ["embedded", "weaviate-loopback", "weaviate-live"]


@pytest.fixture(scope="session")
def loopback_weaviate() -> Iterator[FakeWeaviate]:
    with FakeWeaviate() as fake:
        yield fake


def loopback_config(fake: FakeWeaviate, collection: str, **kwargs: object) -> WeaviateConfig:
    return WeaviateConfig(
        url=fake.url,
        grpc_url=f"http://127.0.0.1:{fake.grpc_port}",
        api_key=fake.api_key,
        collection=collection,
        **kwargs,  # type: ignore[arg-type]
    )


BackendFactory = Callable[[], SearchBackend]


@pytest.fixture(params=KINDS)
def make_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BackendFactory]:
    """Opens empty backends of one kind (each call a new, empty one); all are dropped afterwards."""
    kind: str = request.param
    opened: list[SearchBackend] = []

    def weaviate_config() -> WeaviateConfig:
        collection = f"ToolContract{uuid.uuid4().hex[:10]}"
        if kind == "weaviate-live":
            return WeaviateConfig(
                url=str(LIVE_URL), grpc_url=LIVE_GRPC_URL, api_key=LIVE_API_KEY, collection=collection
            )
        return loopback_config(request.getfixturevalue("loopback_weaviate"), collection)

    def make() -> SearchBackend:
        backend: SearchBackend
        if kind == "embedded":
            backend = EmbeddedBackend(
                tmp_path / f"index-{len(opened)}", model_id=EMBEDDER.model_id, dim=EMBEDDER.dim
            )
        else:
            backend = WeaviateBackend(weaviate_config(), model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)
        opened.append(backend)
        return backend

    if kind == "weaviate-live" and not LIVE_URL:
        pytest.skip(LIVE_SKIP)
    yield make
    for backend in opened:
        try:
            backend.drop()
        finally:
            backend.close()


@pytest.fixture
def backend(make_backend: BackendFactory) -> SearchBackend:
    opened = make_backend()
    result = opened.upsert(CATALOG)
    assert (result.written, result.errors) == (len(CATALOG), {})
    return opened
