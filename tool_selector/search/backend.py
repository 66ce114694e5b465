"""The one seam between the resolver and a search index: the ``SearchBackend`` protocol.

A backend holds two kinds of document, kept apart: tool documents (the default target of every method)
and server documents, one per server ("power"), searched with ``SearchQuery(target="servers")`` under
the server field boosts. ``upsert`` sorts documents by their ``kind``; ``delete``, ``ids`` and ``count``
name their target. A server search of an index that holds no server documents (one written before they
existed) finds nothing rather than failing.

Beyond the protocol, a backend may declare **capabilities**: small protocols a caller checks with
``isinstance`` and uses when present, falling back to the protocol alone otherwise. The contract suite
(tests/tool_selector/search/test_backend_contract.py) runs each capability's contract on every backend
that declares it. Today the embedded backend declares all four; the Weaviate backend none.

- ``RowWriter``: writes documents with their vectors as the rows of one matrix (a first build in bulk).
- ``ScopedIds``: the ids of a few servers' documents without listing every id (a write's check).
- ``HeldDocuments``: the documents it holds, as written (a reader builds its word evidence from them).
- ``Replaceable``: an empty copy staged aside, then published in one step (a rebuild that never leaves
  the index empty).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal, Protocol, Self, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tool_selector.core.models import SearchHit, ToolDocument

Fusion = Literal["relative_score", "ranked"]
Target = Literal["tools", "servers"]


class SearchQuery(BaseModel):
    """One hybrid query. ``alpha`` 0 is keyword only, 1 is vector only (Weaviate's convention)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    vector: np.ndarray | None = None
    alpha: float = Field(default=0.75, ge=0.0, le=1.0)
    limit: int = Field(default=10, ge=1)
    field_boosts: dict[str, float] = Field(default_factory=dict)
    fusion: Fusion = "relative_score"
    candidates: int = Field(default=100, ge=1, description="hits per retriever before fusion")
    target: Target = Field(default="tools", description="tool documents, or server documents")


class UpsertResult(BaseModel):
    written: int = 0
    errors: dict[str, str] = Field(default_factory=dict, description="document id -> what went wrong")


@runtime_checkable
class SearchBackend(Protocol):
    def upsert(self, documents: Sequence[ToolDocument]) -> UpsertResult:
        """Insert or replace documents by id (tool and server documents, each by its ``kind``); idempotent."""
        ...

    def delete(self, ids: Sequence[str], *, target: Target = "tools") -> int:
        """Remove documents of ``target`` by id; returns how many existed."""
        ...

    def count(self, *, target: Target = "tools") -> int:
        """How many documents of ``target`` the index holds."""
        ...

    def ids(self, *, target: Target = "tools") -> dict[str, str]:
        """Every indexed id of ``target`` with its text hash (lets the indexer skip unchanged documents)."""
        ...

    def hybrid_search(self, query: SearchQuery) -> list[SearchHit]:
        """Ranked hits of ``query.target``; each carries the fused score and the raw keyword and vector
        scores. A server hit's id, server and name are the server's name."""
        ...

    def drop(self) -> None:
        """Remove every document of both kinds and any schema the backend keeps; the next upsert starts
        afresh."""
        ...

    def refresh(self) -> bool:
        """Pick up writes other processes made since the last look; True when something changed."""
        ...

    def close(self) -> None: ...


# -- capabilities (see the module docstring) -----------------------------------------------------------


@runtime_checkable
class RowWriter(Protocol):
    """Writes documents with their vectors given as the rows of one matrix of ``dim`` columns."""

    dim: int

    def write_rows(self, documents: Sequence[ToolDocument], vectors: np.ndarray) -> int: ...


@runtime_checkable
class ScopedIds(Protocol):
    """Finds the documents of a few servers (a tool document's id is ``<server>::<name>``, a server
    document's the server's name) without listing every id."""

    def ids_of_servers(self, servers: Collection[str], *, target: Target = "tools") -> dict[str, str]: ...


@runtime_checkable
class HeldDocuments(Protocol):
    """Gives back the documents it holds of ``target``, as they were written."""

    def documents(self, *, target: Target = "tools") -> list[ToolDocument]: ...


@runtime_checkable
class Replaceable(Protocol):
    """Stages an empty copy of itself aside and makes a filled one current in one step."""

    def staged(self) -> Self: ...

    def publish(self, staged: Self) -> None: ...


CAPABILITIES: tuple[type, ...] = (RowWriter, ScopedIds, HeldDocuments, Replaceable)


def capabilities(backend: object) -> list[str]:
    """The names of the capabilities ``backend`` declares."""
    return [c.__name__ for c in CAPABILITIES if isinstance(backend, c)]


def fuse_relative(keyword: dict[int, float], vector: dict[int, float], alpha: float) -> dict[int, float]:
    """Weaviate's relativeScoreFusion: min-max scale each list to [0, 1], then alpha-weight and add.

    Good for ordering only: the best hit of any query scores close to 1, nonsense included.
    """

    def scaled(scores: dict[int, float]) -> dict[int, float]:
        if not scores:
            return {}
        low, high = min(scores.values()), max(scores.values())
        if high - low <= 1e-12:
            return {k: 1.0 for k in scores}
        return {k: (v - low) / (high - low) for k, v in scores.items()}

    kw, vec = scaled(keyword), scaled(vector)
    return {k: alpha * vec.get(k, 0.0) + (1.0 - alpha) * kw.get(k, 0.0) for k in set(kw) | set(vec)}


def fuse_ranked(
    keyword: dict[int, float], vector: dict[int, float], alpha: float, k: int = 60
) -> dict[int, float]:
    """Weaviate's rankedFusion: alpha-weighted reciprocal rank fusion."""
    out: dict[int, float] = {}
    for weight, scores in ((1.0 - alpha, keyword), (alpha, vector)):
        ranked = sorted(scores, key=lambda d: -scores[d])
        for rank, doc in enumerate(ranked):
            out[doc] = out.get(doc, 0.0) + weight / (k + rank)
    return out
