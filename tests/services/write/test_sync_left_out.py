"""The sync names every tool it leaves out, and why (issue 39): a real MCP server whose tools/list holds a
tool nested deeper than the JSON limit, a name breaking the naming rule, a name looking like another tool's
of the server and a name listed twice. The sync's summary (text and JSON), its audit record and the REST
sync job list each one with its reason, the catalog keeps the others, and activation's live check offers
none of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from routes.cli.sync import summary_text
from services.gateway.service import Caller, GatewayService
from services.root.container import Container
from services.write.sync import run_sync
from tests.routes.test_api_import_jobs import wait_for_job
from tests.support.api_helpers import RunningApi
from tests.support.gateway_helpers import named
from tests.support.upstreams import ServerScript
from tool_selector.catalog.admin import read_audit
from tool_selector.config.servers import ServersFile, save_servers
from tool_selector.config.settings import Settings
from tool_selector.core.errors import QuarantinedError
from tool_selector.core.json_limits import MAX_JSON_DEPTH
from tool_selector.embedding.embedders import Embedder

SERVER = "notes"
READ = {
    "name": "read_note",
    "description": "Read one note of the user's notebook by its title.",
    "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
}
LIST = {"name": "list_notes", "description": "List the notes' titles.", "input_schema": {"type": "object"}}


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "string"}
    for _ in range(levels - 1):
        value = {"type": "object", "properties": {"x": value}}
    return value


DEEP = {"name": "dig", "description": "Digs deep.", "input_schema": nested(MAX_JSON_DEPTH + 6)}
SEPARATED = {"name": "bad::name", "description": "A name with the id separator."}
LOOKALIKE = {"name": "read_n\u043ete", "description": "Reads a note (Cyrillic o in its name)."}
EXPECTED = {
    "dig": f"more than {MAX_JSON_DEPTH} levels",
    "bad::name": "'::'",
    "read_n\u043ete": "'notes::read_note'",
    "list_notes": "listed twice",
}


def serve(path: Path, tools: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")


@pytest.fixture
def notebook(tmp_path: Path, session_cache_dir: Path, server_script: ServerScript) -> Settings:
    tools = tmp_path / "tools.json"
    serve(tools, [READ, LIST, DEEP, SEPARATED, LOOKALIKE, LIST])
    servers = tmp_path / "servers.json"
    config = server_script("shifting_server.py", str(tools))
    save_servers(servers, ServersFile(mcpServers={SERVER: config}))
    return Settings(
        data_dir=tmp_path / "data",
        cache_dir=session_cache_dir,
        servers_file=servers,
        sync={"enricher": "offline"},
    )


def test_the_sync_names_each_tool_it_left_out_with_why_in_its_summary_and_its_audit(
    notebook: Settings, embedder: Embedder
) -> None:
    with Container(notebook, embedder=embedder) as container:
        summary = run_sync(container)
        assert summary.ok, summary
        left_out = {out.tool: out for out in summary.tools_left_out}
        assert sorted(left_out) == sorted(EXPECTED)
        for name, why in EXPECTED.items():
            assert left_out[name].server == SERVER and why in left_out[name].reason, left_out[name]
        assert {t.name for t in container.store.list_tools(SERVER)} == {"read_note", "list_notes"}
        dumped = summary.model_dump(mode="json")["tools_left_out"]  # what `sync --json` prints
        assert {item["tool"] for item in dumped} == set(EXPECTED)
        text = summary_text(summary)
        for name, why in EXPECTED.items():
            line = next(line for line in text.splitlines() if line.startswith(f"left out: {SERVER}::{name}:"))
            assert why in line, line
        records = [r for r in read_audit(container.store, limit=50) if r.action == "sync.left_out"]
        assert len(records) == 1 and records[0].actor == "sync"
        assert records[0].details["count"] == 4
        assert {item["tool"] for item in records[0].details["tools"]} == set(EXPECTED)


def test_activation_offers_no_tool_the_sync_would_leave_out(
    notebook: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    with Container(notebook, embedder=embedder) as container:
        serve(tmp_path / "tools.json", [READ, LIST])
        assert run_sync(container).ok
        serve(tmp_path / "tools.json", [READ, LIST, DEEP, LOOKALIKE])  # after the sync: only activation sees

        async def scenario() -> None:
            async with GatewayService(container, environ={}) as gateway:
                caller = Caller("s1")
                answer = await gateway.activate_power(caller, SERVER)
                assert sorted(named(answer["tools"])) == ["list_notes", "read_note"]
                assert {"dig", "read_n\u043ete"} <= set(answer["held_tools"]), answer
                offered = {name.split("__")[-1] for name in gateway.proxied_tools()}
                assert "dig" not in offered and "read_n\u043ete" not in offered
                with pytest.raises(QuarantinedError) as refused:
                    await gateway.call_tool(caller, SERVER, "dig", {})
                assert f"more than {MAX_JSON_DEPTH} levels" in str(refused.value)

        anyio.run(scenario)


def test_the_rest_sync_job_lists_each_left_out_tool_with_why(
    api: RunningApi, server_script: ServerScript, tmp_path: Path
) -> None:
    tools = tmp_path / "tools.json"
    serve(tools, [READ, LIST, DEEP, SEPARATED, LOOKALIKE, LIST])
    config = server_script("shifting_server.py", str(tools))
    save_servers(api.settings.servers_path, ServersFile(mcpServers={SERVER: config}))
    with api.client("editor") as client:
        accepted = client.post("/api/v1/enrichment/sync")
        assert accepted.status_code == 202, accepted.text
        job = wait_for_job(client, accepted.json()["job"]["id"])
    assert job["state"] == "succeeded", job
    left_out = {item["tool"]: item["reason"] for item in job["result"]["tools_left_out"]}
    assert sorted(left_out) == sorted(EXPECTED)
    assert all(why in left_out[name] for name, why in EXPECTED.items()), left_out
