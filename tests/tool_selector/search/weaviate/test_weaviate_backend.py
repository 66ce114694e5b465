"""The Weaviate backend's own behaviour, through the real weaviate-client SDK: configuration, errors,
retries, the collection it makes, the queries it sends, the CLI that fills it, and tiers that agree
with the embedded backend.

Against the loopback stand-in (tests/weaviate_fake.py), and against a live Weaviate too where a test
says so and ``WEAVIATE_URL`` is set. The shared behaviour of every backend is in
test_backend_contract.py.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tests.support.backends import (
    CATALOG,
    EMBEDDER,
    LIVE_API_KEY,
    LIVE_GRPC_URL,
    LIVE_SKIP,
    LIVE_URL,
    SERVERS,
    query,
    server_query,
)
from tests.support.paths import GATEWAY_DEMO
from tests.support.weaviate_fake import FakeWeaviate
from tool_selector.config.settings import DEFAULT_FIELD_BOOSTS, DEFAULT_SERVER_FIELD_BOOSTS, Settings
from tool_selector.core.errors import (
    BackendUnavailableError,
    ConfigurationError,
    IndexMissingError,
    StoreError,
)
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.search.text import weighted_tokens
from tool_selector.search.weaviate.backend import WeaviateBackend, WeaviateConfig, object_uuid
from tool_selector.search.weaviate.objects import SERVERS as SERVER_LAYOUT
from tool_selector.search.weaviate.objects import explained_keyword_score, query_properties


@pytest.fixture
def fake() -> Iterator[FakeWeaviate]:
    with FakeWeaviate() as running:
        yield running


def config_for(fake: FakeWeaviate, **kwargs: Any) -> WeaviateConfig:
    kwargs.setdefault("collection", f"ToolTest{uuid.uuid4().hex[:10]}")
    kwargs.setdefault("api_key", fake.api_key)
    return WeaviateConfig(url=fake.url, grpc_url=f"http://127.0.0.1:{fake.grpc_port}", **kwargs)


def open_backend(config: WeaviateConfig) -> WeaviateBackend:
    return WeaviateBackend(config, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- configuration and failures


@pytest.mark.parametrize(
    ("url", "grpc_url", "expected"),
    [
        ("http://localhost:8080", None, (("localhost", 8080, False), ("localhost", 50051, False))),
        ("https://wv.example.com", None, (("wv.example.com", 443, True), ("wv.example.com", 50051, True))),
        (
            "weaviate:9000",
            "grpc.example.com:7000",
            (("weaviate", 9000, False), ("grpc.example.com", 7000, False)),
        ),
    ],
)
def test_addresses_are_read_from_urls_with_sensible_default_ports(
    url: str, grpc_url: str | None, expected: tuple[Any, Any]
) -> None:
    assert WeaviateConfig(url=url, grpc_url=grpc_url).endpoints() == expected


@pytest.mark.parametrize("url", ["ftp://host:21", "http://", "http://host:notaport"])
def test_a_malformed_address_is_a_configuration_error_naming_the_setting(url: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        open_backend(WeaviateConfig(url=url))
    assert "weaviate.url" in info.value.message
    assert "http://HOST:PORT" in info.value.hint


def test_an_unreachable_weaviate_is_a_backend_unavailable_error_naming_the_address_tried() -> None:
    port, grpc_port = free_port(), free_port()
    backend = open_backend(
        WeaviateConfig(
            url=f"http://127.0.0.1:{port}",
            grpc_url=f"http://127.0.0.1:{grpc_port}",
            max_attempts=2,
            connect_timeout_s=1.0,
        )
    )
    with pytest.raises(BackendUnavailableError) as info:
        backend.count()
    assert f"http://127.0.0.1:{port} (gRPC 127.0.0.1:{grpc_port})" in info.value.message
    assert "2 tries" in info.value.message
    assert "TOOL_SELECTOR_WEAVIATE__URL" in info.value.hint
    assert "TOOL_SELECTOR_BACKEND=embedded" in info.value.hint


def test_a_transient_failure_is_retried_and_the_answer_arrives(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake, max_attempts=3))
    backend.upsert(CATALOG)
    fake.fail_next(2, "unavailable")
    hits = backend.hybrid_search(query("weather forecast"))
    assert hits[0].id == "Weather::get_forecast"
    backend.drop()
    backend.close()


def test_transient_failures_past_the_attempts_become_backend_unavailable(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake, max_attempts=2))
    backend.upsert(CATALOG)
    backend.hybrid_search(query("weather forecast"))
    searches_before = sum(1 for name, _ in fake.calls if name == "Search")
    fake.fail_next(10, "unavailable")
    with pytest.raises(BackendUnavailableError) as info:
        backend.hybrid_search(query("weather forecast"))
    assert fake.url.removeprefix("http://") in info.value.message
    # our two tries and nothing more: the SDK's own minute of backoff on UNAVAILABLE is switched off
    assert sum(1 for name, _ in fake.calls if name == "Search") == searches_before + 2
    backend.close()


def test_a_rejected_request_is_not_retried(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake, max_attempts=5))
    backend.upsert(CATALOG)
    backend.hybrid_search(query("weather forecast"))
    searches_before = sum(1 for name, _ in fake.calls if name == "Search")
    fake.fail_next(1, "invalid")
    with pytest.raises(StoreError) as info:
        backend.hybrid_search(query("weather forecast"))
    assert "rejected a search" in info.value.message
    assert sum(1 for name, _ in fake.calls if name == "Search") == searches_before + 1  # one try only
    assert backend.hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"
    backend.drop()
    backend.close()


def test_a_refused_api_key_is_a_configuration_error_that_names_the_setting() -> None:
    with FakeWeaviate(api_key="right-key") as fake:
        good = open_backend(config_for(fake))
        assert good.count() == 0
        bad = open_backend(config_for(fake, api_key="wrong-key"))
        with pytest.raises(ConfigurationError) as info:
            bad.count()
        assert "refused the API key" in info.value.message
        assert "TOOL_SELECTOR_WEAVIATE__API_KEY" in info.value.hint
        good.close()
        bad.close()


def test_a_collection_made_for_another_model_is_refused_with_the_rebuild_command(fake: FakeWeaviate) -> None:
    config = config_for(fake)
    first = open_backend(config)
    first.upsert(CATALOG)
    other = WeaviateBackend(config, model_id="another-model", dim=EMBEDDER.dim)
    with pytest.raises(IndexMissingError) as info:
        other.count()
    assert "another-model" in info.value.message
    assert "tool-selector index rebuild --backend weaviate" in info.value.hint
    other.drop()  # a rebuild can always drop what it cannot use
    assert other.count() == 0
    first.close()
    other.close()


# --------------------------------------------------------------------------- what is stored and sent


def test_object_uuids_are_deterministic_and_distinct_per_tool() -> None:
    assert object_uuid("Weather::get_forecast") == object_uuid("Weather::get_forecast")
    assert object_uuid("Weather::get_forecast") != object_uuid("Weather::get_forecasts")
    assert str(uuid.UUID(object_uuid("a::b"))) == object_uuid("a::b")


def test_the_collection_has_the_design_properties_and_keyword_properties(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert(CATALOG[:1])
    properties = fake.properties(backend.config.collection)
    for name in (
        "tool_id",
        "name",
        "description",
        "enhanced_description",
        "mcp_server_name",
        "action_entities",
        "semantic_keywords",
        "server_domain",
        "use_cases",
        "tags",
        "kw_name",
        "kw_description",
    ):
        assert name in properties, name
    assert properties["action_entities"]["dataType"] == ["text[]"]
    assert properties["kw_name"]["tokenization"] == "whitespace"
    stored = fake.object(backend.config.collection, object_uuid(CATALOG[0].id))
    assert stored["properties"]["tool_id"] == CATALOG[0].id
    assert stored["properties"]["name"] == "create_issue"
    assert stored["properties"]["kw_name"] == "creat issu"  # our tokenizer: split, stemmed
    backend.drop()
    backend.close()


def test_a_search_sends_our_vector_alpha_fusion_and_the_keyword_tokens_of_the_embedded_backend(
    fake: FakeWeaviate,
) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert(CATALOG)
    q = query("Listing issues", alpha=0.3, fusion="ranked", limit=7, candidates=40)
    backend.hybrid_search(q)
    _, request = [c for c in fake.calls if c[0] == "Search"][-1]
    hybrid = request.hybrid_search
    assert FakeWeaviate.sent_alpha(hybrid) == pytest.approx(0.3)
    assert hybrid.query == "list issu"  # our tokenizer: stemmed
    assert hybrid.fusion_type == hybrid.FUSION_TYPE_RANKED
    assert list(hybrid.properties) == ["kw_all"]  # the configured boosts: the embedded backend's document
    assert list(hybrid.vector_bytes or hybrid.vectors[0].vector_bytes)  # our own query vector went along
    assert request.limit == 40  # the candidates are fused; the limit is applied after
    stored = fake.object(backend.config.collection, object_uuid("Code Host::list_issues"))
    assert stored is not None
    assert stored["properties"]["kw_all"].split() == weighted_tokens(CATALOG[1].fields, DEFAULT_FIELD_BOOSTS)
    backend.drop()
    backend.close()


def test_other_boosts_go_to_weaviate_as_integer_query_properties(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert(CATALOG)
    boosts = {**DEFAULT_FIELD_BOOSTS, "description": 2.5}
    backend.hybrid_search(query("list issues", field_boosts=boosts))
    _, request = [c for c in fake.calls if c[0] == "Search"][-1]
    properties = list(request.hybrid_search.properties)
    assert properties == query_properties(boosts)
    assert "kw_name^3" in properties  # 1.5 is sent as 3: Weaviate before 1.37 read "^1.5" as 0
    assert "kw_description^5" in properties
    assert not any(p.startswith("kw_tags") for p in properties)  # boost 0 is not searched
    backend.drop()
    backend.close()


def test_a_collection_filled_under_other_boosts_is_rewritten_by_the_next_index_build(
    fake: FakeWeaviate,
) -> None:
    config = config_for(fake)
    before = WeaviateBackend(
        config,
        model_id=EMBEDDER.model_id,
        dim=EMBEDDER.dim,
        field_boosts={**DEFAULT_FIELD_BOOSTS, "name": 3.0},
    )
    before.upsert(CATALOG)
    after = open_backend(config)  # the default boosts now
    assert set(after.ids().values()) == {""}  # no hash matches: an index build rewrites every object
    after.hybrid_search(query("list issues"))
    _, request = [c for c in fake.calls if c[0] == "Search"][-1]
    assert "kw_name^3" in list(request.hybrid_search.properties)  # meanwhile: per field, not the stale kw_all
    after.upsert(CATALOG)
    assert after.ids() == {d.id: d.text_hash for d in CATALOG}
    before.close()
    after.drop()
    after.close()


def test_server_documents_live_in_a_second_collection_named_after_the_first(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert([*CATALOG, *SERVERS])
    tools, servers = backend.config.collection, f"{backend.config.collection}Servers"
    assert backend.collection_name("servers") == servers
    assert (fake.count(tools), fake.count(servers)) == (len(CATALOG), len(SERVERS))
    properties = fake.properties(servers)
    for name in ("mcp_server_name", "server_description", "tool_names", "kw_server_name", "kw_tool_names"):
        assert name in properties, name
    assert properties["tool_names"]["dataType"] == ["text[]"]
    assert properties["kw_all"]["tokenization"] == "whitespace"
    assert "tool_id" not in properties
    weather = SERVERS[2]
    stored = fake.object(servers, object_uuid(weather.id, SERVER_LAYOUT.uuid_namespace))
    assert stored is not None
    assert stored["properties"]["mcp_server_name"] == "Weather"
    assert stored["properties"]["kw_all"].split() == weighted_tokens(
        weather.fields, DEFAULT_SERVER_FIELD_BOOSTS
    )
    assert fake.object(tools, object_uuid(weather.id)) is None  # nothing of it in the tool collection
    backend.drop()
    assert not {tools, servers} & set(fake.collections)  # both dropped together
    backend.close()


def test_a_server_search_sends_the_server_collections_kw_all_and_reads_server_names_back(
    fake: FakeWeaviate,
) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert([*CATALOG, *SERVERS])
    hits = backend.hybrid_search(server_query("meteorological radar", alpha=0.3, candidates=40))
    _, request = [c for c in fake.calls if c[0] == "Search"][-1]
    assert request.collection == f"{backend.config.collection}Servers"
    assert list(request.hybrid_search.properties) == ["kw_all"]  # built for the server boosts
    assert request.hybrid_search.query == "meteorolog radar"
    assert (hits[0].id, hits[0].server, hits[0].name) == ("Weather", "Weather", "Weather")
    backend.drop()
    backend.close()


def test_other_server_boosts_go_as_integer_query_properties_of_the_server_fields(fake: FakeWeaviate) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert(SERVERS)
    boosts = {**DEFAULT_SERVER_FIELD_BOOSTS, "tool_names": 2.5}
    backend.hybrid_search(server_query("forecast", field_boosts=boosts))
    _, request = [c for c in fake.calls if c[0] == "Search"][-1]
    assert list(request.hybrid_search.properties) == query_properties(boosts, SERVER_LAYOUT)
    assert "kw_tool_names^5" in list(request.hybrid_search.properties)
    with pytest.raises(ConfigurationError) as info:
        backend.hybrid_search(server_query("forecast", field_boosts={"parameter_names": 1.0}))
    assert "server_field_boosts may name" in info.value.hint
    backend.drop()
    backend.close()


def test_a_server_collection_filled_under_other_server_boosts_is_rewritten_by_the_next_index_build(
    fake: FakeWeaviate,
) -> None:
    config = config_for(fake)
    before = WeaviateBackend(
        config,
        model_id=EMBEDDER.model_id,
        dim=EMBEDDER.dim,
        server_field_boosts={**DEFAULT_SERVER_FIELD_BOOSTS, "tool_names": 3.0},
    )
    before.upsert([*CATALOG, *SERVERS])
    after = open_backend(config)
    assert set(after.ids(target="servers").values()) == {""}
    assert after.ids() == {d.id: d.text_hash for d in CATALOG}  # the tool boosts did not change
    after.upsert(SERVERS)
    assert after.ids(target="servers") == {d.id: d.text_hash for d in SERVERS}
    before.close()
    after.drop()
    after.close()


def test_a_collection_made_before_server_documents_existed_gets_its_server_collection_on_first_use(
    fake: FakeWeaviate,
) -> None:
    backend = open_backend(config_for(fake))
    backend.upsert(CATALOG)
    assert f"{backend.config.collection}Servers" not in fake.collections  # made only when used
    assert backend.hybrid_search(server_query("weather")) == []
    assert backend.count(target="servers") == 0
    assert backend.hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"
    backend.drop()
    backend.close()


def test_the_keyword_score_is_read_from_weaviates_explanation() -> None:
    relative = (
        "\nHybrid (Result Set keyword,bm25) Document abc: original score 5.725466, normalized score: 0.069 - "
        "\nHybrid (Result Set vector,hybridVector) Document abc: original score 0.59, normalized score: 0.8"
    )
    assert explained_keyword_score(relative) == pytest.approx(5.725466)
    vector_only = (
        "\nHybrid (Result Set vector,hybridVector) Document abc: original score 0.59, normalized score: 1"
    )
    assert explained_keyword_score(vector_only) == 0.0
    ranked = "\nHybrid (Result Set keyword,bm25) Document abc contributed 0.0163 to the score"
    assert explained_keyword_score(ranked) == 1.0
    assert explained_keyword_score(None) == 0.0


def test_an_unknown_field_boost_is_refused_with_the_fields_that_exist() -> None:
    with pytest.raises(ConfigurationError) as info:
        query_properties({"nmae": 1.0})
    assert "nmae" in info.value.message
    assert "server_name" in info.value.hint


# --------------------------------------------------------------------------- tiers agree with embedded


def decisions(container: Container, queries: Sequence[str]) -> list[tuple[str, str | None, float]]:
    read_path = ReadPath.fixed(container)
    out = []
    for text in queries:
        resolution, decision = read_path.decide(text)
        out.append(
            (decision.status, resolution.powers[0].name if resolution.powers else None, resolution.confidence)
        )
    return out


@pytest.fixture(scope="module")
def demo_queries() -> list[str]:
    lines = (GATEWAY_DEMO / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


@pytest.mark.parametrize("kind", ["weaviate-loopback", "weaviate-live"])
def test_weaviate_gives_the_same_tiers_as_the_embedded_backend(
    kind: str, tmp_path: Path, embedder: MiniLMEmbedder, demo_queries: list[str]
) -> None:
    """Tolerance: every one of the 70 gateway-demo queries lands in the same tier with the same top
    power, and its confidence differs by less than 0.01."""
    if kind == "weaviate-live" and not LIVE_URL:
        pytest.skip(LIVE_SKIP)
    collection = f"ToolTiers{uuid.uuid4().hex[:10]}"
    with FakeWeaviate() as fake:
        if kind == "weaviate-live":
            url, grpc_url, key = str(LIVE_URL), LIVE_GRPC_URL, LIVE_API_KEY
        else:
            url, grpc_url, key = fake.url, f"http://127.0.0.1:{fake.grpc_port}", None
        common = {"data_dir": tmp_path / "data", "cache_dir": tmp_path / "cache"}
        embedded = Container(Settings(**common), embedder=embedder)  # type: ignore[arg-type]
        weaviate = Container(
            Settings(  # type: ignore[arg-type]
                **common,
                backend="weaviate",
                weaviate={"url": url, "grpc_url": grpc_url, "api_key": key, "collection": collection},
            ),
            embedder=embedder,
        )
        try:
            import_catalog_dir(embedded, GATEWAY_DEMO, approve=True, actor="test")
            build_index(embedded)
            summary = build_index(weaviate)
            assert (summary.written, summary.errors, summary.embedded) == (summary.documents, {}, 0)
            on_embedded = decisions(embedded, demo_queries)
            on_weaviate = decisions(weaviate, demo_queries)
        finally:
            weaviate.backend.drop()
            embedded.close()
            weaviate.close()
    assert len(on_weaviate) == len(demo_queries) == 70
    differ = [
        (q, e, w)
        for q, e, w in zip(demo_queries, on_embedded, on_weaviate, strict=True)
        if e[:2] != w[:2] or abs(e[2] - w[2]) >= 0.01
    ]
    assert differ == [], "\n".join(map(str, differ))
    assert len({tier for tier, _, _ in on_weaviate}) == 4  # the set exercises every tier


# --------------------------------------------------------------------------- the CLI fills Weaviate


def invoke(args: Sequence[str], env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def answer(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_index_rebuild_fills_weaviate_from_the_catalog_and_back(
    fake: FakeWeaviate, tmp_path: Path, real_model: Path
) -> None:
    env = {
        "TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"),
        "TOOL_SELECTOR_CACHE_DIR": str(real_model),
        "TOOL_SELECTOR_WEAVIATE__URL": fake.url,
        "TOOL_SELECTOR_WEAVIATE__GRPC_URL": f"http://127.0.0.1:{fake.grpc_port}",
        "TOOL_SELECTOR_WEAVIATE__COLLECTION": "ToolCli",
    }
    answer(invoke(["catalog", "import", str(GATEWAY_DEMO), "--approve"], env))
    built = answer(invoke(["index", "build"], env))
    filled = answer(invoke(["index", "rebuild", "--backend", "weaviate"], env))
    assert filled["backend"] == "weaviate"
    assert filled["target"] == f"{fake.url} collection ToolCli"
    assert (filled["written"], filled["embedded"], filled["errors"]) == (built["documents"], 0, {})
    assert fake.count("ToolCli") == built["documents"]

    query_text = "what time is it in Tokyo"
    on_embedded = answer(invoke(["resolve", query_text], env))
    on_weaviate = answer(invoke(["resolve", query_text], {**env, "TOOL_SELECTOR_BACKEND": "weaviate"}))
    assert on_weaviate["status"] == on_embedded["status"]
    assert on_weaviate["confidence"] == pytest.approx(on_embedded["confidence"], abs=0.01)

    back = answer(invoke(["index", "rebuild", "--backend", "embedded"], env))
    assert (back["backend"], back["written"], back["embedded"]) == ("embedded", built["documents"], 0)
    assert answer(invoke(["resolve", query_text], env))["status"] == on_embedded["status"]


def test_index_rebuild_against_an_unreachable_weaviate_exits_with_the_address_and_what_to_do(
    tmp_path: Path, session_cache_dir: Path
) -> None:
    port = free_port()
    env = {
        "TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"),
        "TOOL_SELECTOR_CACHE_DIR": str(session_cache_dir),
        "TOOL_SELECTOR_WEAVIATE__URL": f"http://127.0.0.1:{port}",
        "TOOL_SELECTOR_WEAVIATE__GRPC_URL": f"http://127.0.0.1:{free_port()}",
        "TOOL_SELECTOR_WEAVIATE__MAX_ATTEMPTS": "1",
    }
    answer(invoke(["catalog", "import", str(GATEWAY_DEMO), "--approve"], env))
    result = invoke(["index", "rebuild", "--backend", "weaviate"], env)
    assert result.exit_code != 0
    assert f"127.0.0.1:{port}" in result.stderr
    assert "backend_unavailable" in result.stderr or "unavailable" in result.stderr


def test_an_unknown_backend_name_is_refused() -> None:
    result = invoke(["index", "rebuild", "--backend", "elastic"], {})
    assert result.exit_code == 2
    assert "Invalid value for '--backend'" in result.stderr
    assert all(said in result.stderr for said in ("'elastic' is not one of", "'embedded'", "'weaviate'"))
