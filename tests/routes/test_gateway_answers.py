"""What an agent pays for the gateway's answers (issue 40), in-process: the mcp Client against the server
object ``tool-selector serve`` builds, the weather station (three tools) served over HTTP from a thread,
synced and indexed with the HashingEmbedder.

- An answer names the power, the confidence, one sentence and the best few tools, one line each
  (``name(param: type): what it does``), never a schema; the next call names the tool.
- A power the session already met gets a short answer: no steering, no line it read before.
- The client's tool list grows by the tools the session's requests named or it called, not by the whole
  power.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.shared.container import Container
from services.write.sync import run_sync
from tests.support.gateway_helpers import (
    GatewaySetup,
    Notifications,
    answer,
    inprocess_gateway,
    text,
    tool_names,
    weather_station_over_http,
)
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.core.tokens import count_tokens
from tool_selector.embedding.embedders import HashingEmbedder

pytestmark = pytest.mark.anyio

HASHING = HashingEmbedder(dim=384)
STEERING = "Readings are in Celsius."
QUERY = "echo a weather station reading"


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    with weather_station_over_http() as url:
        yield url


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, weather_url: str) -> GatewaySetup:
    base = tmp_path_factory.mktemp("answers")
    setup = GatewaySetup(base / "data", base / "cache", base / "servers.json")
    save_servers(
        setup.servers_file,
        ServersFile(mcpServers={"weather": ServerConfig(url=weather_url, steering=STEERING)}),
    )
    with Container(setup.settings(enricher="offline"), embedder=HASHING) as container:
        assert run_sync(container).ok
    return setup


@pytest.fixture
def weather(template: GatewaySetup, tmp_path: Path) -> GatewaySetup:
    shutil.copytree(template.data_dir, tmp_path / "data")
    shutil.copy(template.servers_file, tmp_path / "servers.json")
    return GatewaySetup(tmp_path / "data", template.cache_dir, tmp_path / "servers.json")


async def test_an_activated_answer_names_the_best_few_tools_a_line_each_and_carries_no_schema(
    weather: GatewaySetup,
) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        resolved = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
    assert resolved["status"] == "activated" and resolved["power"] == "weather", resolved
    assert resolved["tools"][0] == "echo(text: string): Echo a weather station reading back unchanged."
    assert len(resolved["tools"]) <= 3  # the best few of its four tools
    assert "schema" not in json.dumps(resolved) and "call_as" not in json.dumps(resolved)
    assert resolved["next"][0]["arguments"]["tool"] == "echo" and "call echo" in resolved["message"]


async def test_a_power_the_session_already_met_gets_a_short_answer_without_what_it_read(
    weather: GatewaySetup,
) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        first = await client.call_tool("resolve_intent", {"query": QUERY})
        again = await client.call_tool("resolve_intent", {"query": "echo the reading 21.5 C"})
    shown, short = answer(first), answer(again)
    assert shown["steering"] == STEERING and "steering" not in short
    assert (
        short["message"].startswith("Already active: call echo") and "tools" not in short
    )  # its lines were read already
    assert short["next"][0]["arguments"]["tool"] == "echo"
    assert count_tokens(text(again)) <= 100 < count_tokens(text(first)) + 50


async def test_the_tool_list_grows_by_the_tools_the_requests_named_or_were_called_not_by_the_whole_power(
    weather: GatewaySetup,
) -> None:
    notes = Notifications()
    async with inprocess_gateway(weather.settings(), HASHING, notes) as client:
        resolved = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
        await notes.wait()
        listed = tool_names(await client.list_tools())
        named = {f"weather__{line.split('(')[0]}" for line in resolved["tools"]}
        assert {n for n in listed if n.startswith("weather__")} == named
        assert "weather__whoami" not in named, resolved  # not a tool the request did not name
        await client.call_tool("call_tool", {"power": "weather", "tool": "whoami", "arguments": {}})
        await notes.wait()
        assert "weather__whoami" in tool_names(await client.list_tools())  # called: needed from now on


async def test_activate_power_without_a_request_lists_each_tool_in_a_line_and_guesses_no_call(
    weather: GatewaySetup,
) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        activated = answer(await client.call_tool("activate_power", {"name": "weather"}))
    assert sorted(line.split("(")[0] for line in activated["tools"]) == ["echo", "hang", "whoami"]
    assert activated["next"] == [] and "schema" not in json.dumps(activated)


async def test_a_required_value_the_session_always_passed_fills_the_next_call_and_a_varied_one_is_asked_for(
    weather: GatewaySetup,
) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        first = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
        assert first["next"][0]["arguments"]["arguments"] == {} and "Still to fill: text" in first["message"]
        call = {"power": "weather", "tool": "echo", "arguments": {"text": "19.5 C"}}
        await client.call_tool("call_tool", call)
        await client.call_tool("weather__echo", {"text": "19.5 C"})
        same = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
        await client.call_tool("weather__echo", {"text": "21.0 C"})
        varied = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
    assert same["next"][0]["arguments"]["arguments"] == {"text": "19.5 C"}  # always passed the same
    assert "Still to fill" not in same["message"]
    assert varied["next"][0]["arguments"]["arguments"] == {}  # two values: not the gateway's guess
    still = "Still to fill: text (from the conversation, else ask the user; never invent)."
    assert still in varied["message"]


async def test_activate_power_on_a_running_power_answers_with_the_call_alone(weather: GatewaySetup) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        await client.call_tool("call_tool", {"power": "weather", "tool": "whoami", "arguments": {}})
        await client.call_tool("resolve_intent", {"query": "echo the reading 21.5 C"})
        again = await client.call_tool("activate_power", {"name": "weather"})
    running = answer(again)
    assert running["message"] == "'weather' is already running: call echo." and "tools" not in running
    assert running["next"][0]["arguments"]["tool"] == "echo"
    assert count_tokens(text(again)) <= 100
