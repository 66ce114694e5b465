"""The SearchBackend contract: every backend passes the same tests.

Backends:
- ``embedded``: the folder on disk (always).
- ``weaviate-loopback``: the Weaviate backend through the real weaviate-client SDK, against the
  loopback stand-in in ``tests/support/weaviate_fake.py`` (REST + gRPC on 127.0.0.1; it models Weaviate's
  protocol and hybrid/BM25F semantics, it is not Weaviate). Always runs: it checks our adapter.
- ``weaviate-live``: a real Weaviate at ``WEAVIATE_URL`` (``WEAVIATE_GRPC_URL``, ``WEAVIATE_API_KEY``
  when needed). Skipped, with the reason in the summary, when ``WEAVIATE_URL`` is not set.

Vectors come from the HashingEmbedder except in the tier test, which uses the real model: what is
under test is the backend, not the model's semantics.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backends import (
    CATALOG,
    EMBEDDER,
    SERVERS,
    doc,
    query,
    server_doc,
    server_query,
)
from tests.tool_selector.search.conftest import BackendFactory
from tool_selector.config.settings import DEFAULT_FIELD_BOOSTS, DEFAULT_SERVER_FIELD_BOOSTS
from tool_selector.core.errors import IndexMissingError
from tool_selector.search.backend import SearchBackend, SearchQuery

# --------------------------------------------------------------------------- writes


def test_every_backend_satisfies_the_protocol(backend: SearchBackend) -> None:
    assert isinstance(backend, SearchBackend)


def test_upserting_the_same_documents_twice_keeps_one_copy_of_each(make_backend: BackendFactory) -> None:
    opened = make_backend()
    first = opened.upsert(CATALOG)
    second = opened.upsert(CATALOG)
    assert (first.written, second.written) == (len(CATALOG), len(CATALOG))
    assert opened.count() == len(CATALOG)
    updated = CATALOG[0].model_copy(update={"text_hash": "new-hash"})
    opened.upsert([updated])
    assert opened.count() == len(CATALOG)
    assert opened.ids()[CATALOG[0].id] == "new-hash"


def test_a_document_without_a_fitting_vector_is_reported_and_the_others_are_written(
    make_backend: BackendFactory,
) -> None:
    opened = make_backend()
    no_vector = CATALOG[0].model_copy(update={"vector": None})
    short = CATALOG[1].model_copy(update={"vector": [0.1, 0.2]})
    result = opened.upsert([no_vector, short, CATALOG[2]])
    assert result.written == 1
    assert set(result.errors) == {CATALOG[0].id, CATALOG[1].id}
    assert "64" in result.errors[CATALOG[0].id]
    assert opened.ids() == {CATALOG[2].id: CATALOG[2].text_hash}


def test_delete_returns_how_many_of_the_ids_existed(backend: SearchBackend) -> None:
    assert backend.delete([CATALOG[0].id, "Nope::missing", CATALOG[0].id]) == 1
    assert backend.delete(["Nope::missing"]) == 0
    assert backend.count() == len(CATALOG) - 1
    assert CATALOG[0].id not in backend.ids()
    hits = backend.hybrid_search(query("create issue", limit=10))
    assert CATALOG[0].id not in [h.id for h in hits]


def test_count_follows_writes_and_deletes(make_backend: BackendFactory) -> None:
    opened = make_backend()
    assert opened.count() == 0
    opened.upsert(CATALOG[:4])
    assert opened.count() == 4
    opened.upsert(CATALOG[2:])
    assert opened.count() == len(CATALOG)
    opened.delete([CATALOG[1].id, CATALOG[5].id])
    assert opened.count() == len(CATALOG) - 2


def test_ids_maps_every_document_to_its_text_hash(backend: SearchBackend) -> None:
    assert backend.ids() == {d.id: d.text_hash for d in CATALOG}


def test_ids_reads_past_one_page_of_documents(make_backend: BackendFactory) -> None:
    opened = make_backend()
    many = [doc(f"Server {i % 7}", f"tool_{i}", f"does thing number {i}") for i in range(260)]
    assert opened.upsert(many).written == 260
    assert opened.ids() == {d.id: d.text_hash for d in many}


def test_drop_empties_the_backend_and_it_can_be_filled_again(backend: SearchBackend) -> None:
    backend.drop()
    assert backend.count() == 0
    assert backend.ids() == {}
    backend.upsert(CATALOG[:2])
    assert backend.count() == 2


def test_searching_an_empty_backend_raises_index_missing(make_backend: BackendFactory) -> None:
    opened = make_backend()
    with pytest.raises(IndexMissingError) as info:
        opened.hybrid_search(query("anything"))
    assert "empty" in info.value.message
    assert "tool-selector index" in info.value.hint


# --------------------------------------------------------------------------- ranking


def test_the_limit_caps_the_hits(backend: SearchBackend) -> None:
    assert len(backend.hybrid_search(query("issue", limit=2))) == 2
    assert len(backend.hybrid_search(query("issue", limit=4))) == 4


def test_field_boosts_decide_between_a_name_match_and_a_description_match(
    make_backend: BackendFactory,
) -> None:
    opened = make_backend()
    opened.upsert(
        [
            doc("Files", "archive", "Stores things for later"),
            doc("Files", "store", "Put the archive somewhere else"),
            doc("Files", "rename", "Give a file another name"),
        ]
    )
    name_first = opened.hybrid_search(
        query("archive", alpha=0.0, field_boosts={"name": 3.0, "description": 1.0})
    )
    description_first = opened.hybrid_search(
        query("archive", alpha=0.0, field_boosts={"name": 1.0, "description": 3.0})
    )
    assert [h.id for h in name_first] == ["Files::archive", "Files::store"]
    assert [h.id for h in description_first] == ["Files::store", "Files::archive"]


def test_a_field_with_boost_zero_is_not_searched(backend: SearchBackend) -> None:
    only_names = backend.hybrid_search(
        query("weather", alpha=0.0, field_boosts={"name": 1.0, "description": 0.0})
    )
    assert only_names == []
    descriptions = backend.hybrid_search(
        query("weather", alpha=0.0, field_boosts={"name": 0.0, "description": 1.0})
    )
    assert [h.id for h in descriptions] == ["Weather::get_forecast"]


def test_alpha_0_follows_the_keywords_and_alpha_1_the_vectors(make_backend: BackendFactory) -> None:
    """A crafted pair: the keyword favours one tool, the vector the other; alpha picks the winner."""
    opened = make_backend()
    keyword_side = doc("Mail", "send_letter", "Compose a letter and send it by post")
    vector_side = doc("Mail", "post_message", "Publish a short note")
    opened.upsert([keyword_side, vector_side])
    text = "letter"
    aimed = EMBEDDER.embed_query("post message publish short note")  # the vector points at the other tool
    keyword = opened.hybrid_search(
        SearchQuery(text=text, vector=aimed, alpha=0.0, field_boosts=DEFAULT_FIELD_BOOSTS)
    )
    vector = opened.hybrid_search(
        SearchQuery(text=text, vector=aimed, alpha=1.0, field_boosts=DEFAULT_FIELD_BOOSTS)
    )
    assert [h.id for h in keyword] == ["Mail::send_letter"]  # alpha 0: keyword hits only
    assert vector[0].id == "Mail::post_message"
    assert len(vector) == 2  # alpha 1: every document is a vector candidate
    assert all(h.vector_score is not None for h in keyword + vector)  # cosines reported at any alpha


@pytest.mark.parametrize("fusion", ["relative_score", "ranked"])
def test_an_exact_tool_name_ranks_first(backend: SearchBackend, fusion: str) -> None:
    for document in CATALOG:
        hits = backend.hybrid_search(query(document.name, fusion=fusion))
        assert hits[0].id == document.id, (document.name, [h.id for h in hits[:3]])


def test_a_query_of_stopwords_only_finds_no_keyword_hits(backend: SearchBackend) -> None:
    hits = backend.hybrid_search(query("what is the"))
    assert hits  # the vector side still answers
    assert all(h.keyword_score == 0.0 for h in hits)
    assert backend.hybrid_search(query("what is the", alpha=0.0)) == []


def test_hits_carry_the_raw_cosine_next_to_the_fused_score(backend: SearchBackend) -> None:
    q = query("list issues", limit=3)
    hits = backend.hybrid_search(q)
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].id == "Code Host::list_issues"
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)  # relative fusion: the best hit scores ~1
    assert hits[0].keyword_score > 0
    by_id = {d.id: d for d in CATALOG}
    for hit in hits:
        assert hit.vector_score == pytest.approx(float(np.dot(by_id[hit.id].vector, q.vector)), abs=1e-5)


# --------------------------------------------------------------------------- server documents

TOOL_IDS = {d.id for d in CATALOG}
SERVER_NAMES = {d.id for d in SERVERS}


@pytest.fixture
def with_servers(backend: SearchBackend) -> SearchBackend:
    result = backend.upsert(SERVERS)
    assert (result.written, result.errors) == (len(SERVERS), {})
    return backend


@pytest.mark.parametrize(
    ("words", "server"),
    [("meteorological radar", "Weather"), ("git pull requests", "Code Host"), ("calendars", "Clock")],
)
def test_a_server_document_is_found_by_words_only_its_own_text_carries(
    with_servers: SearchBackend, words: str, server: str
) -> None:
    hits = with_servers.hybrid_search(server_query(words, alpha=0.0))
    assert [(h.id, h.server, h.name) for h in hits] == [(server, server, server)]
    assert hits[0].keyword_score > 0
    assert with_servers.hybrid_search(query(words, alpha=0.0)) == []  # no tool document carries them


def test_a_server_document_is_found_by_its_tool_names(with_servers: SearchBackend) -> None:
    hits = with_servers.hybrid_search(server_query("forecast", alpha=0.0))
    assert [h.id for h in hits] == ["Weather"]


def test_server_hits_never_appear_in_tool_searches_and_tool_hits_never_in_server_searches(
    with_servers: SearchBackend,
) -> None:
    for text in ("weather forecast", "create issue", "Code Host", "current time zones", "notebook"):
        tools = with_servers.hybrid_search(query(text, limit=50))
        servers = with_servers.hybrid_search(server_query(text, limit=50))
        assert tools and {h.id for h in tools} <= TOOL_IDS, text
        assert servers and {h.id for h in servers} <= SERVER_NAMES, text


def test_count_ids_and_delete_keep_tool_and_server_documents_apart(with_servers: SearchBackend) -> None:
    assert with_servers.count() == len(CATALOG)
    assert with_servers.count(target="servers") == len(SERVERS)
    assert with_servers.ids() == {d.id: d.text_hash for d in CATALOG}
    assert with_servers.ids(target="servers") == {d.id: d.text_hash for d in SERVERS}
    assert with_servers.delete(["Weather"]) == 0  # no tool has that id
    assert with_servers.delete(["Weather"], target="servers") == 1
    assert with_servers.delete(["Weather::get_forecast"], target="servers") == 0
    assert with_servers.count() == len(CATALOG)
    assert set(with_servers.ids(target="servers")) == SERVER_NAMES - {"Weather"}
    assert "Weather" not in [h.id for h in with_servers.hybrid_search(server_query("meteorological"))]


def test_a_server_named_like_a_tool_id_is_a_separate_document(with_servers: SearchBackend) -> None:
    twin = server_doc("Code Host::create_issue", "A server whose name looks like a tool id", ["ping"])
    assert with_servers.upsert([twin]).written == 1
    assert with_servers.ids()["Code Host::create_issue"] == CATALOG[0].text_hash
    assert with_servers.ids(target="servers")["Code Host::create_issue"] == twin.text_hash
    assert with_servers.delete(["Code Host::create_issue"], target="servers") == 1
    assert with_servers.ids()["Code Host::create_issue"] == CATALOG[0].text_hash


def test_upserting_a_server_document_again_replaces_it(with_servers: SearchBackend) -> None:
    changed = server_doc("Weather", "Tide tables and surf reports", ["get_forecast"], text_hash="new-hash")
    assert with_servers.upsert([changed]).written == 1
    assert with_servers.count(target="servers") == len(SERVERS)
    assert with_servers.ids(target="servers")["Weather"] == "new-hash"
    assert [h.id for h in with_servers.hybrid_search(server_query("surf", alpha=0.0))] == ["Weather"]
    assert with_servers.hybrid_search(server_query("meteorological", alpha=0.0)) == []


def test_server_hits_carry_the_fused_score_the_raw_keyword_score_and_the_cosine(
    with_servers: SearchBackend,
) -> None:
    q = server_query("meteorological forecast", limit=3)
    hits = with_servers.hybrid_search(q)
    assert hits[0].id == "Weather"
    assert hits[0].score == pytest.approx(1.0, abs=1e-3)  # relative fusion, as tools
    assert hits[0].keyword_score > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    by_name = {d.id: d for d in SERVERS}
    for hit in hits:
        assert hit.vector_score == pytest.approx(float(np.dot(by_name[hit.id].vector, q.vector)), abs=1e-5)


def test_a_server_field_with_boost_zero_is_not_searched(with_servers: SearchBackend) -> None:
    boosts = {**DEFAULT_SERVER_FIELD_BOOSTS, "server_description": 0.0}
    assert with_servers.hybrid_search(server_query("meteorological", alpha=0.0, field_boosts=boosts)) == []
    assert (
        with_servers.hybrid_search(server_query("forecast", alpha=0.0, field_boosts=boosts))[0].id
        == "Weather"
    )


def test_a_server_search_of_an_index_without_server_documents_finds_nothing(backend: SearchBackend) -> None:
    assert backend.count(target="servers") == 0
    assert backend.hybrid_search(server_query("weather forecast")) == []
    assert backend.hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"


def test_drop_clears_the_server_documents_too(with_servers: SearchBackend) -> None:
    with_servers.drop()
    assert (with_servers.count(), with_servers.count(target="servers")) == (0, 0)
    assert with_servers.ids(target="servers") == {}
    assert with_servers.upsert(SERVERS[:1]).written == 1
    assert with_servers.ids(target="servers") == {SERVERS[0].id: SERVERS[0].text_hash}
