"""resolve_intent on a request of several steps (issue 16): the answer lists each step's best powers and
tools (``parts``), its message names the power of every step, and its suggestions activate them, one per
step. The mcp Client against the server object ``tool-selector serve`` builds, in-process.

The catalog: the weather station (tests/servers/flaky_server.py) synced twice, as ``weather`` (served
over streamable HTTP from a thread, without its ``crash`` tool) and ``station`` (its stdio process, with
it: not the same tools, so the router may activate either), and a ``lighthouse`` server imported but
never configured. Each of those tests puts the parts (and the confidence that picks the tier) into the real
resolution at the service layer, to pin each answer shape. The last test is end to end: a real
``tool-selector serve`` process over stdio, the real model, and the resolver's own split of a real
two-step request over the gateway-demo catalog.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from services.write.registry import refresh
from services.write.sync import run_sync
from tests.support.catalogs import write_catalog
from tests.support.gateway_helpers import (
    SERVERS,
    GatewaySetup,
    answer,
    inprocess_gateway,
    stdio_gateway,
    weather_station_over_http,
)
from tests.support.paths import GATEWAY_DEMO
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.core.models import QueryPart, Resolution
from tool_selector.embedding.embedders import HashingEmbedder, MiniLMEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

pytestmark = pytest.mark.anyio

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
REQUEST = "echo a weather station reading and then tell me the station's process id"
READING = "echo a weather station reading"
WHOAMI = "tell me the station's process id"
TIERS = {  # (P(top power right), P(a right power in the top three))
    "activated": (0.95, 0.99),
    "multiple_matches": (0.5, 0.9),
    "weak_matches": (0.05, 0.3),
    "not_found": (0.01, 0.02),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewaySetup]:
    base = tmp_path_factory.mktemp("steps-gateway")
    setup = GatewaySetup(base / "data", base / "cache", base / "servers.json")
    with weather_station_over_http() as url:
        station = ServerConfig(command=sys.executable, args=[str(SERVERS / "flaky_server.py")])
        configs = {"weather": ServerConfig(url=url), "station": station}
        save_servers(setup.servers_file, ServersFile(mcpServers=configs))
        catalog = write_catalog(base / "catalog", {"lighthouse": ["log_lighthouse_lamp_hours"]})
        with Container(setup.settings(sync_enricher="offline"), embedder=HASHING) as container:
            assert run_sync(container).ok
            import_catalog_dir(container, catalog, approve=True, actor="test")
            refresh(container)
        yield setup


@pytest.fixture
def steps(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    """This test's own copy (the gateway records its sessions in the catalog)."""
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


