"""The Weaviate fake checked with the plain weaviate-client SDK (no project code): every operation the
Weaviate backend uses round-trips, and the search semantics come out as the fake's docstring says."""

from __future__ import annotations

import math
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import weaviate
import weaviate.retry
from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.classes.data import DataObject
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.classes.query import Filter, HybridFusion, MetadataQuery
from weaviate.collections import Collection
from weaviate.exceptions import (
    UnexpectedStatusCodeError,
    WeaviateConnectionError,
    WeaviateDeleteManyError,
    WeaviateInsertManyAllFailedError,
)
from weaviate.proto.v1 import base_search_pb2, search_get_pb2, weaviate_pb2_grpc
from weaviate.util import generate_uuid5

from tests.support.weaviate_fake import FakeWeaviate

EXPLAIN_LINE = re.compile(
    r"\nHybrid \(Result Set (keyword,bm25|vector,hybridVector)\) Document ([0-9a-f-]{36}): "
    r"original score ([-+0-9.e]+), normalized score: ([-+0-9.e]+)"
)


def connect(server: FakeWeaviate, key: str | None = None) -> weaviate.WeaviateClient:
    return weaviate.connect_to_custom(
        http_host="127.0.0.1",
        http_port=server.http_port,
        http_secure=False,
        grpc_host="127.0.0.1",
        grpc_port=server.grpc_port,
        grpc_secure=False,
        auth_credentials=Auth.api_key(key) if key else None,
        additional_config=AdditionalConfig(timeout=Timeout(init=5, query=10, insert=10)),
        skip_init_checks=False,
    )


