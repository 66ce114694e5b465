"""Reading another client's configuration imports what the person has switched on (issue 39, finding 5),
in the shapes the clients write: ``"disabled": true`` on an entry (Cursor, Cline, Windsurf and others),
Claude Code's ``disabledMcpServers`` at the top of ``~/.claude.json`` and per project, and its
per-project servers. Every entry left out is reported with the reason; values and ``${VAR}`` references
are kept as the client had them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tool_selector.config.servers import read_client_config


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_an_entry_switched_off_with_disabled_true_is_skipped_and_said_why(tmp_path: Path) -> None:
    source = write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "time": {"command": "mcp-server-time"},
                "browser": {"command": "npx", "args": ["-y", "@playwright/mcp"], "disabled": True},
                "notes": {"command": "notes-mcp", "enabled": False},
                "search": {"command": "search-mcp", "disabled": False},
            }
        },
    )
    found = read_client_config(source)
    assert set(found.servers) == {"time", "search"}
    assert set(found.skipped) == {"browser", "notes"}
    assert found.skipped["browser"].startswith('switched off in the client ("disabled": true)')
    assert found.skipped["notes"].startswith('switched off in the client ("enabled": false)')
    assert "import again (`tool-selector init`)" in found.skipped["browser"]


def claude_code(tmp_path: Path) -> Path:
    """~/.claude.json as Claude Code writes it: user servers at the top, local ones per project, and the
    servers switched off in the /mcp dialog listed per project (and at the top)."""
    return write(
        tmp_path / ".claude.json",
        {
            "numStartups": 12,
            "mcpServers": {
                "github": {"type": "stdio", "command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_literal_1"}},
                "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp"},
                "linear": {"type": "stdio", "command": "linear-mcp"},
            },
            "disabledMcpServers": ["sentry"],
            "projects": {
                "/home/me/app": {
                    "allowedTools": [],
                    "mcpServers": {
                        "postgres": {"command": "pg-mcp", "env": {"PG_URL": "${PG_URL}"}},
                        "scratch": {"command": "scratch-mcp"},
                    },
                    "disabledMcpServers": ["scratch", "linear"],
                    "enabledMcpjsonServers": [],
                    "disabledMcpjsonServers": [],
                },
                "/home/me/other": {
                    "mcpServers": {"scratch": {"command": "scratch-mcp", "args": ["--other"]}},
                    "disabledMcpServers": ["scratch"],
                },
            },
        },
    )


def test_claude_codes_disabled_servers_at_the_top_and_per_project_are_skipped_with_where(
    tmp_path: Path,
) -> None:
    found = read_client_config(claude_code(tmp_path))
    # linear is switched off in one project only: it is on for every other one, so it is imported
    assert set(found.servers) == {"github", "linear", "postgres"}
    hint = "switch it on there and import again (`tool-selector init`), or `tool-selector servers add` it"
    assert found.skipped == {
        "sentry": f"switched off in Claude Code (disabledMcpServers); {hint}",
        "scratch": f"switched off in Claude Code for the project /home/me/app (disabledMcpServers); {hint}",
    }


def test_values_and_references_are_kept_as_the_client_had_them(tmp_path: Path) -> None:
    found = read_client_config(claude_code(tmp_path))
    assert found.servers["github"].env == {"GITHUB_TOKEN": "ghp_literal_1"}
    assert found.servers["postgres"].env == {"PG_URL": "${PG_URL}"}


def test_a_name_defined_differently_in_two_projects_is_imported_once_and_the_other_reported(
    tmp_path: Path,
) -> None:
    source = write(
        tmp_path / ".claude.json",
        {
            "projects": {
                "/a": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--a"]}}},
                "/b": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--b"]}}},
                "/c": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--a"]}}},
            }
        },
    )
    found = read_client_config(source)
    assert found.servers["db"].args == ["--a"]
    assert found.skipped == {"db (project /b)": "another definition of 'db' was imported (from project /a)"}


def test_a_name_switched_off_in_one_project_and_on_in_another_is_imported_from_where_it_is_on(
    tmp_path: Path,
) -> None:
    source = write(
        tmp_path / ".claude.json",
        {
            "projects": {
                "/a": {
                    "mcpServers": {"db": {"command": "db-mcp", "args": ["--a"]}},
                    "disabledMcpServers": ["db"],
                },
                "/b": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--b"]}}},
            }
        },
    )
    found = read_client_config(source)
    assert found.servers["db"].args == ["--b"] and found.skipped == {}
