"""The composition root: every component is built from the settings it names, whole, once; each
backend setting reaches its backend (a Weaviate one through the real SDK against the loopback fake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tests.support.paths import DEMO_CATALOG
from tests.support.weaviate_fake import FakeWeaviate
from tool_selector.config.settings import DEFAULT_FIELD_BOOSTS, ClaudeSettings, load_settings
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.search.embedded.backend import EmbeddedBackend
from tool_selector.search.weaviate.backend import WeaviateBackend, boosts_key, object_uuid

EMBEDDER = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors

# (setting, environment variable, value as set, value as the backend's configuration holds it)
WEAVIATE_SETTINGS: list[tuple[str, str, str, Any]] = [
    ("url", "TOOL_SELECTOR_WEAVIATE__URL", "http://weaviate.internal:8081", "http://weaviate.internal:8081"),
    ("url", "WEAVIATE_URL", "http://bare.internal:8083", "http://bare.internal:8083"),
    (
        "grpc_url",
        "TOOL_SELECTOR_WEAVIATE__GRPC_URL",
        "http://grpc.internal:50052",
        "http://grpc.internal:50052",
    ),
    ("grpc_url", "WEAVIATE_GRPC_URL", "http://grpc2.internal:50053", "http://grpc2.internal:50053"),
    ("collection", "TOOL_SELECTOR_WEAVIATE__COLLECTION", "Tools2", "Tools2"),
    ("connect_timeout_s", "TOOL_SELECTOR_WEAVIATE__CONNECT_TIMEOUT_S", "7.5", 7.5),
    ("query_timeout_s", "TOOL_SELECTOR_WEAVIATE__QUERY_TIMEOUT_S", "11", 11.0),
    ("insert_timeout_s", "TOOL_SELECTOR_WEAVIATE__INSERT_TIMEOUT_S", "61", 61.0),
    ("max_attempts", "TOOL_SELECTOR_WEAVIATE__MAX_ATTEMPTS", "5", 5),
]


def container_from_environment(tmp_path: Path, **kwargs: Any) -> Container:
    return Container(load_settings(data_dir=tmp_path / "data"), embedder=EMBEDDER, **kwargs)


@pytest.mark.parametrize(("field", "variable", "value", "expected"), WEAVIATE_SETTINGS)
def test_each_weaviate_setting_reaches_the_weaviate_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, field: str, variable: str, value: str, expected: Any
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_BACKEND", "weaviate")
    monkeypatch.setenv(variable, value)
    with container_from_environment(tmp_path) as container:
        backend = container.backend
        assert isinstance(backend, WeaviateBackend)
        assert getattr(backend.config, field) == expected
        assert backend.config is container.settings.weaviate  # the group, passed whole


def test_the_weaviate_api_key_reaches_the_backend_and_is_never_shown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_BACKEND", "weaviate")
    monkeypatch.setenv("WEAVIATE_API_KEY", "wv-secret-123")
    with container_from_environment(tmp_path) as container:
        backend = container.backend
        assert isinstance(backend, WeaviateBackend)
        assert backend.config.api_key is not None
        assert backend.config.api_key.get_secret_value() == "wv-secret-123"
        assert "wv-secret-123" not in repr(container.settings)


def test_configured_field_boosts_reach_the_weaviate_backend_which_builds_and_searches_kw_all_for_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    boosts = {**DEFAULT_FIELD_BOOSTS, "description": 2.0, "name": 3.0}
    with FakeWeaviate() as fake:
        monkeypatch.setenv("TOOL_SELECTOR_BACKEND", "weaviate")
        monkeypatch.setenv("TOOL_SELECTOR_WEAVIATE__URL", fake.url)
        monkeypatch.setenv("TOOL_SELECTOR_WEAVIATE__GRPC_URL", f"http://127.0.0.1:{fake.grpc_port}")
        monkeypatch.setenv("TOOL_SELECTOR_WEAVIATE__COLLECTION", "Wiring")
        monkeypatch.setenv("TOOL_SELECTOR_SEARCH__FIELD_BOOSTS", json.dumps(boosts))
        with container_from_environment(tmp_path) as container:
            backend = container.backend
            assert isinstance(backend, WeaviateBackend)
            assert backend.field_boosts == boosts
            import_catalog_dir(container, DEMO_CATALOG, approve=True, actor="test")
            summary = build_index(container)
            assert summary.errors == {} and summary.written == summary.documents > 0
            tool_id = container.store.list_tools()[0].id
            stored = fake.object("Wiring", object_uuid(tool_id))
            assert stored is not None
            assert stored["properties"]["kw_boosts"] == boosts_key(boosts)  # kw_all built for these boosts
            assert set(backend.ids().values()) != {""}  # every object current: the next build skips them
            container.resolver.rank("create an issue in the tracker", "hybrid")
            _, request = [c for c in fake.calls if c[0] == "Search"][-1]
            assert list(request.hybrid_search.properties) == ["kw_all"]  # not the per-field fallback
            backend.drop()


def test_the_embedded_backend_and_the_resolver_are_built_from_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_SEARCH__ALPHA", "0.3")
    monkeypatch.setenv("TOOL_SELECTOR_SEARCH__CANDIDATES", "40")
    monkeypatch.setenv("TOOL_SELECTOR_SEARCH__FUSION", "ranked")
    monkeypatch.setenv("TOOL_SELECTOR_SEARCH__FIELD_BOOSTS", json.dumps({"name": 2.0}))
    with container_from_environment(tmp_path) as container:
        assert isinstance(container.backend, EmbeddedBackend)
        assert container.backend.directory == tmp_path / "data" / "index"
        resolver = container.resolver
        assert (resolver.alpha, resolver.candidates, resolver.fusion) == (0.3, 40, "ranked")
        assert resolver.field_boosts == {"name": 2.0}
        assert resolver.backend is container.backend and resolver.embedder is EMBEDDER


def test_a_component_passed_in_is_used_instead_of_one_built_from_the_settings(tmp_path: Path) -> None:
    backend = EmbeddedBackend(tmp_path / "elsewhere", model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)
    with container_from_environment(tmp_path, backend=backend) as container:
        assert container.backend is backend
        assert container.resolver.backend is backend


def test_the_claude_settings_reach_one_client_per_process_which_closes_with_the_container(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wiring")
    monkeypatch.setenv("TOOL_SELECTOR_CLAUDE__MODEL", "claude-test-model")
    monkeypatch.setenv("TOOL_SELECTOR_CLAUDE__MAX_ATTEMPTS", "2")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # the anthropic SDK's own name
    container = container_from_environment(tmp_path)
    assert container.settings.claude == ClaudeSettings(
        api_key="sk-ant-wiring",  # type: ignore[arg-type]
        model="claude-test-model",
        max_attempts=2,
        base_url="http://127.0.0.1:9",
    )
    enrichers = container.enrichers()  # auto: an API key is set, so Claude
    assert enrichers is not None and enrichers.kind == "claude"
    client = enrichers.profiler.client  # type: ignore[attr-defined]
    assert (client.model, client.max_attempts) == ("claude-test-model", 2)
    assert enrichers.enricher.client is client  # type: ignore[attr-defined]
    assert container.enrichers() is enrichers and container.enrichers("claude") is enrichers
    offline = container.enrichers("offline")
    assert offline is not None and offline.kind == "offline"
    assert container.enrichers("none") is None
    closed: list[bool] = []
    enrichers.close = lambda: closed.append(True)
    container.close()
    assert closed == [True]


def test_the_gateway_settings_are_one_group_passed_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_GATEWAY__MAX_ACTIVE", "3")
    monkeypatch.setenv("TOOL_SELECTOR_GATEWAY__CALL_TIMEOUT_S", "9")
    settings = load_settings(data_dir=tmp_path)
    assert (settings.gateway.max_active, settings.gateway.call_timeout_s) == (3, 9.0)


def test_the_flat_setting_names_of_the_0_1_pre_releases_are_refused_not_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tool_selector.core.errors import ConfigurationError

    monkeypatch.setenv("TOOL_SELECTOR_GATEWAY_MAX_ACTIVE", "3")  # read before; its group's name now
    assert load_settings(data_dir=tmp_path).gateway.max_active != 3
    with pytest.raises(ConfigurationError):
        load_settings(data_dir=tmp_path, gateway_max_active=3)