def create_tools(client: weaviate.WeaviateClient, name: str = "Tool") -> Collection[Any, Any]:
    return client.collections.create(
        name,
        description="tools; vectors: test (3)",
        properties=[
            Property(
                name="tool_id",
                data_type=DataType.TEXT,
                tokenization=Tokenization.FIELD,
                index_searchable=False,
            ),
            Property(name="name", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
            Property(name="description", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
            Property(name="tags", data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.WHITESPACE),
            Property(
                name="text_hash", data_type=DataType.TEXT, index_searchable=False, index_filterable=False
            ),
        ],
        vector_config=Configure.Vectors.self_provided(
            vector_index_config=Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
        ),
        inverted_index_config=Configure.inverted_index(
            bm25_k1=1.2, bm25_b=0.75, stopwords_preset=StopwordsPreset.NONE
        ),
    )


def tool(tool_id: str, vector: list[float], **props: Any) -> DataObject[Any, Any]:
    return DataObject(
        uuid=generate_uuid5(tool_id),
        properties={"tool_id": tool_id, "text_hash": "h", **props},
        vector=vector,
    )


def searches(server: FakeWeaviate) -> list[Any]:
    return [request for method, request in server.calls if method == "Search"]


@pytest.fixture
def fake() -> Iterator[FakeWeaviate]:
    with FakeWeaviate() as server:
        yield server


@pytest.fixture
def client(fake: FakeWeaviate) -> Iterator[weaviate.WeaviateClient]:
    c = connect(fake)
    yield c
    c.close()


@pytest.fixture
def tools(client: weaviate.WeaviateClient) -> Collection[Any, Any]:
    return create_tools(client)


def hybrid(collection: Collection[Any, Any], query: str | None, vector: list[float], **kwargs: Any) -> Any:
    options: dict[str, Any] = {
        "alpha": 0.5,
        "query_properties": ["name", "description"],
        "fusion_type": HybridFusion.RELATIVE_SCORE,
        "limit": 10,
        "return_metadata": MetadataQuery(score=True, explain_score=True),
        "include_vector": True,
        "return_properties": ["tool_id", "name"],
    }
    return collection.query.hybrid(query=query, vector=vector, **{**options, **kwargs}).objects


def test_the_sdk_connects_creates_a_collection_and_reads_its_config_back(
    fake: FakeWeaviate, client: weaviate.WeaviateClient
) -> None:
    assert fake.calls[0][0] == "Check"  # the gRPC health check of connect()
    assert ("GET", "/v1/meta") in fake.rest_calls
    assert ("GET", "/fake/pypi-version-check") in fake.rest_calls  # the SDK's PyPI nudge, kept local
    assert client.collections.exists("Tool") is False
    create_tools(client)
    assert client.collections.exists("Tool") is True
    config = client.collections.use("Tool").config.get()
    assert config.description == "tools; vectors: test (3)"
    props = {p.name: p for p in config.properties}
    assert list(props) == ["tool_id", "name", "description", "tags", "text_hash"]
    assert props["tool_id"].tokenization == Tokenization.FIELD and props["tool_id"].index_searchable is False
    assert (
        props["tags"].data_type == DataType.TEXT_ARRAY
        and props["tags"].tokenization == Tokenization.WHITESPACE
    )
    assert props["text_hash"].index_filterable is False
    assert (config.inverted_index_config.bm25.k1, config.inverted_index_config.bm25.b) == (1.2, 0.75)
    assert config.inverted_index_config.stopwords.preset == StopwordsPreset.NONE
    client.collections.delete("Tool")
    assert client.collections.exists("Tool") is False


def test_inserting_the_same_objects_twice_replaces_them(
    fake: FakeWeaviate, tools: Collection[Any, Any]
) -> None:
    first = [tool(f"t{i}", [1.0, float(i), 0.0], name=f"tool {i}") for i in range(5)]
    assert not tools.data.insert_many(first).has_errors
    again = [tool(f"t{i}", [1.0, float(i), 0.0], name=f"renamed {i}") for i in range(5)]
    assert not tools.data.insert_many(again).has_errors
    assert tools.aggregate.over_all(total_count=True).total_count == 5
    names = {o.properties["name"] for o in tools.iterator(return_properties=["name"])}
    assert names == {f"renamed {i}" for i in range(5)}
    stored = fake.object("Tool", str(generate_uuid5("t3")))
    assert stored is not None and stored["properties"]["name"] == "renamed 3"
    assert stored["vector"] == [1.0, 3.0, 0.0] and fake.count("Tool") == 5
    assert fake.properties("Tool")["tags"]["dataType"] == ["text[]"]


def test_one_bad_object_is_refused_while_the_others_are_stored(tools: Collection[Any, Any]) -> None:
    objects = [
        tool("good-1", [1.0, 0.0, 0.0], name="fine"),
        tool("unknown-prop", [1.0, 0.0, 0.0], colour="red"),
        tool("list-for-text", [1.0, 0.0, 0.0], name=["not", "a", "string"]),
        tool("text-for-list", [1.0, 0.0, 0.0], tags="not a list"),
        tool("short-vector", [1.0, 0.0], name="fine"),
        tool("good-2", [0.0, 1.0, 0.0], name="fine", tags=["a", "b"]),
    ]
    answer = tools.data.insert_many(objects)
    errors = {i: e.message for i, e in answer.errors.items()}
    assert sorted(errors) == [1, 2, 3, 4]
    assert "no such prop with name 'colour'" in errors[1]
    assert "invalid text property 'name'" in errors[2]
    assert "invalid text array property 'tags'" in errors[3]
    assert "vector with length 2" in errors[4] and "length 3" in errors[4]
    stored = {o.properties["tool_id"] for o in tools.iterator(return_properties=["tool_id"])}
    assert stored == {"good-1", "good-2"}


def test_insert_many_raises_when_every_object_is_refused(tools: Collection[Any, Any]) -> None:
    with pytest.raises(WeaviateInsertManyAllFailedError, match="no such prop"):
        tools.data.insert_many([tool("a", [1.0, 0.0, 0.0], colour="red")])


def test_delete_many_reports_matches_and_removes_only_them(tools: Collection[Any, Any]) -> None:
    tools.data.insert_many([tool(f"t{i}", [1.0, float(i), 0.0]) for i in range(6)])
    gone = tools.data.delete_many(
        where=Filter.by_id().contains_any(
            [generate_uuid5("t0"), generate_uuid5("t1"), generate_uuid5("nope")]
        )
    )
    assert (gone.matches, gone.successful, gone.failed) == (2, 2, 0)
    by_prop = tools.data.delete_many(where=Filter.by_property("tool_id").contains_any(["t2", "t3"]))
    assert by_prop.successful == 2
    left = {o.properties["tool_id"] for o in tools.iterator(return_properties=["tool_id"])}
    assert left == {"t4", "t5"}


def test_aggregate_over_all_counts_objects_over_grpc(fake: FakeWeaviate, tools: Collection[Any, Any]) -> None:
    assert tools.aggregate.over_all(total_count=True).total_count == 0
    tools.data.insert_many([tool(f"t{i}", [1.0, 0.0, float(i)]) for i in range(7)])
    assert tools.aggregate.over_all(total_count=True).total_count == 7
    method, request = fake.calls[-1]
    assert method == "Aggregate" and request.objects_count is True


def test_the_iterator_pages_through_every_object_in_uuid_order(
    fake: FakeWeaviate, tools: Collection[Any, Any]
) -> None:
    objects = [tool(f"t{i:03d}", [1.0, 0.0, float(i)]) for i in range(250)]
    tools.data.insert_many(objects)
    seen = [str(o.uuid) for o in tools.iterator(return_properties=["tool_id", "text_hash"])]
    assert seen == sorted(str(o.uuid) for o in objects)
    pages = searches(fake)
    assert [p.limit for p in pages] == [100, 100, 100, 100]
    assert [p.after for p in pages] == ["", seen[99], seen[199], seen[249]]


def test_concurrent_writers_from_threads_all_land(client: weaviate.WeaviateClient) -> None:
    tools = create_tools(client)

    def write(start: int) -> None:
        tools.data.insert_many([tool(f"t{i}", [1.0, 0.0, float(i)]) for i in range(start, start + 50)])

    threads = [threading.Thread(target=write, args=(n * 50,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tools.aggregate.over_all(total_count=True).total_count == 200


@pytest.fixture
def crafted(tools: Collection[Any, Any]) -> Collection[Any, Any]:
    """keyword-best is the keyword match and the worst vector; vector-best the reverse; both in between."""
    tools.data.insert_many(
        [
            tool("keyword-best", [0.0, 1.0, 0.0], name="read file", description="open a path"),
            tool("vector-best", [1.0, 0.0, 0.0], name="send mail", description="deliver a message"),
            tool("both", [0.7, 0.7, 0.0], name="read mail", description="fetch messages"),
        ]
    )
    return tools


def test_alpha_zero_ranks_by_keywords_and_alpha_one_by_vectors(crafted: Collection[Any, Any]) -> None:
    by_keywords = hybrid(crafted, "read file", [1.0, 0.0, 0.0], alpha=0.0)
    assert [o.properties["tool_id"] for o in by_keywords] == [
        "keyword-best",
        "both",
    ]  # no keyword hit, no result
    by_vectors = hybrid(crafted, "read file", [1.0, 0.0, 0.0], alpha=1.0)
    assert [o.properties["tool_id"] for o in by_vectors] == ["vector-best", "both", "keyword-best"]
    assert by_vectors[0].vector["default"] == [1.0, 0.0, 0.0]
    assert by_vectors[0].metadata.score == pytest.approx(
        1.0
    )  # relativeScore: the best of a set scores its weight


def test_a_query_without_text_is_a_vector_search(crafted: Collection[Any, Any]) -> None:
    found = hybrid(crafted, None, [0.0, 1.0, 0.0], alpha=0.5)
    assert found[0].properties["tool_id"] == "keyword-best"
    assert all("keyword,bm25" not in (o.metadata.explain_score or "") for o in found)


def test_boosting_a_property_changes_the_ranking(tools: Collection[Any, Any]) -> None:
    tools.data.insert_many(
        [
            tool("in-name", [1.0, 0.0, 0.0], name="archive", description="zip files together"),
            tool("in-description", [1.0, 0.0, 0.0], name="compress", description="archive files together"),
        ]
    )

    def order(*properties: str) -> list[str]:
        found = hybrid(tools, "archive", [1.0, 0.0, 0.0], alpha=0.0, query_properties=list(properties))
        return [o.properties["tool_id"] for o in found]

    assert order("name^3", "description") == ["in-name", "in-description"]
    assert order("name", "description^3") == ["in-description", "in-name"]
    assert order("name^1.5", "description^0.5") == ["in-name", "in-description"]


def test_servers_before_1_37_weigh_a_fractional_boost_as_zero() -> None:
    with FakeWeaviate(version="1.33.0") as old:
        client = connect(old)
        try:
            tools = create_tools(client)
            tools.data.insert_many([tool("a", [1.0, 0.0, 0.0], name="archive", description="archive")])
            assert hybrid(tools, "archive", [1.0, 0.0, 0.0], alpha=0.0, query_properties=["name^1.5"]) == []
            assert len(hybrid(tools, "archive", [1.0, 0.0, 0.0], alpha=0.0, query_properties=["name^2"])) == 1
            sent = searches(old)[-1].hybrid_search
            assert sent.use_alpha_param is False and sent.alpha == 0.0  # the pre-1.36.6 wire field
        finally:
            client.close()


def test_bm25_scores_follow_the_bm25f_formula(tools: Collection[Any, Any]) -> None:
    tools.data.insert_many(
        [
            tool("two", [1.0, 0.0, 0.0], name="apple banana"),
            tool("one", [1.0, 0.0, 0.0], name="Apple"),
            tool("other", [1.0, 0.0, 0.0], name="cherry"),
        ]
    )
    found = tools.query.bm25("apple", query_properties=["name"], return_metadata=MetadataQuery(score=True))
    scores = {o.properties["tool_id"]: o.metadata.score for o in found.objects}
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    average = 4 / 3  # tokens per name

    def expected(length: int) -> float:
        return idf * 1 / (1 + 1.2 * (1 - 0.75 + 0.75 * length / average))

    assert scores == pytest.approx({"one": expected(1), "two": expected(2)}, rel=1e-6)


def test_near_vector_reports_the_cosine_distance(crafted: Collection[Any, Any]) -> None:
    found = crafted.query.near_vector([1.0, 0.0, 0.0], limit=2, return_metadata=MetadataQuery(distance=True))
    assert [o.properties["tool_id"] for o in found.objects] == ["vector-best", "both"]
    assert [o.metadata.distance for o in found.objects] == pytest.approx(
        [0.0, 1 - 0.7 / math.hypot(0.7, 0.7)]
    )


def test_en_stopwords_drop_from_word_tokenized_queries_only(client: weaviate.WeaviateClient) -> None:
    notes = client.collections.create(
        "Note",
        properties=[
            Property(name="body", data_type=DataType.TEXT),  # word tokenization, the default
            Property(name="raw", data_type=DataType.TEXT, tokenization=Tokenization.WHITESPACE),
        ],
        vector_config=Configure.Vectors.self_provided(),
    )  # stopwords preset en, the default
    notes.data.insert_many([DataObject(properties={"body": "The Cat", "raw": "The Cat"}, vector=[1.0, 0.0])])

    def hits(query: str, prop: str) -> int:
        return len(notes.query.bm25(query, query_properties=[prop]).objects)

    assert (hits("cat", "body"), hits("THE", "body"), hits("the", "body")) == (1, 0, 0)
    assert (hits("The", "raw"), hits("the", "raw")) == (1, 0)  # whitespace: case kept, stopwords kept


def test_relative_score_explain_names_both_result_sets_and_adds_up(crafted: Collection[Any, Any]) -> None:
    found = hybrid(crafted, "read mail", [0.6, 0.8, 0.0], alpha=0.8)
    both = next(o for o in found if o.properties["tool_id"] == "both")
    explain = both.metadata.explain_score
    assert explain.startswith("\nHybrid (Result Set keyword,bm25) Document ")
    assert " - \nHybrid (Result Set vector,hybridVector) Document " in explain
    lines = {m[0]: m for m in EXPLAIN_LINE.findall(explain)}
    assert {lines[s][1] for s in lines} == {str(both.uuid)}
    keyword = crafted.query.bm25(
        "read mail", query_properties=["name", "description"], return_metadata=MetadataQuery(score=True)
    )
    bm25 = next(o.metadata.score for o in keyword.objects if o.uuid == both.uuid)
    assert float(lines["keyword,bm25"][2]) == pytest.approx(bm25, rel=1e-6)
    cosine = (0.6 * 0.7 + 0.8 * 0.7) / math.hypot(0.7, 0.7)
    assert float(lines["vector,hybridVector"][2]) == pytest.approx(cosine, rel=1e-6)
    normalized = float(lines["keyword,bm25"][3]) + float(lines["vector,hybridVector"][3])
    assert both.metadata.score == pytest.approx(normalized, rel=1e-6)


def test_ranked_fusion_adds_weight_over_sixty_plus_rank(crafted: Collection[Any, Any]) -> None:
    found = hybrid(crafted, "read file", [0.0, 1.0, 0.0], alpha=0.25, fusion_type=HybridFusion.RANKED)
    top = found[0]
    assert top.properties["tool_id"] == "keyword-best"  # first in both sets
    assert top.metadata.score == pytest.approx(0.25 / 60 + 0.75 / 60, rel=1e-6)
    assert "Hybrid (Result Set vector,hybridVector) Document" in top.metadata.explain_score
    assert re.search(
        r"Result Set keyword,bm25\) Document \S+ contributed 0\.0125 to the score", top.metadata.explain_score
    )


def test_the_hybrid_request_carries_alpha_fusion_properties_and_limit(
    fake: FakeWeaviate, crafted: Collection[Any, Any]
) -> None:
    hybrid(
        crafted,
        "read",
        [1.0, 0.0, 0.0],
        alpha=0.3,
        fusion_type=HybridFusion.RANKED,
        query_properties=["name^2", "tags"],
        limit=7,
    )
    request = searches(fake)[-1]
    sent = request.hybrid_search
    assert sent.use_alpha_param is True and sent.alpha_param == pytest.approx(0.3)  # server >= 1.36.6
    assert FakeWeaviate.sent_alpha(sent) == pytest.approx(0.3)
    assert sent.fusion_type == base_search_pb2.Hybrid.FUSION_TYPE_RANKED
    assert (list(sent.properties), sent.query, request.limit) == (["name^2", "tags"], "read", 7)
    assert request.metadata.score and request.metadata.explain_score
    assert request.metadata.vector or list(request.metadata.vectors)


def test_a_missing_or_wrong_api_key_is_refused() -> None:
    with FakeWeaviate(api_key="secret") as guarded:
        for key in ("wrong", None):
            with pytest.raises(UnexpectedStatusCodeError) as refused:
                connect(guarded, key)
            assert refused.value.status_code == 401
        with grpc.insecure_channel(f"127.0.0.1:{guarded.grpc_port}") as channel:
            stub = weaviate_pb2_grpc.WeaviateStub(channel)
            with pytest.raises(grpc.RpcError) as denied:
                stub.Search(search_get_pb2.SearchRequest(collection="Tool"), timeout=5)
            assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
        client = connect(guarded, "secret")
        try:
            assert create_tools(client).aggregate.over_all(total_count=True).total_count == 0
        finally:
            client.close()


def test_an_injected_unavailable_failure_surfaces_as_the_sdk_error(
    fake: FakeWeaviate, tools: Collection[Any, Any]
) -> None:
    tools.data.insert_many([tool("t", [1.0, 0.0, 0.0])])
    fake.fail_next(1)
    with pytest.raises(WeaviateDeleteManyError, match="UNAVAILABLE"):
        tools.data.delete_many(where=Filter.by_id().contains_any([generate_uuid5("t")]))
    assert tools.data.delete_many(where=Filter.by_id().contains_any([generate_uuid5("t")])).successful == 1


def test_an_injected_rest_failure_is_a_503(fake: FakeWeaviate, client: weaviate.WeaviateClient) -> None:
    fake.fail_next(1, transport="rest")
    with pytest.raises(UnexpectedStatusCodeError) as failed:
        client.collections.exists("Tool")
    assert failed.value.status_code == 503
    assert client.collections.exists("Tool") is False


def test_a_stopped_fake_refuses_connections(fake: FakeWeaviate, client: weaviate.WeaviateClient) -> None:
    fake.stop()
    for port in (fake.http_port, fake.grpc_port):
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(WeaviateConnectionError):
        client.collections.exists("Tool")  # its kept-alive connection was closed too
    with pytest.raises(WeaviateConnectionError):
        connect(fake)
