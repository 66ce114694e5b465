"""Batch import, sync and re-profile as jobs through the real REST API: counts, all-or-nothing,
servers from mcpServers arriving switched off, job state surviving a restart."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from services.root.container import Container
from tests.support.api_helpers import RunningApi, running_api
from tests.support.db import count_rows
from tests.support.paths import GATEWAY_DEMO, SERVERS
from tool_selector.catalog import admin
from tool_selector.catalog.admin import JobRecord, JobState
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import MiniLMEmbedder

FLAKY = SERVERS / "flaky_server.py"
CRASHING = SERVERS / "crashing_server.py"
CSV = "text/csv"
DEMO_TOOLS: list[dict[str, Any]] = json.loads((GATEWAY_DEMO / "tools.json").read_text(encoding="utf-8"))
DEMO_SERVERS: list[dict[str, Any]] = json.loads((GATEWAY_DEMO / "servers.json").read_text(encoding="utf-8"))


def wait_for_job(client: httpx.Client, job_id: str, timeout: float = 120.0) -> dict[str, Any]:
    """Poll GET /api/v1/jobs/{id} until the job has ended, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(f"/api/v1/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        if job["state"] not in ("queued", "running"):
            return job
        assert time.monotonic() < deadline, f"job {job_id} still {job['state']} after {timeout} s"
        time.sleep(0.02)  # the only sleep: between polls of a job that is still running


def submit(client: httpx.Client, body: str, content_type: str = "application/json", **params: str) -> str:
    response = client.post(
        "/api/v1/catalog/import", content=body, headers={"content-type": content_type}, params=params
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert (
        accepted["job"]["state"] == "queued" and accepted["poll"] == f"/api/v1/jobs/{accepted['job']['id']}"
    )
    return str(accepted["job"]["id"])


def imported(client: httpx.Client, body: str, content_type: str = "application/json", **params: str) -> Any:
    job = wait_for_job(client, submit(client, body, content_type, **params))
    assert job["state"] == "succeeded", job
    return job["result"]


def counts(result: dict[str, Any]) -> tuple[int, int, int, int]:
    c = result["counts"]
    return c["created"], c["updated"], c["matched"], c["skipped"]


def outcomes(result: dict[str, Any]) -> dict[str, str]:
    return {item["id"]: item["outcome"] for item in result["items"]}


def catalog_state(api: RunningApi) -> tuple[str, int]:
    """The catalog's hash and the number of jobs ever recorded, as another process sees them."""
    with api.container() as container:
        return container.store.catalog_hash(), count_rows(container.store.path, "jobs")


def servers_content(api: RunningApi) -> dict[str, tuple[str, str]]:
    """Each server's description and content hash (a hash over its tools), enrichments aside."""
    with api.container() as container:
        return {s.name: (s.description, s.content_hash) for s in container.store.list_servers()}


def demo_tool(tool_id: str) -> dict[str, Any]:
    return next(t for t in DEMO_TOOLS if f"{t['server']}::{t['name']}" == tool_id)


def configure(api: RunningApi, **servers: ServerConfig) -> None:
    save_servers(api.settings.servers_path, ServersFile(mcpServers=servers))


def python_server(script: Path) -> ServerConfig:
    return ServerConfig(command=sys.executable, args=[str(script)])


# --------------------------------------------------------------------------- importing


def test_a_catalog_json_batch_imports_as_a_job_with_counts_and_its_tools_are_searchable_at_once(
    api_trusting: RunningApi,
) -> None:
    api = api_trusting  # import mechanics: trust on first use (the approval path: test_api_quarantine)
    batch = json.dumps(
        {
            "servers": [
                {"name": "weather-api", "description": "Weather forecasts and severe weather alerts"},
                next(s for s in DEMO_SERVERS if s["name"] == "time"),
            ],
            "tools": [
                {
                    "server": "weather-api",
                    "name": "get_forecast",
                    "description": "Get the weather forecast for a city for the next five days",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
                {"server": "weather-api", "name": "get_alerts", "description": "List severe weather alerts"},
                demo_tool("time::get_current_time"),
                {**demo_tool("time::convert_time"), "description": "Convert a time to another zone"},
            ],
        }
    )
    with api.client("only:import") as importer, api.client("viewer") as viewer:
        job_id = submit(importer, batch)
        first = wait_for_job(importer, job_id)["result"]  # the key that started a job may read it
        with api.client("only:write") as stranger:
            assert stranger.get(f"/api/v1/jobs/{job_id}").json()["error"]["code"] == "forbidden"
        assert viewer.get(f"/api/v1/jobs/{job_id}").json()["created_by"].endswith(":only-import")
        assert first["format"] == "catalog" and first["matching_mode"] == "auto"
        assert counts(first) == (3, 1, 2, 0)
        assert outcomes(first) == {
            "weather-api": "created",
            "time": "matched",
            "weather-api::get_forecast": "created",
            "weather-api::get_alerts": "created",
            "time::get_current_time": "matched",
            "time::convert_time": "updated",
        }
        found = viewer.get("/api/v1/tools/search", params={"q": "weather forecast for Paris this week"})
        assert found.status_code == 200 and found.json()["tools"][0]["id"] == "weather-api::get_forecast"
        assert viewer.get("/api/v1/tools/time::convert_time").json()["description"].startswith("Convert a")

        again = imported(importer, batch)
        assert counts(again) == (0, 0, 6, 0)


def test_a_csv_batch_imports_servers_with_tags_and_tools_and_a_second_import_matches_everything(
    api_trusting: RunningApi,
) -> None:
    api = api_trusting  # registration mechanics: trust on first use (approval: test_api_quarantine)
    schema = json.dumps({"type": "object", "properties": {"title": {"type": "string"}}}).replace('"', '""')
    body = (
        "server,server_description,tool,tool_description,input_schema,tags\n"
        "notes-app,Keeps personal notes and to-do lists,,,,notes;productivity\n"
        f'notes-app,,create_note,Create a note with a title and a body,"{schema}",\n'
        "notes-app,,search_notes,Search the notes for a phrase,,\n"
        "git,,git_blame,Show which commit last changed each line of a file,,\n"
    )
    with api.client("editor") as client:
        first = imported(client, body, CSV)
        assert first["format"] == "csv" and counts(first) == (4, 0, 0, 0)
        server = client.get("/api/v1/servers/notes-app").json()
        assert server["metadata"] == {"tags": ["notes", "productivity"]}
        note = client.get("/api/v1/tools/notes-app::create_note").json()
        assert note["input_schema"]["properties"] == {"title": {"type": "string"}}
        hits = client.get("/api/v1/tools/search", params={"q": "who last changed this line of the file"})
        assert hits.json()["tools"][0]["id"] == "git::git_blame"

        assert counts(imported(client, body, CSV)) == (0, 0, 4, 0)


def test_a_near_duplicate_is_matched_in_auto_created_in_force_create_and_new_tools_skipped_in_match_only(
    api: RunningApi,
) -> None:
    near = {"server": "time", "name": "current_time", "description": "Get the current time in a time zone"}
    new = {"server": "time", "name": "sunrise", "description": "Tell the sunrise and sunset for a city"}
    batch = json.dumps({"tools": [near, new]})
    with api.client("only:import") as client:
        before = servers_content(api)
        only = imported(client, batch, matching_mode="match_only")
        assert outcomes(only) == {"time::current_time": "matched", "time::sunrise": "skipped"}
        assert only["items"][0]["matched_to"] == "time::get_current_time"
        assert only["items"][0]["similarity"] >= 0.85
        assert servers_content(api) == before  # match_only stored nothing

        auto = imported(client, batch)
        assert outcomes(auto) == {"time::current_time": "matched", "time::sunrise": "created"}
        assert auto["items"][0]["matched_to"] == "time::get_current_time"

        forced = imported(client, batch, matching_mode="force_create")
        assert outcomes(forced) == {"time::current_time": "created", "time::sunrise": "matched"}
    with api.container() as container:
        assert {"time::current_time", "time::sunrise"} <= {t.id for t in container.store.list_tools("time")}


def test_mcp_servers_land_in_the_configuration_switched_off_and_are_never_started(
    api: RunningApi, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    spy = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
    body = json.dumps({"mcpServers": {"spy": spy, "docs": {"url": "https://docs.example.com/mcp"}}})
    configure(api, kept=python_server(FLAKY))
    with api.client("only:import") as importer, api.client("editor") as editor:
        result = imported(importer, body)
        assert result["format"] == "mcpservers" and counts(result) == (2, 0, 0, 0)
        assert "tool-selector servers enable NAME" in result["note"]
        on_disk = json.loads(api.settings.servers_path.read_text(encoding="utf-8"))["mcpServers"]
        waiting = {"enabled": False, "origin": "import", "trust": "approve"}
        assert on_disk["spy"] == {**spy, **waiting}
        assert on_disk["docs"] == {"url": "https://docs.example.com/mcp", **waiting}
        assert "enabled" not in on_disk["kept"]  # the operator's own entry is untouched

        sync = wait_for_job(editor, editor.post("/api/v1/enrichment/sync").json()["job"]["id"])
        assert sync["state"] == "succeeded" and sync["result"]["servers_configured"] == 1
        assert not marker.exists()
        assert {"spy", "docs"}.isdisjoint(s["name"] for s in editor.get("/api/v1/servers").json())

        changed = json.dumps({"mcpServers": {"spy": {**spy, "args": ["-c", "pass"]}, "docs": spy}})
        again = imported(importer, changed)
        assert outcomes(again) == {"spy": "skipped", "docs": "skipped"}
        assert "kept" in again["items"][0]["reason"]
        assert counts(imported(importer, body)) == (0, 0, 2, 0)


# --------------------------------------------------------------------------- all or nothing


def test_a_csv_batch_with_bad_lines_is_refused_whole_listing_every_line_and_starts_no_job(
    api: RunningApi,
) -> None:
    body = (
        "server,tool,tool_description,input_schema\n"
        "ok-server,ok_tool,Fine,\n"
        ",orphan,No server,\n"
        "bad-schema,t1,Not JSON,{oops}\n"
        'bad-schema,t2,Not an object,"[1, 2]"\n'
        "ok-server,ok_tool,Listed again,\n"
    )
    before = catalog_state(api)
    with api.client("only:import") as client:
        refused = client.post("/api/v1/catalog/import", content=body, headers={"content-type": CSV})
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "catalog_file" and "4 problems" in error["message"]
    where = [(p["line"], p["field"]) for p in error["problems"]]
    assert where == [(3, "server"), (4, "input_schema"), (5, "input_schema"), (6, "tool")]
    assert catalog_state(api) == before


def test_a_json_batch_with_bad_items_is_refused_whole_naming_each_item(api: RunningApi) -> None:
    body = {
        "servers": [{"name": "fine"}, {"description": "no name"}],
        "tools": [
            {"server": "fine", "name": "a"},
            {"server": "nowhere", "name": "b"},
            {"server": "fine", "description": "no name"},
        ],
    }
    before = catalog_state(api)
    with api.client("only:import") as client:
        refused = client.post("/api/v1/catalog/import", json=body)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "catalog_file"
    problems = refused.json()["error"]["problems"]
    where = [(p["section"], p["item"], p["field"]) for p in problems]
    assert where == [("servers", 1, "name"), ("tools", 1, "server"), ("tools", 2, "name")]
    assert "nowhere" in problems[1]["message"]
    assert catalog_state(api) == before


def test_a_batch_whose_server_vanished_before_its_job_ran_fails_and_stores_nothing(
    api: RunningApi, tmp_path: Path
) -> None:
    # A sync held at a gate (a FIFO its one server reads) keeps the single job worker busy, so the
    # import queued behind it runs only after the server it names was deleted by another process.
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    configure(api, gate=ServerConfig(command="/bin/sh", args=["-c", f"read line < '{gate}'; exit 1"]))
    batch = {
        "servers": [{"name": "brand-new", "description": "Created first, then rolled back"}],
        "tools": [{"server": "time", "name": "sundial", "description": "Tell the time from the sun"}],
    }
    with api.client("editor") as client:
        sync_id = client.post("/api/v1/enrichment/sync").json()["job"]["id"]
        import_id = submit(client, json.dumps(batch))
        with api.container() as other:
            other.writer.delete_server("time", cascade=True, actor="test")
        after_delete = servers_content(api)
        assert client.get(f"/api/v1/jobs/{import_id}").json()["state"] == "queued"
        # O_RDWR never blocks on a FIFO (Linux) and keeps the line buffered until the server reads it
        opened = os.open(gate, os.O_RDWR)
        try:
            os.write(opened, b"go\n")
            assert wait_for_job(client, sync_id)["state"] == "succeeded"
        finally:
            os.close(opened)
        job = wait_for_job(client, import_id)
    assert job["state"] == "failed"
    assert job["error"]["type"] == "CatalogFileError"
    assert "'time'" in job["error"]["message"] and "nothing was stored" in job["error"]["hint"]
    assert job["result"] == {"counts": {"errors": 1}}
    assert servers_content(api) == after_delete  # "brand-new", created first, was rolled back


def test_an_mcp_servers_batch_fails_as_a_job_when_the_configuration_is_unreadable_and_leaves_it(
    api: RunningApi,
) -> None:
    api.settings.servers_path.write_text("{not json", encoding="utf-8")
    body = json.dumps({"mcpServers": {"docs": {"url": "https://docs.example.com/mcp"}}})
    with api.client("only:import") as client:
        job = wait_for_job(client, submit(client, body))
    assert job["state"] == "failed" and job["error"]["type"] == "CatalogFileError"
    assert "server configuration" in job["error"]["message"]
    assert api.settings.servers_path.read_text(encoding="utf-8") == "{not json"


# --------------------------------------------------------------------------- sync, status, health


def test_a_sync_job_discovers_a_real_server_and_status_stats_and_health_report_it(api: RunningApi) -> None:
    configure(api, **{"weather-station": python_server(FLAKY)})
    with api.client("editor") as client, api.client(None) as anonymous:
        assert anonymous.get("/health").json()["last_sync_at"] is None
        accepted = client.post("/api/v1/enrichment/sync")
        assert accepted.status_code == 202 and accepted.json()["job"]["kind"] == "sync"
        job = wait_for_job(client, accepted.json()["job"]["id"])
        assert job["state"] == "succeeded", job
        summary = job["result"]
        assert summary["ok"] and summary["servers_seen"] == 1 and summary["tools_added"] == 4
        assert summary["enricher"] == "offline" and summary["documents_written"] >= 4

        status = client.get("/api/v1/enrichment/server/weather-station/status").json()
        assert status["creation_method"] == "discovered" and status["profile_hash"]
        assert status["profile"]["profiler"] == "offline"
        assert {t["name"] for t in status["tools"]} == {"echo", "whoami", "crash", "hang"}
        assert status["enrichment"] == {"current": 4, "stale": 0, "missing": 0}
        assert status["discovery"]["state"] == "ok"

        stats = client.get("/api/v1/enrichment/stats").json()
        tools = len(DEMO_TOOLS) + 4
        assert (stats["servers"], stats["tools"]) == (len(DEMO_SERVERS) + 1, tools)
        assert stats["tools_enriched"] == {"current": tools, "stale": 0, "missing": 0}
        assert stats["discovery"] == {"ok": 1, "stale": 0, "failed": 0}
        assert stats["index_current"] and stats["last_sync"]["tools_added"] == 4

        healthy = anonymous.get("/health").json()
        assert healthy["status"] == "ok" and healthy["last_sync_ok"] is True
        assert healthy["last_sync_at"] is not None and healthy["indexed_tools"] == tools

        configure(api, **{"weather-station": python_server(CRASHING), "broken": python_server(CRASHING)})
        again = wait_for_job(client, client.post("/api/v1/enrichment/sync").json()["job"]["id"])
        assert again["state"] == "succeeded" and not again["result"]["ok"]
        assert set(again["result"]["failed"]) == {"weather-station", "broken"}
        health = anonymous.get("/health").json()
        assert health["stale_servers"] == ["weather-station"] and health["failed_servers"] == ["broken"]
        assert health["last_sync_ok"] is False and health["last_sync_at"] > healthy["last_sync_at"]
        kept = client.get("/api/v1/enrichment/server/weather-station/status").json()
        assert kept["discovery"]["state"] == "stale" and len(kept["tools"]) == 4
        assert "permission denied" in kept["discovery"]["error"]


def test_status_of_an_unknown_server_is_404_and_sync_needs_the_edit_scope(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        missing = viewer.get("/api/v1/enrichment/server/nowhere/status")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        refused = viewer.post("/api/v1/enrichment/sync")
        assert refused.status_code == 403 and refused.json()["error"]["details"]["scope"] == "edit"
        assert viewer.get("/api/v1/jobs/0123456789abcdef").status_code == 404


def test_re_profiling_a_server_moves_its_profile_forward_and_returns_its_status(api: RunningApi) -> None:
    with api.client("editor") as client:
        first = client.post("/api/v1/enrichment/server/git/profile")
        assert first.status_code == 200, first.text
        once = first.json()
        assert once["name"] == "git" and once["profile_hash"] and once["profiler"] == "offline"
        git_tools = sum(1 for t in DEMO_TOOLS if t["server"] == "git")
        assert once["enrichment"]["current"] == len(once["tools"]) == git_tools
        twice = client.post("/api/v1/enrichment/server/git/profile").json()
        assert twice["profile_last_updated"] > once["profile_last_updated"]
        assert twice["profile_hash"] == once["profile_hash"]  # same tools, same offline profile
        shown = client.get("/api/v1/enrichment/server/git/status").json()
        assert shown["profile_last_updated"] == twice["profile_last_updated"]
    with api.client("only:read") as reader:
        assert reader.post("/api/v1/enrichment/server/git/profile").status_code == 403


# --------------------------------------------------------------------------- jobs across restarts


def test_a_job_left_running_by_a_dead_process_is_reported_interrupted_when_the_api_starts_again(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> None:
    data = tmp_path / "before-restart"
    shutil.copytree(api_template, data)
    settings = Settings(data_dir=data, cache_dir=session_cache_dir)
    now = datetime.now(UTC)
    with Container(settings, embedder=embedder) as container:
        states: tuple[JobState, ...] = ("running", "queued", "succeeded")
        for job_id, state in zip(("a" * 16, "b" * 16, "c" * 16), states, strict=True):
            job = JobRecord(id=job_id, kind="import", state=state, created_at=now, created_by="key:x:ci")
            admin.put_job(container.store, job)
    with running_api(data, tmp_path / "restarted", settings, embedder) as api, api.client("viewer") as client:
        running, queued, done = (client.get(f"/api/v1/jobs/{c * 16}").json() for c in "abc")
    assert running["state"] == queued["state"] == "interrupted"
    assert running["error"]["code"] == "interrupted" and running["finished_at"] is not None
    assert done["state"] == "succeeded" and done["error"] is None


def test_under_the_default_policy_an_import_job_holds_its_tools_until_approved(api: RunningApi) -> None:
    batch = json.dumps(
        {
            "servers": [{"name": "ledger", "description": "Bookkeeping"}],
            "tools": [{"server": "ledger", "name": "post_entry", "description": "Post a journal entry."}],
        }
    )
    with api.client("editor") as client:
        done = wait_for_job(client, submit(client, batch))
        assert done["state"] == "succeeded", done
        held = client.get("/api/v1/quarantine").json()
        found = client.get("/api/v1/tools/search", params={"q": "post a journal entry"}).json()["tools"]
    assert "ledger::post_entry" not in [t["id"] for t in found]
    assert {(e["subject"], e["tool_id"], e["found_by"], e["kind"]) for e in held} == {
        ("tool", "ledger::post_entry", "import", "new"),
        ("server", "ledger", "import", "new"),  # its description waits too (server_pins.py)
    }
