"""The nightly sync over real MCP servers: discover -> profile -> enrich -> index, incrementally."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from routes.cli import app
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.sync import run_sync, sync_lock
from tests.support.paths import DEMO_CATALOG, EXAMPLES, SERVERS
from tool_selector.config.servers import ServerConfig, load_servers, save_servers
from tool_selector.config.settings import Settings
from tool_selector.core.errors import LockedError
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.index.mark import index_is_current

DEMO_SERVERS = EXAMPLES / "demo-servers.json"
CRASHING = SERVERS / "crashing_server.py"


def _require_demo_servers() -> None:
    missing = [
        c.command
        for c in load_servers(DEMO_SERVERS).mcpServers.values()
        if not Path(c.command or "").exists()
    ]
    if missing:
        pytest.skip(f"demo servers not installed (run scripts/setup.sh): {missing}")


@pytest.fixture
def demo_settings(tmp_path: Path, session_cache_dir: Path) -> Settings:
    _require_demo_servers()
    servers = load_servers(DEMO_SERVERS)
    servers.mcpServers["filesystem"] = servers.mcpServers["filesystem"].model_copy(
        update={"args": [str(tmp_path)]}
    )
    servers.mcpServers["memory"] = servers.mcpServers["memory"].model_copy(
        update={"env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}}
    )
    save_servers(tmp_path / "servers.json", servers)
    return Settings(
        data_dir=tmp_path / "data",
        cache_dir=session_cache_dir,
        servers_file=tmp_path / "servers.json",
        sync={"enricher": "offline", "discovery_timeout_s": 60},
    )


@pytest.fixture
def demo_container(demo_settings: Settings, embedder: MiniLMEmbedder) -> Iterator[Container]:
    with Container(demo_settings, embedder=embedder) as container:
        yield container


def test_a_first_sync_discovers_enriches_and_indexes_the_seven_real_servers(
    demo_container: Container,
) -> None:
    summary = run_sync(demo_container)
    assert summary.ok, summary.failed
    assert summary.servers_seen == 7 and summary.servers_failed == 0
    assert summary.tools_added == demo_container.store.counts()[1] > 20
    assert summary.enricher == "offline" and summary.servers_profiled == 7
    assert summary.tools_enriched == summary.tools_added
    assert summary.documents_written == summary.tools_added
    time_tools = {t.name for t in demo_container.store.list_tools("time")}
    assert {"get_current_time", "convert_time"} <= time_tools
    profile = demo_container.store.get_profile("git")
    assert profile is not None and profile.profiler == "offline"
    enrichment = demo_container.store.get_enrichment("time::convert_time")
    assert enrichment is not None and enrichment.action_entities
    _, decision = ReadPath.fixed(demo_container).decide("what time is it in Tokyo right now")
    assert decision.power == "time" or (decision.matches or [])[0].power == "time"


def test_a_second_sync_with_nothing_changed_redoes_nothing(demo_container: Container) -> None:
    run_sync(demo_container)
    again = run_sync(demo_container)
    assert again.ok
    assert again.servers_seen == 7 and again.servers_changed == 0
    assert (again.tools_added, again.tools_changed, again.tools_removed) == (0, 0, 0)
    assert again.servers_profiled == 0 and again.tools_enriched == 0
    assert again.documents_embedded == 0 and again.documents_written == 0


def test_a_server_that_breaks_keeps_its_last_tools_marked_stale(demo_container: Container) -> None:
    run_sync(demo_container)
    path = demo_container.settings.servers_path
    servers = load_servers(path)
    before = {t.id for t in demo_container.store.list_tools("time")}
    servers.mcpServers["time"] = ServerConfig(command=sys.executable, args=[str(CRASHING)])
    servers.mcpServers["broken-new"] = ServerConfig(command=sys.executable, args=[str(CRASHING)])
    save_servers(path, servers)
    summary = run_sync(demo_container)
    assert not summary.ok
    assert set(summary.failed) == {"time", "broken-new"}
    assert summary.stale == ["time"]
    assert summary.servers_seen == 6
    assert {t.id for t in demo_container.store.list_tools("time")} == before
    states = demo_container.store.get_discovery()
    assert states["time"].state == "stale" and states["time"].last_success_at is not None
    assert states["broken-new"].state == "failed"
    assert set(demo_container.backend.ids()) >= before  # still searchable


def test_a_server_removed_from_the_configuration_leaves_catalog_and_index(demo_container: Container) -> None:
    run_sync(demo_container)
    path = demo_container.settings.servers_path
    servers = load_servers(path)
    del servers.mcpServers["fetch"]
    servers.mcpServers["git"] = servers.mcpServers["git"].model_copy(update={"enabled": False})
    save_servers(path, servers)
    summary = run_sync(demo_container)
    assert summary.servers_removed == 2 and summary.documents_removed == summary.tools_removed > 0
    assert {s.name for s in demo_container.store.list_servers()} == {
        "time",
        "everything",
        "filesystem",
        "memory",
        "sequential-thinking",
    }
    assert not any(i.startswith(("fetch::", "git::")) for i in demo_container.backend.ids())


def test_imported_catalog_servers_are_enriched_and_kept_by_the_sync(
    settings: Settings, embedder: MiniLMEmbedder
) -> None:
    with Container(settings, embedder=embedder) as container:
        import_catalog_dir(container, DEMO_CATALOG, approve=True, actor="test")
        first = run_sync(container)
        assert first.ok and first.servers_configured == 0
        servers, tools = container.store.counts()
        assert first.servers_profiled == servers and first.tools_enriched == tools
        assert container.backend.count() == tools
        again = run_sync(container)
        assert again.servers_profiled == 0 and again.tools_enriched == 0 and again.documents_written == 0


def test_two_syncs_never_overlap(settings: Settings) -> None:
    with sync_lock(settings.sync_lock_path), Container(settings) as container:
        with pytest.raises(LockedError, match=f"pid {os.getpid()}"):
            run_sync(container)
        result = CliRunner().invoke(app, ["sync"], env={"TOOL_SELECTOR_DATA_DIR": str(settings.data_dir)})
        assert result.exit_code == 14, result.output


def test_the_cli_prints_a_json_summary_and_exits_non_zero_only_on_failure(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    save_servers(servers, load_servers(tmp_path / "none.json"))
    env = {"TOOL_SELECTOR_SERVERS_FILE": str(servers), "TOOL_SELECTOR_SYNC__ENRICHER": "offline"}
    result = CliRunner().invoke(app, ["sync"], env=env)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert {"servers_seen", "servers_failed", "tools_added", "llm_calls", "cache_hits", "seconds"} <= set(
        summary
    )
    cfg = load_servers(servers)
    cfg.mcpServers["broken"] = ServerConfig(command=sys.executable, args=[str(CRASHING)])
    save_servers(servers, cfg)
    result = CliRunner().invoke(app, ["sync"], env=env)
    assert result.exit_code == 20
    assert "broken" in json.loads(result.output)["failed"]


def test_a_sync_killed_at_any_moment_is_finished_by_the_next_run(tmp_path: Path, real_model: Path) -> None:
    env = {
        **os.environ,
        "TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"),
        "TOOL_SELECTOR_CACHE_DIR": str(real_model),
        "TOOL_SELECTOR_SYNC__ENRICHER": "offline",
    }
    cli = [sys.executable, "-c", "from routes.cli import main; main()"]
    subprocess.run(
        [*cli, "catalog", "import", str(DEMO_CATALOG), "--approve"], env=env, check=True, capture_output=True
    )
    proc = subprocess.Popen(
        [*cli, "sync"],
        env={**env, "TOOL_SELECTOR_LOG_LEVEL": "INFO"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    # Kill it in the middle of the index stage: right after it logs that enrichment is stored.
    for line in proc.stderr:
        if "enriched:" in line:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    settings = Settings(data_dir=tmp_path / "data", cache_dir=real_model)
    with Container(settings) as container:
        assert not index_is_current(container)
    finished = subprocess.run([*cli, "sync"], env=env, capture_output=True, text=True, check=False)
    assert finished.returncode == 0, finished.stderr
    settings = Settings(data_dir=tmp_path / "data", cache_dir=real_model)
    with Container(settings) as container:
        servers, tools = container.store.counts()
        assert len(container.store.get_enrichments()) == tools
        assert len(container.store.get_profiles()) == servers
        assert container.backend.count() == tools
        assert index_is_current(container)
    shutil.rmtree(tmp_path / "data")
