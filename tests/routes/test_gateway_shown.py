"""What reaches an agent through the gateway is bounded and clean (issue 15): the mcp Client against the
server object ``tool-selector serve`` builds, in-process, and a real upstream written as an attacker
would (tests/servers/poisoned_server.py) served over streamable HTTP from a thread.

- Invisible characters are stripped from every text an agent is shown (resolve_intent, activate_power,
  the ``power__tool`` listing, catalog_query), while the catalog keeps the text as it was written.
- Server instructions and descriptions the scanner quarantines are withheld, a note in their place.
- A server only in the catalog (imported, never configured here) is never started nor offered.
- A proxied result is cut to the gateway's caps, with a note saying so.

The catalog: the harbour server synced (its held definitions approved, as an operator may: what the
gateway shows is then the agent's last guard) and a lighthouse server imported but never configured.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client.client import Client

from services.gateway.answer import one_line
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.quarantine import approve_entry, list_entries
from services.write.registry import refresh
from services.write.sync import run_sync
from tests.servers.poisoned_server import INSTRUCTIONS, POISONED, SHOWN, build_server
from tests.support.catalogs import write_catalog
from tests.support.gateway_helpers import GatewaySetup, answer, inprocess_gateway, text
from tests.support.uvicorn_thread import serving
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.trust.text import invisible_chars

pytestmark = pytest.mark.anyio

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
TIDES = "tide times for a harbour: high and low water for each day"
LIGHTHOUSE = "log the lighthouse lamp hours"


@pytest.fixture(scope="module")
def harbour_url() -> Iterator[str]:
    with serving(build_server().streamable_http_app(streamable_http_path="/mcp"), "harbour") as url:
        yield f"{url}/mcp"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, harbour_url: str) -> GatewaySetup:
    base = tmp_path_factory.mktemp("shown-gateway")
    setup = GatewaySetup(base / "data", base / "cache", base / "servers.json")
    save_servers(setup.servers_file, ServersFile(mcpServers={"harbour": ServerConfig(url=harbour_url)}))
    catalog = write_catalog(base / "catalog", {"lighthouse": ["log_lighthouse_lamp_hours", "sound_fog_horn"]})
    with Container(setup.settings(sync_enricher="offline"), embedder=HASHING) as container:
        assert run_sync(container).ok
        import_catalog_dir(container, catalog, approve=True, actor="test")
        for entry in list_entries(container.store):  # what the trust policy or the scanner held, approved
            approve_entry(container, entry.id, actor="test")
        refresh(container)
    return setup


@pytest.fixture
def harbour(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    """This test's own copy (the gateway records its sessions in the catalog)."""
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


def gateway(setup: GatewaySetup, **settings: object) -> AbstractAsyncContextManager[Client]:
    return inprocess_gateway(setup.settings(**settings), HASHING)


def hidden_in(value: Any) -> list[str]:
    """The invisible characters anywhere in a JSON value (its keys included)."""
    return invisible_chars(json.dumps(value, ensure_ascii=False))


def by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tools}


def line_of(lines: list[str], tool: str) -> str:
    """An answer's line for ``tool``: ``name(parameters): what it does``."""
    return next(line for line in lines if line.startswith(f"{tool}("))


# --------------------------------------------------------------------------- clean text


async def test_a_poisoned_tool_description_reaches_the_agent_stripped_everywhere_and_stays_stored_as_written(
    harbour: GatewaySetup,
) -> None:
    async with gateway(harbour) as client:
        resolved = answer(await client.call_tool("resolve_intent", {"query": TIDES}))
        activated = answer(await client.call_tool("activate_power", {"name": "harbour"}))
        listing = await client.list_tools()
        tools = answer(
            await client.call_tool("catalog_query", {"query_type": "tools", "filters": {"server": "harbour"}})
        )
        checked = answer(
            await client.call_tool(
                "catalog_query",
                {"query_type": "check_tool", "filters": {"server": "harbour", "action": "tide"}},
            )
        )
    assert resolved["status"] == "activated" and resolved["power"] == "harbour", resolved
    assert line_of(resolved["tools"], "tide_times").endswith(f"): {one_line(SHOWN)}")
    assert "is already running" in activated["message"]  # tide_times' line was read already: not shown again
    assert not any(line.startswith("tide_times(") for line in activated.get("tools", []))
    listed = {t.name: t for t in listing.tools}["harbour__tide_times"]
    assert listed.description == f"[harbour] {SHOWN}"
    assert listed.input_schema["properties"]["harbour"]["description"] == "the harbour's name"
    assert by_name(tools["items"])["tide_times"]["description"] == SHOWN
    assert by_name(checked["tools"])["tide_times"]["description"] == SHOWN
    for shown in (resolved, activated, tools, checked, listing.model_dump(mode="json")):
        assert hidden_in(shown) == []
    with Container(harbour.settings(), embedder=HASHING) as container:
        assert container.store.get_tool("harbour::tide_times").description == POISONED


