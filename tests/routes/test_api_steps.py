"""POST /api/v1/resolve on a request of several steps (issue 16): the answer carries ``parts``, each step's
best powers and tools, only when the request has steps; its text is cleaned as every agent-facing answer.
FastAPI against the ASGI app in-process (Starlette's TestClient), over the gateway-demo catalog indexed
with the hashing embedder; the parts (and the confidence that picks the tier) are put into the real
resolution at the service layer so that each answer shape is pinned. The last test is end to end: a
real uvicorn server, the real model and the real resolver's own split of a two-step request."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from routes.api import build_app
from services.access.keys import create_key
from services.root.container import Container
from tests.support.api_helpers import make_template, running_api
from tool_selector.config.settings import Settings
from tool_selector.core.models import QueryPart, Resolution
from tool_selector.embedding.embedders import HashingEmbedder, MiniLMEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
REQUEST = "get the current time in Tokyo and then fetch the page https://example.com"
TIME_STEP = "get the current time in Tokyo"
FETCH_STEP = "fetch the page https://example.com"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("steps-api")
    return make_template(base, Settings(data_dir=base / "unused", cache_dir=base / "cache"), HASHING)


@pytest.fixture
def client(template: Path, tmp_path: Path) -> Iterator[TestClient]:
    """The app over this test's own copy of the catalog, with a viewer's key."""
    shutil.copytree(template, tmp_path / "data")
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    with Container(settings, embedder=HASHING) as container:
        key = create_key(container.store, "viewer", role="viewer", actor="test").key
    app = build_app(settings, make_container=lambda: Container(settings, embedder=HASHING))
    with TestClient(app, headers={"Authorization": f"Bearer {key}"}) as test_client:
        yield test_client


def given_parts(monkeypatch: pytest.MonkeyPatch, parts: list[QueryPart]) -> None:
    """REQUEST resolves as the resolver does, then gets ``parts`` and a multiple_matches confidence."""
    original = Resolver.resolve

    def resolve(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        resolution = original(self, query, terms, **kwargs)
        if query != REQUEST:
            return resolution
        return resolution.model_copy(update={"parts": parts, "confidence": 0.5, "top3_confidence": 0.9})

    monkeypatch.setattr(Resolver, "resolve", resolve)


def test_a_multi_step_request_is_answered_with_each_steps_powers_and_tools(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_parts(
        monkeypatch,
        [
            QueryPart(text=TIME_STEP, powers=["time", "fetch"], tools=["time::get_current_time"]),
            QueryPart(text=FETCH_STEP, powers=["fetch"], tools=["fetch::fetch"]),
        ],
    )
    answer = client.post("/api/v1/resolve", json={"query": REQUEST}).json()
    assert answer["status"] == "multiple_matches"
    assert answer["parts"] == [
        {"step": TIME_STEP, "powers": ["time", "fetch"], "tools": ["time::get_current_time"]},
        {"step": FETCH_STEP, "powers": ["fetch"], "tools": ["fetch::fetch"]},
    ]
    assert "This request has 2 steps (see parts)" in answer["message"]
    assert "step 1: 'time'; step 2: 'fetch'" in answer["message"]
    assert answer["resolution"] is None


def test_the_explained_resolution_keeps_the_parts_the_catalog_knows(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_parts(
        monkeypatch,
        [QueryPart(text=TIME_STEP, powers=["gone", "time"]), QueryPart(text=FETCH_STEP, powers=["fetch"])],
    )
    answer = client.post("/api/v1/resolve", json={"query": REQUEST, "explain": True}).json()
    assert [p["powers"] for p in answer["parts"]] == [["time"], ["fetch"]]
    assert [p["powers"] for p in answer["resolution"]["parts"]] == [["time"], ["fetch"]]


def test_a_one_step_request_is_answered_without_a_parts_key(client: TestClient) -> None:
    answer = client.post("/api/v1/resolve", json={"query": "what time is it in Tokyo"}).json()
    assert "parts" not in answer
    assert "steps" not in answer["message"]
    assert list(answer) == [
        "status",
        "confidence",
        "query",
        "message",
        "power",
        "match_type",
        "tools",
        "matches",
        "available_powers",
        "resolution",
    ]


def test_invisible_characters_in_a_step_never_reach_the_client(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    given_parts(
        monkeypatch,
        [
            QueryPart(text="get the\u200b current time\u2066 in Tokyo", powers=["time"]),
            QueryPart(text=FETCH_STEP),
        ],
    )
    answer = client.post("/api/v1/resolve", json={"query": REQUEST}).json()
    assert answer["parts"][0]["step"] == TIME_STEP
    assert answer["parts"][1] == {"step": FETCH_STEP, "powers": [], "tools": []}


def test_a_real_two_step_request_over_a_real_api_server_names_each_steps_power(
    tmp_path: Path, embedder: MiniLMEmbedder
) -> None:
    """No monkeypatching: the real model and resolver split the request, uvicorn serves the answer."""
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache")
    template = make_template(tmp_path / "template", settings, embedder)
    with running_api(template, tmp_path / "run", settings, embedder) as api, api.client("viewer") as http:
        response = http.post("/api/v1/resolve", json={"query": REQUEST})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["status"] != "not_found", answer
    steps = answer.get("parts")
    assert steps is not None and len(steps) == 2, answer
    assert "Tokyo" in steps[0]["step"] and "example.com" in steps[1]["step"]
    assert steps[0]["powers"][0] == "time" and steps[1]["powers"][0] == "fetch"
    assert "step 1: 'time'; step 2: 'fetch'" in answer["message"]
