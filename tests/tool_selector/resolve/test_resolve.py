"""The resolver on examples/demo-catalog indexed with the real model: queries it refuses before any work."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from services.resolve.snapshot import IndexSnapshot
from services.root.container import Container
from tool_selector.core.errors import InvalidInputError
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.resolve.judge import capability_judge
from tool_selector.resolve.resolver import Resolver


class _CountingEmbedder:
    """The real model, counting the queries it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.queries: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.inner.embed_query(text)


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("", ["The query is empty", "Describe in words what you want to do"]),
        ("  \n\t ", ["The query is empty", "Describe in words what you want to do"]),
        ("x" * 100_000, ["100,000 characters", "the limit is 32,000", "Shorten it"]),
    ],
    ids=["empty", "whitespace", "100kB"],
)
def test_the_resolver_refuses_unusable_queries_and_says_what_to_do(
    demo_container: Container, embedder: MiniLMEmbedder, query: str, says: list[str]
) -> None:
    counting = _CountingEmbedder(embedder)
    resolver = Resolver(
        demo_container.backend,
        counting,
        demo_container.calibration,
        alpha=0.75,
        field_boosts=demo_container.settings.search.field_boosts,
        max_query_chars=demo_container.settings.search.max_query_chars,
        capability=capability_judge(),
    )
    terms = IndexSnapshot(demo_container).terms
    with pytest.raises(InvalidInputError) as info:
        resolver.resolve(query, terms)
    for words in says:
        assert words in str(info.value)
    assert counting.queries == []  # refused before any work
    assert resolver.resolve("  list my GitHub projects  ", terms).query == "list my GitHub projects"
    assert counting.queries == ["list my GitHub projects"]


def test_each_step_of_a_multi_step_request_lists_at_most_three_powers_and_three_tools_best_first() -> None:
    from tool_selector.core.models import search_hit
    from tool_selector.resolve.resolver import step_of

    hits = [
        search_hit(f"s{i}::t{j}", f"s{i}", f"t{j}", 1.0 - i / 10 - j / 100, 0.5, 0.5)
        for i in range(5)
        for j in range(2)
    ]
    step = step_of("one step", hits, "hybrid")
    assert step.powers == ["s0", "s1", "s2"]
    assert step.tools == ["s0::t0", "s0::t1", "s1::t0"]
