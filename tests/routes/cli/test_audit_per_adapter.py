"""One owner of the write path: a registration or a deletion leaves exactly one audit record, whichever
adapter made it: the CLI, the REST API, or the sync that registers what an MCP server lists."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from routes.cli import app
from services.root.container import Container
from services.write.sync import SYNC_ACTOR, run_sync
from tests.support.api_helpers import RunningApi
from tests.support.catalogs import write_catalog
from tool_selector.catalog.admin import AuditRecord, read_audit
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.config.settings import Settings, load_settings
from tool_selector.embedding.embedders import MiniLMEmbedder

MCP_SERVER_TIME = Path(sys.executable).parent / "mcp-server-time"


def audit_since(container: Container, seq: int) -> list[AuditRecord]:
    return [r for r in read_audit(container.store, limit=1000) if (r.seq or 0) > seq]


def last_seq(container: Container) -> int:
    records = read_audit(container.store, limit=1)
    return (records[0].seq or 0) if records else 0


def cli(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    answer: dict[str, object] = json.loads(result.stdout)
    return answer


def test_a_cli_catalog_import_and_a_cli_server_removal_each_leave_one_audit_record(tmp_path: Path) -> None:
    settings = load_settings()
    with Container(settings) as container:
        start = last_seq(container)

    cli(
        "catalog",
        "import",
        str(write_catalog(tmp_path / "catalog", {"weather": ["get_forecast", "get_alerts"]})),
        "--approve",
    )
    with Container(settings) as container:
        (record,) = audit_since(container, start)
    assert (record.action, record.target) == ("catalog.import", f"catalog:{tmp_path / 'catalog'}")
    assert record.actor.startswith("cli:")
    assert record.details["servers_added_names"] == ["weather"] and record.details["tools_added"] == 2

    cli("catalog", "import", str(tmp_path / "catalog"), "--approve")  # nothing changed: nothing to record
    cli("servers", "add", "weather", "--", sys.executable, "-c", "pass")
    with Container(settings) as container:
        after_add = audit_since(container, record.seq or 0)
    assert [(r.action, r.target) for r in after_add] == [("config.add", "config:weather")]

    removed = cli("servers", "remove", "weather")
    assert removed["tools_removed"] == 2
    with Container(settings) as container:
        (deletion,) = audit_since(container, after_add[0].seq or 0)
        assert container.store.counts() == (0, 0)
    assert (deletion.action, deletion.target) == ("server.delete", "server:weather")
    assert deletion.details["config_removed"] is True and deletion.actor.startswith("cli:")


def test_a_rest_registration_and_a_rest_deletion_each_leave_one_audit_record(
    api_trusting: RunningApi,
) -> None:
    api = api_trusting  # under trust.registered = approve a server.quarantine record follows the create
    with api.container() as container:
        start = last_seq(container)
    with api.client("editor") as client:
        created = client.post("/api/v1/servers", json={"name": "weather", "description": "Forecasts"})
        assert created.status_code == 201, created.text
        with api.container() as container:
            (record,) = audit_since(container, start)
        assert (record.action, record.target) == ("server.create", "server:weather")
        assert record.actor.startswith("key:")
        deleted = client.delete("/api/v1/servers/weather")
        assert deleted.status_code == 200, deleted.text
    with api.container() as container:
        (deletion,) = audit_since(container, record.seq or 0)
    assert (deletion.action, deletion.target, deletion.actor) == (
        "server.delete",
        "server:weather",
        record.actor,
    )


def test_a_server_the_sync_registers_over_mcp_and_later_removes_leaves_one_audit_record_each(
    tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> None:
    servers_file = tmp_path / "servers.json"
    save_servers(servers_file, ServersFile(mcpServers={"time": ServerConfig(command=str(MCP_SERVER_TIME))}))
    settings = Settings(
        data_dir=tmp_path / "data",
        cache_dir=session_cache_dir,
        servers_file=servers_file,
        sync={"enricher": "offline", "discovery_timeout_s": 60},
    )
    with Container(settings, embedder=embedder) as container:
        first = run_sync(container)
        assert first.ok and first.tools_added == 2, first
        (registered,) = audit_since(container, 0)
        assert (registered.action, registered.target, registered.actor) == (
            "catalog.import",
            "catalog:discovery",
            SYNC_ACTOR,
        )
        assert registered.details["servers_added_names"] == ["time"]

        again = run_sync(container)  # nothing changed: nothing recorded
        assert again.ok and audit_since(container, registered.seq or 0) == []

        save_servers(servers_file, ServersFile(mcpServers={}))
        gone = run_sync(container)
        assert gone.servers_removed == 1
        (removed,) = audit_since(container, registered.seq or 0)
        assert (removed.action, removed.target, removed.actor) == ("server.delete", "server:time", SYNC_ACTOR)
        assert removed.details["tools_deleted"] == ["time::convert_time", "time::get_current_time"]
