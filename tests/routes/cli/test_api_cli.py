"""The REST API's commands: the real ``tool-selector api`` process, and ``catalog register`` and
``servers enable|disable`` through Typer's CliRunner, over a copy of the imported gateway-demo catalog."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from services.root.container import Container
from tests.support.api_process import CLI, listening_url
from tool_selector.catalog import admin
from tool_selector.catalog.admin import AuditRecord
from tool_selector.config.servers import ServerConfig, ServersFile, load_servers, save_servers
from tool_selector.config.settings import Settings
from tool_selector.index.mark import index_is_current

LOCAL_USER = f"cli:{getpass.getuser()}"


@pytest.fixture
def data_dir(api_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the imported and indexed gateway-demo catalog, the CLI's data folder."""
    data = tmp_path / "cli-data"
    shutil.copytree(api_template, data)
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(data))
    return data


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def printed(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def audit(data: Path, **where: str) -> list[AuditRecord]:
    with Container(Settings(data_dir=data)) as container:
        return admin.read_audit(container.store, **where)  # type: ignore[arg-type]


def catalog_content(data: Path) -> dict[str, str]:
    with Container(Settings(data_dir=data)) as container:
        return {s.name: s.content_hash for s in container.store.list_servers()}


# --------------------------------------------------------------------------- tool-selector api


def test_the_api_command_serves_docs_openapi_and_health_and_stops_on_sigterm(
    api_template: Path, tmp_path: Path
) -> None:
    data = tmp_path / "api-data"
    shutil.copytree(api_template, data)
    env = {**os.environ, "TOOL_SELECTOR_DATA_DIR": str(data), "TOOL_SELECTOR_LOG_LEVEL": "INFO"}
    process = subprocess.Popen(
        [str(CLI), "api", "--host", "127.0.0.1", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = listening_url(process)
        with httpx.Client(base_url=url, timeout=30) as client:
            docs = client.get("/docs")
            assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
            assert "swagger-ui" in docs.text and "/openapi.json" in docs.text
            spec = client.get("/openapi.json").json()
            assert spec["info"]["title"] == "tool-selector"
            assert {
                "/api/v1/resolve",
                "/api/v1/tools/search",
                "/api/v1/catalog/import",
                "/api/v1/enrichment/sync",
                "/api/v1/jobs/{job_id}",
                "/health",
            } <= set(spec["paths"])
            health = client.get("/health").json()
            assert health["status"] == "ok" and health["indexed_tools"] == 52
            assert client.post("/api/v1/resolve", json={"query": "x"}).status_code == 401
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == -signal.SIGTERM  # uvicorn re-raises the signal once shut down
        assert process.stderr is not None
        assert b"Application shutdown complete" in process.stderr.read()  # the lifespan ran to its end
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()


# --------------------------------------------------------------------------- catalog register

CSV = (
    "server,server_description,tool,tool_description,input_schema,tags\n"
    "notes-app,Keeps personal notes and to-do lists,,,,notes\n"
    "notes-app,,create_note,Create a note with a title and a body,,\n"
    "time,,current_time,Get the current time in a given time zone,,\n"
)


def test_catalog_register_imports_a_csv_prints_its_counts_and_audits_the_local_user(
    data_dir: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.csv"
    batch.write_text(CSV, encoding="utf-8")
    result = printed(invoke("catalog", "register", str(batch)))
    assert result["format"] == "csv" and result["counts"]["created"] == 2
    assert {i["id"]: i["outcome"] for i in result["items"]} == {
        "notes-app": "created",
        "notes-app::create_note": "created",
        "time::current_time": "matched",  # a near-duplicate of time::get_current_time
    }
    actions = {(r.action, r.target) for r in audit(data_dir, actor=LOCAL_USER)}
    assert {
        ("catalog.import", "batch:csv"),
        ("server.create", "server:notes-app"),
        ("tool.create", "tool:notes-app::create_note"),
    } <= actions
    with Container(Settings(data_dir=data_dir)) as container:
        assert index_is_current(container)

    again = printed(invoke("catalog", "register", str(batch)))
    assert again["counts"]["created"] == 0 and again["counts"]["matched"] == 3


def test_catalog_register_refuses_a_bad_csv_with_exit_3_naming_each_line_and_stores_nothing(
    data_dir: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "bad.csv"
    batch.write_text(
        "server,tool,input_schema\nfine,ok,\n,orphan,\nfine,broken,{oops}\nfine,ok,\n", encoding="utf-8"
    )
    before = catalog_content(data_dir)
    result = invoke("catalog", "register", str(batch))
    assert result.exit_code == 3, result.output
    assert "error [catalog_file]" in result.stderr and "3 problems" in result.stderr
    assert "line 3: field server is empty" in result.stderr
    assert "line 4 (fine::broken): field input_schema is not valid JSON" in result.stderr
    assert "line 5 (fine::ok): tool listed twice (first on line 2)" in result.stderr
    assert catalog_content(data_dir) == before
    assert audit(data_dir, actor=LOCAL_USER) == []


def test_catalog_register_refuses_an_unknown_matching_mode_before_reading_the_file(
    data_dir: Path, tmp_path: Path
) -> None:
    result = invoke("catalog", "register", str(tmp_path / "absent.csv"), "--matching-mode", "maybe")
    assert result.exit_code == 2 and "Invalid value for '--matching-mode'" in result.stderr
    assert all(f"'{mode}'" in result.stderr for mode in ("auto", "force_create", "match_only"))


# --------------------------------------------------------------------------- servers enable | disable


def test_servers_enable_and_disable_flip_the_configuration_and_write_audit_rows(data_dir: Path) -> None:
    path = data_dir / "servers.json"
    save_servers(
        path, ServersFile(mcpServers={"docs": ServerConfig(url="https://x.test/mcp", enabled=False)})
    )

    enabled = printed(invoke("servers", "enable", "docs"))
    assert enabled == {
        "server": "docs",
        "enabled": True,
        "changed": True,
        "adopted": False,
        "launch": "https://x.test/mcp",
        "next": "tool-selector sync",
    }
    assert load_servers(path).mcpServers["docs"].enabled is True
    assert printed(invoke("servers", "enable", "docs"))["changed"] is False

    assert printed(invoke("servers", "disable", "docs"))["changed"] is True
    assert load_servers(path).mcpServers["docs"] == ServerConfig(url="https://x.test/mcp", enabled=False)

    rows = audit(data_dir, target="config:docs")
    assert [(r.action, r.actor) for r in rows] == [
        ("config.disable", LOCAL_USER),
        ("config.enable", LOCAL_USER),
    ]


def test_servers_enable_at_the_machine_adopts_an_imported_entry_and_prints_and_audits_its_launch_line(
    data_dir: Path,
) -> None:
    path = data_dir / "servers.json"
    entry = ServerConfig(
        command="my server", args=["--root", "/srv/a b"], env={"TOKEN": "x"}, origin="import"
    )
    save_servers(path, ServersFile(mcpServers={"mine": entry.model_copy(update={"enabled": False})}))
    enabled = printed(invoke("servers", "enable", "mine"))
    launch = "env 'TOKEN=***' 'my server' --root '/srv/a b'"  # values only with --show-values
    assert (enabled["adopted"], enabled["launch"]) == (True, launch)
    assert load_servers(path).mcpServers["mine"].runnable
    (row,) = audit(data_dir, target="config:mine")
    assert (row.action, row.details["adopted"], row.details["launch"]) == ("config.enable", True, launch)
    shown = printed(invoke("servers", "enable", "mine", "--show-values"))
    assert shown["launch"] == "env TOKEN=x 'my server' --root '/srv/a b'"


def test_servers_enable_of_an_unconfigured_name_exits_4_and_names_the_closest(data_dir: Path) -> None:
    save_servers(
        data_dir / "servers.json", ServersFile(mcpServers={"docs": ServerConfig(url="https://x.test")})
    )
    result = invoke("servers", "enable", "doc")
    assert result.exit_code == 4 and "No server named 'doc'" in result.stderr and "docs" in result.stderr
    assert audit(data_dir, target="config:doc") == []