async def test_server_instructions_that_read_as_an_injection_are_withheld_from_steering_and_never_described(
    harbour: GatewaySetup,
) -> None:
    """The server gives no description: discovery stored the start of its instructions as one, and a
    candidate list or catalog_query shows its one-line purpose instead (issue 42: never instructions)."""
    async with gateway(harbour) as client:
        activated = answer(await client.call_tool("activate_power", {"name": "harbour"}))
        servers = answer(await client.call_tool("catalog_query", {"query_type": "servers"}))
        profile = answer(
            await client.call_tool(
                "catalog_query", {"query_type": "profile", "filters": {"server": "harbour"}}
            )
        )
        resolved = answer(await client.call_tool("resolve_intent", {"query": "bake a sourdough loaf"}))
    assert activated["steering"].startswith("[withheld by tool-selector")
    assert "prompt injection" in activated["steering"] and "tool-selector scan" in activated["steering"]
    described = {s["name"]: s for s in servers["items"]}["harbour"]["description"]
    assert described == "Its tools: tide_chart, tide_log, tide_times." and profile["description"] == described
    matches = resolved.get("matches") or []
    assert [p["does"] for p in matches if p["power"] == "harbour"] in ([], [one_line(described)]), resolved
    assert "harbour" in [p["power"] for p in matches] + resolved.get("available", []), resolved
    for shown in (activated, servers, profile, resolved):
        assert "rm -rf" not in json.dumps(shown)
    with Container(harbour.settings(), embedder=HASHING) as container:
        assert container.store.get_server("harbour").description == INSTRUCTIONS


# --------------------------------------------------------------------------- catalog-only servers


async def test_a_catalog_only_server_is_never_started_and_is_marked_not_runnable(
    harbour: GatewaySetup,
) -> None:
    async with gateway(harbour) as client:
        resolved = answer(await client.call_tool("resolve_intent", {"query": LIGHTHOUSE}))
        listing = await client.list_tools()
        servers = answer(await client.call_tool("catalog_query", {"query_type": "servers"}))
        profile = answer(
            await client.call_tool(
                "catalog_query", {"query_type": "profile", "filters": {"server": "lighthouse"}}
            )
        )
        unrelated = answer(await client.call_tool("resolve_intent", {"query": "bake a sourdough loaf"}))
    assert resolved["status"] == "activated" and resolved["power"] == "lighthouse", resolved
    assert resolved["ready"] is False and "tools" not in resolved
    assert "not configured on this gateway" in resolved["message"]
    assert "tool-selector servers add" in resolved["message"]
    assert all(s["tool"] != "activate_power" for s in resolved["next"])
    assert not any(t.name.startswith("lighthouse__") for t in listing.tools)
    assert {s["name"]: s["runnable"] for s in servers["items"]} == {"harbour": True, "lighthouse": False}
    assert profile["runnable"] is False
    assert all(s["tool"] != "activate_power" for s in profile["next"])
    # a candidate that cannot run here says so; not_found lists only the powers this gateway can run
    matches = {p["power"]: p.get("runnable", True) for p in unrelated.get("matches") or []}
    assert matches in ({"harbour": True, "lighthouse": False}, {}), unrelated
    assert "lighthouse" not in unrelated.get("available", [])
    offered = {s["arguments"].get("name") for s in unrelated["next"]}
    assert "lighthouse" not in offered


# --------------------------------------------------------------------------- result size


async def test_a_huge_text_result_is_cut_to_the_cap_with_a_note_saying_how_big_it_was_and_how_to_ask_for_less(
    harbour: GatewaySetup,
) -> None:
    async with gateway(harbour, gateway_max_result_chars=1000) as client:
        await client.call_tool("activate_power", {"name": "harbour"})
        huge = await client.call_tool("harbour__tide_log", {"size": 50_000})
        small = await client.call_tool(
            "call_tool", {"power": "harbour", "tool": "tide_log", "arguments": {"size": 900}}
        )
    blocks = [c.text for c in huge.content if isinstance(c, types.TextContent)]
    assert not huge.is_error and blocks[0] == "~" * 1000 and len(blocks) == 2
    assert "50,000 characters" in blocks[1] and "limit of 1,000" in blocks[1]
    assert "Ask the tool for less" in blocks[1]
    assert text(small) == "~" * 900


async def test_an_image_past_the_media_cap_is_left_out_and_structured_content_past_the_cap_makes_an_error(
    harbour: GatewaySetup,
) -> None:
    limits = {"gateway_max_result_chars": 1000, "gateway_max_result_media_bytes": 2000}
    async with gateway(harbour, **limits) as client:
        await client.call_tool("activate_power", {"name": "harbour"})
        pictured = await client.call_tool("harbour__tide_log", {"size": 10, "image_bytes": 5000})
        kept = await client.call_tool("harbour__tide_log", {"size": 10, "image_bytes": 1500})
        charted = await client.call_tool("harbour__tide_chart", {"size": 70_000})
    assert [c.type for c in pictured.content] == ["text", "text"]
    assert "1 image (5,000 bytes) left out" in text(pictured)
    assert [c.type for c in kept.content] == ["text", "image"]
    assert charted.is_error and charted.structured_content is None
    assert "structured content" in text(charted) and "limit of 1,000" in text(charted)
