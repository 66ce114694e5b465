"""The ``embedding`` settings group: the model that turns requests and tool texts into vectors, and the
batcher of concurrent queries (``settings.embedding``; built by the composition root)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class EmbeddingSettings(BaseModel):
    """The embedder: which model, how it runs, and how concurrent queries are batched."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Literal["tool-selector-relevance-v1", "all-MiniLM-L6-v2"] = Field(
        default="tool-selector-relevance-v1",
        description="tool-selector-relevance-v1 = the relevance model shipped in the package "
        "(all-MiniLM-L6-v2 fine-tuned on tool requests, int8 ONNX; engine does not apply); "
        "all-MiniLM-L6-v2 = the general-purpose base model",
    )
    engine: Literal["onnx", "onnx-int8", "torch"] = Field(
        default="onnx",
        description="for all-MiniLM-L6-v2: onnx = an ONNX export made once into cache_dir; onnx-int8 = "
        "that export quantized to int8 (faster, other vectors: rebuild the index); torch = the checkpoint",
    )
    threads: int = Field(default=2, ge=1, le=64, description="threads of one embedding call")
    query_batch_window_ms: float = Field(
        default=2.0,
        ge=0.0,
        le=50.0,
        description="under load, how long the query batcher waits for more concurrent queries to embed "
        "together (0: embed each query on its own, no batcher)",
    )
    query_batch_max: int = Field(default=64, ge=1, le=1024, description="queries in one batched model call")
