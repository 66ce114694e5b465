"""The agent's query with the person's words beside it (issue 40): ``Resolver.resolve(query, request=...)``
searches and judges the query; the request's arguments (a URL, a path...) only order the tools by what
their parameters take. A written catalog indexed with the hashing embedder (bag of words: what it matches
is what the text says), resolved end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tool_selector.config.settings import Settings
from tool_selector.core.arguments import Argument
from tool_selector.core.errors import InvalidInputError
from tool_selector.core.models import Resolution
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.resolve.resolver import with_request_arguments

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
TOOLS = [
    ("web", "read_page", "Read the contents of a web page.", {"url": {"type": "string"}}),
    ("web", "read_saved_page", "Read the contents of a saved web page.", {"name": {"type": "string"}}),
    ("shop", "list_pricing_plans", "The pricing plans of the shop.", {"plan": {"type": "string"}}),
    ("shop", "list_orders", "The shop's orders, a page at a time.", {"page": {"type": "integer"}}),
]
QUERY = "read the contents of a web page"  # the agent's query: the capability, no value
REQUEST = "what does https://example.org/pricing say about the plans?"  # the person's words


@pytest.fixture
def service(tmp_path: Path) -> Iterator[ReadPath]:
    folder = tmp_path / "catalog"
    folder.mkdir()
    servers = [{"name": s, "description": f"{s} service"} for s in ("web", "shop")]
    tools = [
        {"server": s, "name": n, "description": d, "input_schema": {"type": "object", "properties": p}}
        for s, n, d, p in TOOLS
    ]
    (folder / "servers.json").write_text(json.dumps(servers))
    (folder / "tools.json").write_text(json.dumps(tools))
    settings = Settings(
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        sync={"enricher": "none"},
        search={"rerank": False, "arguments": True, "argument_weight": 0.25},
    )
    with Container(settings, embedder=HASHING) as container:
        import_catalog_dir(container, folder, approve=True, actor="test")
        build_index(container)
        yield ReadPath.fixed(container)


def _resolve(service: ReadPath, query: str, request: str | None = None) -> Resolution:
    return service.decide(query, request=request).resolution


def _scores(resolution: Resolution) -> dict[str, float]:
    return {t.id: t.score for t in resolution.tools}


def test_a_tool_whose_parameters_take_the_requests_url_moves_up_though_the_query_names_none(
    service: ReadPath,
) -> None:
    alone, beside = _resolve(service, QUERY), _resolve(service, QUERY, REQUEST)
    assert _scores(beside)["web::read_page"] > _scores(alone)["web::read_page"] + 0.25
    assert beside.tools[0].id == "web::read_page"
    saved = _scores(beside)["web::read_saved_page"] - _scores(alone)["web::read_saved_page"]
    assert 0 < saved < 0.25  # takes no url: only its power's share of the gain
    for other in ("shop::list_pricing_plans", "shop::list_orders"):
        assert _scores(beside)[other] == pytest.approx(_scores(alone)[other])  # the other power's


def test_the_words_of_the_request_are_not_searched(service: ReadPath) -> None:
    chatty = "hey, the shop's pricing plans and orders were mentioned, can you help?"  # no argument in it
    alone, beside = _resolve(service, QUERY), _resolve(service, QUERY, chatty)
    assert [(t.id, t.score) for t in beside.tools] == [(t.id, t.score) for t in alone.tools]
    assert [(p.name, p.score) for p in beside.powers] == [(p.name, p.score) for p in alone.powers]
    assert beside.confidence == alone.confidence
    assert beside.query == QUERY


def test_the_confidence_reads_the_arguments_of_the_query_alone(service: ReadPath) -> None:
    """The confidence was fitted on what the searched text says: a request's URL does not count as an
    argument the query's top tool takes (its argument_fit stays the query's)."""
    beside = _resolve(service, QUERY, REQUEST)
    assert beside.features["argument_fit"] == 0.0
    with_url = _resolve(service, "read the contents of https://example.org/pricing")
    assert with_url.features["argument_fit"] == 1.0


def test_a_blank_request_is_no_request_and_a_huge_one_is_refused_with_what_to_do(
    service: ReadPath,
) -> None:
    alone = _resolve(service, QUERY)
    assert _scores(_resolve(service, QUERY, "   ")) == _scores(alone)
    limit = service.container.settings.search.max_query_chars
    with pytest.raises(InvalidInputError) as info:
        _resolve(service, QUERY, "x" * (limit + 1))
    assert "The request is" in str(info.value)
    assert "leave request out" in (info.value.hint or "")


def test_the_requests_arguments_follow_the_querys_each_once() -> None:
    own = (Argument("url", "https://example.org/a"),)
    merged = with_request_arguments(own, "compare https://example.org/a with ~/notes/b.md")
    assert merged == (Argument("url", "https://example.org/a"), Argument("path", "~/notes/b.md"))
    assert with_request_arguments(own, None) == own