def given(monkeypatch: pytest.MonkeyPatch, tier: str, parts: list[QueryPart]) -> None:
    """REQUEST resolves as the resolver does, then gets ``parts``, ``weather`` on top of the whole
    request's powers and the confidence of ``tier``; other queries are left alone."""
    original = Resolver.resolve

    def resolve(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        resolution = original(self, query, terms, **kwargs)
        if query != REQUEST:
            return resolution
        confidence, top3 = TIERS[tier]
        ranked = sorted(resolution.powers, key=lambda p: p.name != "weather")
        update = {"parts": parts, "powers": ranked, "confidence": confidence, "top3_confidence": top3}
        return resolution.model_copy(update=update)

    monkeypatch.setattr(Resolver, "resolve", resolve)


def two_steps() -> list[QueryPart]:
    return [
        QueryPart(text=READING, powers=["weather", "station"], tools=["weather::echo", "station::echo"]),
        QueryPart(text=WHOAMI, powers=["station", "weather"], tools=["station::whoami"]),
    ]


async def resolve_intent(setup: GatewaySetup, query: str = REQUEST) -> dict[str, Any]:
    async with inprocess_gateway(setup.settings(), HASHING) as client:
        return answer(await client.call_tool("resolve_intent", {"query": query}))


def suggested(answered: dict[str, Any]) -> list[tuple[str, Any, str]]:
    return [(s["tool"], s["arguments"].get("name"), s.get("why")) for s in answered["next"]]


async def test_a_multi_step_request_lists_each_steps_powers_and_suggests_activating_one_per_step(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    given(monkeypatch, "multiple_matches", two_steps())
    answered = await resolve_intent(steps)
    assert answered["status"] == "multiple_matches"
    assert answered["parts"] == [
        {"step": READING, "powers": ["weather", "station"], "tools": ["weather::echo", "station::echo"]},
        {"step": WHOAMI, "powers": ["station", "weather"], "tools": ["station::whoami"]},
    ]
    assert "This request has 2 steps (see parts); use one power per step" in answered["message"]
    assert "step 1: 'weather'; step 2: 'station'" in answered["message"]
    assert "Call activate_power(name) for each one not active yet" in answered["message"]
    offered = suggested(answered)
    assert offered[:2] == [
        ("activate_power", "weather", "for step 1"),
        ("activate_power", "station", "for step 2"),
    ]
    names = [name for tool, name, _ in offered if tool == "activate_power"]
    assert len(names) == len(set(names))  # a match that is also a step's power is offered once


async def test_an_activated_multi_step_request_starts_the_first_power_and_suggests_the_next_steps(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    given(monkeypatch, "activated", two_steps())
    answered = await resolve_intent(steps)
    assert (answered["status"], answered["power"], answered.get("ready")) == ("activated", "weather", None)
    assert [p["powers"][0] for p in answered["parts"]] == ["weather", "station"]
    assert answered["message"].startswith("'weather' is ready")
    assert "step 2: 'station'" in answered["message"]
    offered = suggested(answered)
    assert offered[0][0] == "call_tool"
    assert ("activate_power", "station", "for step 2") in offered
    assert ("activate_power", "weather", "for step 1") not in offered  # already started


async def test_a_one_step_request_answers_without_parts_or_steps(steps: GatewaySetup) -> None:
    answered = await resolve_intent(steps, "echo a weather station reading")
    assert "parts" not in answered
    assert "steps" not in answered["message"]


async def test_a_step_power_only_in_the_catalog_is_shown_but_never_offered(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [
        QueryPart(text=READING, powers=["weather"], tools=["weather::echo"]),
        QueryPart(text="log the lighthouse lamp hours", powers=["lighthouse"]),
    ]
    given(monkeypatch, "multiple_matches", parts)
    answered = await resolve_intent(steps)
    assert answered["parts"][1]["powers"] == ["lighthouse"]
    assert "'lighthouse' is only in the catalog (runnable: false)" in answered["message"]
    assert ("activate_power", "lighthouse") not in [(t, n) for t, n, _ in suggested(answered)]


async def test_powers_and_tools_the_catalog_no_longer_holds_are_left_out_of_the_steps(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [
        QueryPart(
            text=READING, powers=["gone", "weather"], tools=["gone::echo", "weather::nope", "weather::echo"]
        ),
        QueryPart(text=WHOAMI, powers=["gone"], tools=["gone::whoami"]),
    ]
    given(monkeypatch, "multiple_matches", parts)
    answered = await resolve_intent(steps)
    assert answered["parts"] == [
        {"step": READING, "powers": ["weather"], "tools": ["weather::echo"]},
        {"step": WHOAMI, "powers": [], "tools": []},
    ]
    assert "step 1: 'weather'; step 2: no power fits" in answered["message"]
    assert "gone" not in answered["message"]


async def test_invisible_characters_in_a_step_never_reach_the_agent(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [
        QueryPart(text="echo a weather\u200b station\u202e reading", powers=["weather"]),
        QueryPart(text=WHOAMI, powers=["station"]),
    ]
    given(monkeypatch, "multiple_matches", parts)
    answered = await resolve_intent(steps)
    assert answered["parts"][0]["step"] == "echo a weather station reading"


async def test_weak_matches_show_the_closest_power_per_step_without_asking_to_activate(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    given(monkeypatch, "weak_matches", two_steps())
    answered = await resolve_intent(steps)
    assert answered["status"] == "weak_matches" and len(answered["parts"]) == 2
    assert "none matched surely; the closest: step 1: 'weather'; step 2: 'station'" in answered["message"]
    assert "activate_power" not in [tool for tool, _, _ in suggested(answered)]


async def test_a_not_found_answer_shows_no_steps(
    steps: GatewaySetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    given(monkeypatch, "not_found", two_steps())
    answered = await resolve_intent(steps)
    assert answered["status"] == "not_found"
    assert "parts" not in answered and "steps" not in answered["message"]


async def test_a_real_two_step_request_through_a_real_serve_process_names_each_steps_power(
    tmp_path: Path, real_model: Path, embedder: MiniLMEmbedder
) -> None:
    """No monkeypatching: the gateway-demo catalog imported and indexed with the real model, then
    ``tool-selector serve`` answers resolve_intent; its servers are catalog-only here, so the steps
    name them without offering to start them."""
    setup = GatewaySetup(tmp_path / "data", real_model, tmp_path / "servers.json")
    save_servers(setup.servers_file, ServersFile(mcpServers={}))
    with Container(setup.settings(), embedder=embedder) as container:
        import_catalog_dir(container, GATEWAY_DEMO, approve=True, actor="test")
        build_index(container)
    request = "get the current time in Tokyo and then fetch the page https://example.com and summarise it"
    async with stdio_gateway(setup) as client:
        answered = answer(await client.call_tool("resolve_intent", {"query": request}))
    assert answered["status"] != "not_found", answered
    steps = answered.get("parts")
    assert steps is not None and len(steps) == 2, answered
    assert [step["powers"][0] for step in steps] == ["time", "fetch"]
    assert "step 1: 'time'; step 2: 'fetch'" in answered["message"]
    assert "activate_power" not in [s["tool"] for s in answered["next"]]
