"""The operator's server configuration: the mcpServers format, ${VAR}s, imports from other clients.
The `servers` CLI commands are tested in tests/routes/cli/test_cli_servers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tool_selector.config.servers import (
    ServerConfig,
    ServersFile,
    load_servers,
    read_client_config,
    save_servers,
)
from tool_selector.core.errors import CatalogFileError, InvalidInputError


def test_a_missing_configuration_file_is_an_empty_configuration(tmp_path: Path) -> None:
    assert load_servers(tmp_path / "none.json").mcpServers == {}


def test_stdio_and_http_entries_round_trip_with_their_options(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    servers = ServersFile(
        mcpServers={
            "time": ServerConfig(
                command="/bin/time-server", args=["--utc"], steering="Time.", keywords=["clock"]
            ),
            "docs": ServerConfig(url="https://example.com/mcp", headers={"Authorization": "Bearer ${T}"}),
        }
    )
    save_servers(path, servers)
    raw = json.loads(path.read_text())
    assert raw["mcpServers"]["time"] == {
        "command": "/bin/time-server",
        "args": ["--utc"],
        "steering": "Time.",
        "keywords": ["clock"],
    }
    again = load_servers(path)
    assert again.mcpServers["docs"].transport == "http"
    assert again.mcpServers["time"].transport == "stdio"
    assert again == servers


def test_an_entry_needs_exactly_one_of_command_and_url() -> None:
    with pytest.raises(ValueError, match="either 'command'"):
        ServerConfig()
    with pytest.raises(ValueError, match="either 'command'"):
        ServerConfig(command="x", url="http://h/mcp")


def test_an_invalid_file_names_the_entry_and_field(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"bad": {"command": "x", "args": "not-a-list"}}}))
    with pytest.raises(CatalogFileError, match=r"bad\.args"):
        load_servers(path)
    path.write_text("{not json")
    with pytest.raises(CatalogFileError, match="Cannot read the server configuration"):
        load_servers(path)


def test_variables_are_taken_from_the_environment_with_defaults() -> None:
    config = ServerConfig(
        command="srv", args=["--root", "${ROOT:-/tmp}"], env={"TOKEN": "${TOKEN}"}, headers={}
    ).resolved({"TOKEN": "secret"})
    assert config.args == ["--root", "/tmp"]
    assert config.env == {"TOKEN": "secret"}
    with pytest.raises(InvalidInputError, match=r"\$\{TOKEN\}"):
        ServerConfig(command="srv", env={"TOKEN": "${TOKEN}"}).resolved({})


def test_relative_commands_resolve_against_the_configuration_file(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    path = tmp_path / "cfg" / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "../bin/server"}, "b": {"command": "uvx"}}}))
    servers = load_servers(path)
    assert servers.mcpServers["a"].command == str(tmp_path / "bin" / "server")
    assert servers.mcpServers["b"].command == "uvx"


def test_the_demo_configuration_lists_the_seven_real_servers() -> None:
    servers = load_servers(ROOT / "examples" / "demo-servers.json")
    assert set(servers.mcpServers) == {
        "time",
        "fetch",
        "git",
        "everything",
        "filesystem",
        "memory",
        "sequential-thinking",
    }
    assert all(c.command and Path(c.command).is_absolute() for c in servers.mcpServers.values())


def test_claude_code_configs_yield_top_level_and_project_servers_and_skip_sse(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text(
        json.dumps(
            {
                "numStartups": 3,
                "mcpServers": {
                    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {}}
                },
                "projects": {
                    "/home/me/p": {
                        "mcpServers": {
                            "docs": {"type": "http", "url": "https://docs.example/mcp"},
                            "old": {"type": "sse", "url": "https://old.example/sse"},
                        }
                    }
                },
            }
        )
    )
    found = read_client_config(path)
    assert set(found.servers) == {"time", "docs"}
    assert found.servers["docs"].transport == "http"
    assert "SSE" in found.skipped["old"]


def test_a_file_without_servers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("{}")
    with pytest.raises(CatalogFileError, match="no 'mcpServers'"):
        read_client_config(path)
