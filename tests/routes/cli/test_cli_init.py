"""``tool-selector init`` as a new user runs it: a home folder with Claude Desktop's and Cursor's
configurations, the real time server, the real model; then a resolve that activates it. And where the
clients keep their configuration on each platform; and the gateway's own entry is never imported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from services.write.init import client_config_paths
from tests.support.gateway_helpers import CLI, TIME_SERVER
from tool_selector.config.servers import read_client_config

GATEWAY_ENTRY = {"command": "uvx", "args": ["--from", "/src/tool-selector", "tool-selector", "serve"]}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]},
                    "tool-selector": GATEWAY_ENTRY,
                    "old": {"type": "sse", "url": "http://localhost:1/sse"},
                }
            }
        )
    )
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text("{ not json")
    return home


def _run(home: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOL_SELECTOR_", "XDG_"))}
    env |= {"HOME": str(home), "TOOL_SELECTOR_CACHE_DIR": str(cache)}
    return subprocess.run(
        [str(CLI), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_init_imports_the_clients_servers_syncs_and_the_first_resolve_activates(
    tmp_path: Path, real_model: Path
) -> None:
    if not TIME_SERVER.exists():
        pytest.skip("mcp-server-time is not installed (run scripts/setup.sh)")
    home = _home(tmp_path)
    done = _run(home, real_model, "init", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    data = home / ".local" / "share" / "tool-selector"
    assert summary["data_dir"] == str(data) and summary["servers"] == ["time"]
    desktop, cursor = summary["sources"]
    assert desktop["client"] == "Claude Desktop" and desktop["added"] == ["time"]
    assert set(desktop["skipped"]) == {"tool-selector", "old"}
    assert cursor["client"] == "Cursor" and "Cannot read" in cursor["error"]
    assert summary["sync"]["ok"] and summary["sync"]["tools_added"] == 2
    # the command as it was started (a link into a tool's environment stays the link), in a lasting place
    assert summary["client_entry"] == {"command": str(CLI.absolute()), "args": ["serve"]}
    assert summary["install"] is None
    assert set(json.loads((data / "servers.json").read_text())["mcpServers"]) == {"time"}

    answer = _run(home, real_model, "resolve", "--json", "what time is it in Tokyo")
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["status"] == "activated"

    again = _run(home, real_model, "init", "--text", "--no-sync")  # keeps the file, adds nothing
    assert again.returncode == 0, again.stderr
    assert "(kept, added to)" in again.stdout and "skipped time: already configured" in again.stdout
    assert '"command": "' + str(CLI.absolute()) + '"' in again.stdout
    assert "claude mcp add tool-selector" in again.stdout


def test_init_without_any_client_configuration_says_how_to_add_a_server(
    tmp_path: Path, real_model: Path
) -> None:
    done = _run(tmp_path, real_model, "init", "--text")
    assert done.returncode == 0, done.stderr
    assert "no Claude Desktop, Claude Code or Cursor configuration found" in done.stdout
    assert "next: add a server (tool-selector servers add" in done.stdout
    written = tmp_path / ".local/share/tool-selector/servers.json"
    assert json.loads(written.read_text()) == {"mcpServers": {}}


def test_where_each_client_keeps_its_servers() -> None:
    home = Path("/h")
    linux = dict(client_config_paths(home, platform="linux", environ={}))
    assert linux["Claude Desktop"] == home / ".config/Claude/claude_desktop_config.json"
    assert linux["Claude Code"] == home / ".claude.json" and linux["Cursor"] == home / ".cursor/mcp.json"
    mac = dict(client_config_paths(home, platform="darwin", environ={}))
    assert mac["Claude Desktop"] == home / "Library/Application Support/Claude/claude_desktop_config.json"
    win = dict(client_config_paths(home, platform="win32", environ={"APPDATA": "/appdata"}))
    assert win["Claude Desktop"] == Path("/appdata/Claude/claude_desktop_config.json")


@pytest.mark.parametrize(
    "entry",
    [
        GATEWAY_ENTRY,
        {"command": "/home/me/.venv/bin/tool-selector", "args": ["serve"]},
        {"command": "pipx", "args": ["run", "tool-selector", "serve", "--http", "8765"]},
    ],
)
def test_the_gateways_own_entry_is_never_imported(tmp_path: Path, entry: dict[str, object]) -> None:
    config = tmp_path / "mcp.json"
    other = {"command": "tool-selector-helper", "args": ["serve"]}
    config.write_text(json.dumps({"mcpServers": {"gateway": entry, "other": other}}))
    found = read_client_config(config)
    assert set(found.servers) == {"other"}
    assert found.skipped == {"gateway": "this is the tool-selector gateway itself, not a server it routes to"}


def test_init_again_keeps_a_configured_server_unless_replace_is_passed(
    tmp_path: Path, real_model: Path
) -> None:
    """The skipped line's advice is an option init has: --replace takes the client's entry."""
    home = _home(tmp_path)
    assert _run(home, real_model, "init", "--no-sync", "--text").returncode == 0
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    config = json.loads(desktop.read_text())
    config["mcpServers"]["time"]["args"] = ["--local-timezone", "Europe/Paris"]
    desktop.write_text(json.dumps(config))
    servers = home / ".local/share/tool-selector/servers.json"

    again = _run(home, real_model, "init", "--no-sync", "--text")
    assert again.returncode == 0, again.stderr
    assert "skipped time: already configured (pass --replace to overwrite)" in again.stdout
    assert json.loads(servers.read_text())["mcpServers"]["time"]["args"] == ["--local-timezone", "UTC"]

    replaced = _run(home, real_model, "init", "--no-sync", "--replace", "--text")
    assert replaced.returncode == 0, replaced.stderr
    assert "imported time" in replaced.stdout
    assert json.loads(servers.read_text())["mcpServers"]["time"]["args"] == [
        "--local-timezone",
        "Europe/Paris",
    ]
