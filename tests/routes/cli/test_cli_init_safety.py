"""``tool-selector init`` on a home folder under tmp (issue 39): it imports what the person has switched
on and says on the terminal what it skipped and why; it keeps the clients' secret values in a servers
file only its owner reads and prints none of them; it never follows a client's configuration file out
of the client's folder, nor replaces a linked servers file with a file. Typer's CliRunner, ``--no-sync``
(the fast loop); the last test runs the real command with its first sync."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from tests.support.gateway_helpers import CLI, TIME_SERVER

GITHUB_TOKEN = "ghp_literal_secret_4242"
DOCS_KEY = "docs-key-literal-8282"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def data_dir() -> Path:
    return Path(os.environ["TOOL_SELECTOR_DATA_DIR"])


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def desktop(home: Path) -> Path:
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def init(*args: str) -> Result:
    return CliRunner().invoke(app, ["init", "--no-sync", *args])


def configured() -> dict[str, Any]:
    servers: dict[str, Any] = json.loads((data_dir() / "servers.json").read_text())["mcpServers"]
    return servers


def test_init_keeps_the_clients_values_in_a_file_only_its_owner_reads_and_prints_none_of_them(
    home: Path,
) -> None:
    write(
        desktop(home),
        {
            "mcpServers": {
                "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": GITHUB_TOKEN}},
                "docs": {
                    "url": f"https://docs.test/mcp?key={DOCS_KEY}",
                    "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                },
            }
        },
    )
    text, as_json = init("--text"), init("--json")  # the second run finds both already configured
    assert text.exit_code == 0 and as_json.exit_code == 0, text.output + as_json.output
    for output in (text.output, as_json.output):
        assert GITHUB_TOKEN not in output and DOCS_KEY not in output, output
    servers = configured()
    assert servers["github"]["env"] == {"GITHUB_TOKEN": GITHUB_TOKEN}
    assert servers["docs"]["headers"] == {"Authorization": "Bearer ${DOCS_TOKEN}"}
    assert stat.S_IMODE((data_dir() / "servers.json").stat().st_mode) == 0o600

    listed = CliRunner().invoke(app, ["servers", "list"])
    assert listed.exit_code == 0 and GITHUB_TOKEN not in listed.output and DOCS_KEY not in listed.output
    targets = {row["name"]: row["target"] for row in json.loads(listed.output)}
    assert targets == {
        "github": "env 'GITHUB_TOKEN=***' gh-mcp",
        "docs": "https://docs.test/mcp?key=*** (headers: Authorization)",
    }
    revealed = CliRunner().invoke(app, ["servers", "list", "--show-values"])
    assert GITHUB_TOKEN in revealed.output and DOCS_KEY in revealed.output


def test_init_never_loosens_the_mode_of_a_servers_file_that_exists(home: Path) -> None:
    write(
        desktop(home),
        {"mcpServers": {"github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": GITHUB_TOKEN}}}},
    )
    path = write(data_dir() / "servers.json", {"mcpServers": {}})
    path.chmod(0o400)
    done = init("--text")
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(path.stat().st_mode) == 0o400
    path.chmod(0o600)
    assert set(configured()) == {"github"}


def test_init_imports_only_what_the_person_switched_on_and_prints_each_skip_with_why(home: Path) -> None:
    write(
        desktop(home),
        {
            "mcpServers": {
                "time": {"command": "mcp-server-time"},
                "browser": {"command": "pw-mcp", "disabled": True},
            }
        },
    )
    write(
        home / ".claude.json",
        {
            "mcpServers": {
                "github": {"command": "gh-mcp"},
                "sentry": {"type": "http", "url": "https://s.test/mcp"},
            },
            "disabledMcpServers": ["sentry"],
            "projects": {
                "/home/me/app": {
                    "mcpServers": {"scratch": {"command": "scratch-mcp"}, "pg": {"command": "pg-mcp"}},
                    "disabledMcpServers": ["scratch"],
                }
            },
        },
    )
    write(
        home / ".cursor" / "mcp.json",
        {"mcpServers": {"figma": {"url": "https://f.test/mcp", "disabled": True}}},
    )
    done = init("--text")
    assert done.exit_code == 0, done.output
    assert set(configured()) == {"time", "github", "pg"}
    lines = done.output.splitlines()
    assert any(
        line.startswith('  skipped browser: switched off in the client ("disabled": true)') for line in lines
    )
    assert any(
        line.startswith("  skipped sentry: switched off in Claude Code (disabledMcpServers)")
        for line in lines
    )
    assert any(
        line.startswith("  skipped scratch: switched off in Claude Code for the project /home/me/app")
        for line in lines
    )
    assert any(
        line.startswith('  skipped figma: switched off in the client ("disabled": true)') for line in lines
    )


def test_init_does_not_follow_a_client_file_linked_out_of_the_clients_folder(
    home: Path, tmp_path: Path
) -> None:
    foreign = write(tmp_path / "shared" / "mcp.json", {"mcpServers": {"planted": {"command": "planted-mcp"}}})
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.symlink_to(foreign)
    inside = write(
        home / ".config" / "Claude" / "profiles" / "work.json", {"mcpServers": {"time": {"command": "t"}}}
    )
    desktop(home).symlink_to(inside)
    done = init("--text")
    assert done.exit_code == 0, done.output
    assert set(configured()) == {"time"}  # the link inside the client's folder is read
    assert (
        f"{cursor}: not read: {cursor} is a symbolic link to {foreign}, outside the client's folder"
        in done.output
    )
    assert f"tool-selector init --from {foreign}" in done.output


def test_init_refuses_a_servers_file_linked_out_of_the_data_folder_and_changes_neither(
    home: Path, tmp_path: Path
) -> None:
    write(desktop(home), {"mcpServers": {"time": {"command": "t"}}})
    elsewhere = write(tmp_path / "dotfiles" / "servers.json", {"mcpServers": {}})
    data_dir().mkdir(parents=True)
    link = data_dir() / "servers.json"
    link.symlink_to(elsewhere)
    done = init("--text")
    assert done.exit_code == 3, done.output
    assert f"{link} is a symbolic link to {elsewhere}" in done.output
    assert link.is_symlink() and json.loads(elsewhere.read_text()) == {"mcpServers": {}}


def test_init_writes_through_a_servers_file_linked_inside_the_data_folder(home: Path) -> None:
    write(desktop(home), {"mcpServers": {"time": {"command": "t"}}})
    real = write(data_dir() / "profiles" / "home.json", {"mcpServers": {}})
    link = data_dir() / "servers.json"
    link.symlink_to(real)
    done = init("--text")
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and set(json.loads(real.read_text())["mcpServers"]) == {"time"}


def test_inits_first_sync_starts_no_entry_the_person_switched_off_and_prints_no_secret_of_a_failing_one(
    home: Path, tmp_path: Path, real_model: Path
) -> None:
    """The real command in a process, with its first sync: a switched-off entry would leave a marker."""
    if not TIME_SERVER.exists():
        pytest.skip("mcp-server-time is not installed (run scripts/setup.sh)")
    marker = tmp_path / "started"
    spy = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
    prints_token = "import os, sys; sys.stderr.write('token ' + os.environ['GITHUB_TOKEN']); sys.exit(3)"
    write(
        desktop(home),
        {
            "mcpServers": {
                "time": {"command": str(TIME_SERVER)},
                "github": {
                    "command": sys.executable,
                    "args": ["-c", prints_token],
                    "env": {"GITHUB_TOKEN": GITHUB_TOKEN},
                },
                "off": {**spy, "disabled": True},
            }
        },
    )
    write(home / ".claude.json", {"mcpServers": {"off2": spy}, "disabledMcpServers": ["off2"]})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOL_SELECTOR_", "XDG_"))}
    env |= {"HOME": str(home), "TOOL_SELECTOR_CACHE_DIR": str(real_model)}
    done = subprocess.run(
        [str(CLI), "init", "--text"], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 20, done.stdout + done.stderr  # github failed, the rest synced
    assert not marker.exists(), "a switched-off entry was started"
    assert "failed: github:" in done.stdout and "token ***" in done.stdout, done.stdout
    assert GITHUB_TOKEN not in done.stdout + done.stderr
    assert "skipped off: switched off" in done.stdout and "skipped off2: switched off" in done.stdout
