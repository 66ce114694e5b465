"""A server is shown among candidates by its one-line purpose, never by the instructions it wrote for a
model (issue 42): the real everything server gives no description, only instructions ("Audience: ...
for an LLM ..."), which discovery keeps as its pinned description. In-process: the mcp Client against the
server object ``tool-selector serve`` builds, over the everything server configured as ``init`` imports
it (no steering) beside the weather station served over HTTP from a thread, synced with the
HashingEmbedder. Its instructions stay what they were: the steering of its first activation.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import GatewaySetup, answer, inprocess_gateway, weather_station_over_http
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.embedding.embedders import HashingEmbedder

pytestmark = pytest.mark.anyio

HASHING = HashingEmbedder(dim=384)


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    with weather_station_over_http() as url:
        yield url


@pytest.fixture(scope="module")
def template(
    tmp_path_factory: pytest.TempPathFactory, weather_url: str, demo_servers: dict[str, ServerConfig]
) -> GatewaySetup:
    base = tmp_path_factory.mktemp("purpose")
    setup = GatewaySetup(base / "data", base / "cache", base / "servers.json")
    everything = ServerConfig(command=demo_servers["everything"].command)  # as init imports it
    configs = {"weather": ServerConfig(url=weather_url), "everything": everything}
    save_servers(setup.servers_file, ServersFile(mcpServers=configs))
    with Container(setup.settings(sync_enricher="offline"), embedder=HASHING) as container:
        summary = run_sync(container)
        assert summary.ok, summary.failed
        stored = container.store.get_server("everything")
    assert "Audience" in stored.description  # what discovery keeps: the start of its instructions
    return setup


@pytest.fixture
def setup(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


def test_every_candidate_list_reads_the_everything_servers_purpose_not_its_instructions(
    setup: GatewaySetup,
) -> None:
    with Container(setup.settings(), embedder=HASHING) as container:
        powers = ReadPath(container).snapshot().powers  # what resolve answers, REST and CLI show of a power
        stored = container.store.get_server("everything")
    purpose = powers["everything"].description
    assert purpose.startswith("Its tools: ") and "echo" in purpose, purpose
    assert "Audience" not in purpose and "LLM" not in purpose
    assert stored.description.startswith("# Everything Server")  # stored and pinned text is unchanged


async def test_candidate_lists_and_catalog_query_show_its_purpose_and_its_instructions_steer_once(
    setup: GatewaySetup,
) -> None:
    async with inprocess_gateway(setup.settings(), HASHING) as client:
        servers = answer(await client.call_tool("catalog_query", {"query_type": "servers"}))
        profile = answer(
            await client.call_tool(
                "catalog_query", {"query_type": "profile", "filters": {"server": "everything"}}
            )
        )
        # two requests both powers' echo tools fit (candidates to choose from), then one for everything
        resolved = [
            answer(await client.call_tool("resolve_intent", {"query": query}))
            for query in ("echo a message", "return the text unchanged", "add two numbers")
        ]
    described = {item["name"]: item["description"] for item in servers["items"]}
    assert described["everything"].startswith("Its tools: ") and "Audience" not in profile["description"]
    candidates = [match for r in resolved[:2] for match in r["matches"]]
    does = [m["does"] for m in candidates if m["power"] == "everything"]
    assert len(does) == 2 and all(d.startswith("Its tools: echo") for d in does), candidates
    assert "Audience" not in json.dumps(candidates)
    activated = resolved[2]
    assert activated["power"] == "everything" and activated["steering"].startswith("# Everything Server")
