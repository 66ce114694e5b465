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

from services.root.container import Container
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
    with Container(setup.settings(sync_enricher="offline"), embedder=HASHING) as container:
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


async def test_a_text_the_session_passed_before_is_never_filled_into_a_later_call(
    weather: GatewaySetup,
) -> None:
    """What one call is about (a text to echo, a message, a file's content) is the request's own: an earlier
    value filled in would act on the wrong thing. Played as an agent, a delete request was answered with
    a write of the to-do list passed earlier. Only a parameter that names where the session works carries
    over (test_fill_carries_over_only_where_the_session_works)."""
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        first = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
        assert first["next"][0]["arguments"]["arguments"] == {} and "Still to fill: text" in first["message"]
        call = {"power": "weather", "tool": "echo", "arguments": {"text": "19.5 C"}}
        await client.call_tool("call_tool", call)
        await client.call_tool("weather__echo", {"text": "19.5 C"})
        again = answer(await client.call_tool("resolve_intent", {"query": QUERY}))
    assert again["next"][0]["arguments"]["arguments"] == {}  # not the earlier text
    still = "Still to fill: text (from the conversation, else ask the user; never invent)."
    assert still in again["message"]


async def test_activate_power_on_a_running_power_answers_with_the_call_alone(weather: GatewaySetup) -> None:
    async with inprocess_gateway(weather.settings(), HASHING) as client:
        await client.call_tool("call_tool", {"power": "weather", "tool": "whoami", "arguments": {}})
        await client.call_tool("resolve_intent", {"query": "echo the reading 21.5 C"})
        again = await client.call_tool("activate_power", {"name": "weather"})
    running = answer(again)
    assert running["message"] == "'weather' is already running: call echo." and "tools" not in running
    assert running["next"][0]["arguments"]["tool"] == "echo"
    assert count_tokens(text(again)) <= 100


def test_fill_carries_over_only_where_the_session_works() -> None:
    """A repository's path the session always passed fills a later git call; a time zone, a file's path or
    content it passed before never does ("what time is it in Sydny" after a Tokyo call stays to fill)."""
    from mcp import types as mcp_types

    from services.gateway.service import filler

    def tool(*required: str) -> mcp_types.Tool:
        properties = {r: {"type": "string"} for r in required}
        return mcp_types.Tool(
            name="t", input_schema={"type": "object", "properties": properties, "required": list(required)}
        )

    earlier = {
        "git": {"repo_path": "/home/ana/shop"},
        "time": {"timezone": "Asia/Tokyo"},
        "filesystem": {"path": "/tmp/notes/todo.txt", "content": "- buy milk"},
    }
    git = filler("show me the log", earlier=earlier)("git", tool("repo_path"))
    time = filler("what time is it in Sydny", earlier=earlier)("time", tool("timezone"))
    files = filler("delete old-draft.txt", earlier=earlier)("filesystem", tool("path", "content"))
    assert git.arguments == {"repo_path": "/home/ana/shop"} and git.missing == []
    assert time.arguments == {} and time.missing == ["timezone"]
    assert "content" not in files.arguments and "content" in files.missing
    assert files.arguments.get("path") != "/tmp/notes/todo.txt"
