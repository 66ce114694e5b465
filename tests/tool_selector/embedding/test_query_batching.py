"""Query embeddings of concurrent requests share model calls (QueryBatcher), give the vectors a query
embedded alone gets, and an int8 model is there for those who trade a little recall for speed."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from services.root.container import Container
from tool_selector.config.settings import Settings
from tool_selector.core.errors import EmbedderError
from tool_selector.embedding.batching import QueryBatcher, embed_queries
from tool_selector.embedding.embedders import (
    HashingEmbedder,
    LazyEmbedder,
    MiniLMEmbedder,
    model_id_for,
    relevance_model_id,
)

QUERIES = [
    "what time is it in Tokyo",
    "open an issue about the login page crashing on Safari when the password has an emoji",
    "fetch https://example.com and summarise it",
    "convert 20 euros to yen",
    "list the files in my home folder",
    "remember that my sister's birthday is on the 3rd of May",
    "think step by step about the cheapest route from Lyon to Oslo by train",
    "diff",
]


class _Counting:
    """A test double counting model calls; each call waits until released, so that queries pile up."""

    model_id = "counting"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()
        self.inner = HashingEmbedder(dim=8)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.embed_queries([text])[0])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.release.wait(5)
        if "boom" in texts:
            raise EmbedderError("the model fell over")
        return self.inner.embed_documents(texts)


def _concurrently(batcher: QueryBatcher, texts: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    errors: list[BaseException] = []

    def ask(text: str) -> None:
        try:
            out[text] = batcher.embed_query(text)
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    if errors:
        raise errors[0]
    return out


def test_queries_that_arrive_together_share_one_model_call() -> None:
    inner = _Counting()
    batcher = QueryBatcher(inner, window_s=0.05)
    first = threading.Thread(target=batcher.embed_query, args=("warm up",))
    first.start()  # the thread is busy with this one while the others queue up
    while not inner.calls:
        pass
    waiting = threading.Thread(target=_concurrently, args=(batcher, QUERIES))
    waiting.start()
    while len(batcher._queue) < len(QUERIES):  # all queued behind the running call
        pass
    inner.release.set()
    first.join(5)
    waiting.join(10)
    assert inner.calls[0] == ["warm up"]
    assert sorted(inner.calls[1]) == sorted(QUERIES)  # one call for all that were waiting
    assert (batcher.batches, batcher.queries) == (2, len(QUERIES) + 1)
    batcher.close()


def test_each_caller_gets_its_own_row_and_a_lone_query_is_not_held_back() -> None:
    inner = _Counting()
    inner.release.set()
    batcher = QueryBatcher(inner, window_s=5.0)  # a window this long would show if a lone query waited
    alone = batcher.embed_query("just me")
    assert np.array_equal(alone, HashingEmbedder(dim=8).embed_query("just me"))
    got = _concurrently(batcher, QUERIES)
    for text, vector in got.items():
        assert np.array_equal(vector, HashingEmbedder(dim=8).embed_query(text))
    batcher.close()


def test_a_failed_model_call_fails_its_callers_and_the_next_query_is_served() -> None:
    inner = _Counting()
    inner.release.set()
    batcher = QueryBatcher(inner)
    with pytest.raises(EmbedderError, match="fell over"):
        batcher.embed_query("boom")
    assert batcher.embed_query("fine").shape == (8,)
    batcher.close()
    assert batcher.embed_query("after close: a new thread").shape == (8,)  # close is not the end
    batcher.close()


def test_batched_real_queries_equal_queries_embedded_alone(embedder: MiniLMEmbedder) -> None:
    alone = np.stack([embedder.embed_query(q) for q in QUERIES])
    together = embed_queries(embedder, QUERIES)  # cut into length groups, padded within a group
    assert together.shape == (len(QUERIES), 384)
    assert np.abs(together - alone).max() < 1e-5
    batcher = QueryBatcher(embedder)
    for text, vector in _concurrently(batcher, QUERIES).items():
        assert np.abs(vector - alone[QUERIES.index(text)]).max() < 1e-5
    batcher.close()


def test_the_container_batches_queries_unless_the_window_is_zero(tmp_path: Path) -> None:
    with Container(Settings(data_dir=tmp_path / "a", cache_dir=tmp_path / "cache")) as container:
        assert isinstance(container.embedder, QueryBatcher)
        assert container.embedder.model_id == relevance_model_id()  # the default, not loaded yet
    settings = Settings(
        data_dir=tmp_path / "b", cache_dir=tmp_path / "cache", embedding={"query_batch_window_ms": 0}
    )
    with Container(settings) as container:
        assert isinstance(container.embedder, LazyEmbedder)


def test_the_int8_model_is_close_to_the_float_one_and_names_its_vectors_apart(
    session_cache_dir: Path, base_embedder: MiniLMEmbedder
) -> None:
    embedder = base_embedder
    int8 = MiniLMEmbedder(session_cache_dir, engine="onnx-int8", threads=2)
    assert int8.model_id == model_id_for("onnx-int8") == "all-MiniLM-L6-v2-int8" != embedder.model_id
    assert any((session_cache_dir / "models").glob("*-int8.onnx"))  # quantized once, kept
    ours, reference = int8.embed_documents(QUERIES), embedder.embed_documents(QUERIES)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.95  # measured 0.97-1.00 on 200 metatool queries (mean 0.993)
    assert cosines.min() < 0.99999  # and it is another model, not the float one under a new name
