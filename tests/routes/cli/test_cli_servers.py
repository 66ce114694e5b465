"""``tool-selector servers add | list | remove | import`` through Typer's CliRunner, on the configuration
file of the test's own data folder."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from routes.cli import app


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_cli_adds_lists_and_removes_servers(tmp_path: Path) -> None:
    code, out = _run(
        "servers", "add", "clock", "--steering", "Time.", "--", "mcp-server-time", "--local-timezone", "UTC"
    )
    assert code == 0, out
    code, out = _run("servers", "add", "docs", "--url", "https://docs.example/mcp", "--header", "X-Key=${K}")
    assert code == 0, out
    code, out = _run("servers", "list")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["clock"]["target"] == "mcp-server-time --local-timezone UTC"
    assert rows["docs"]["transport"] == "http"
    assert rows["clock"]["tools"] is None  # not discovered yet
    code, out = _run("servers", "add", "clock", "--", "other")
    assert code == 2 and "already configured" in out
    code, out = _run("servers", "remove", "clok")
    assert code == 4 and "Closest: clock" in out
    code, out = _run("servers", "remove", "clock")
    assert code == 0, out
    assert [r["name"] for r in json.loads(_run("servers", "list")[1])] == ["docs"]


def test_cli_refuses_a_server_name_it_cannot_use_and_stores_nothing() -> None:
    code, out = _run("servers", "add", "bad$name", "--", "echo")
    assert code == 2 and "not a usable server name" in out
    assert json.loads(_run("servers", "list")[1]) == []


def test_cli_refuses_a_name_with_a_space_or_newline_at_its_end_and_a_case_copy_of_a_configured_one(
    tmp_path: Path,
) -> None:
    assert _run("servers", "add", "clock", "--", "echo")[0] == 0
    for bad in ("clock2 ", "clock3\n"):
        code, out = _run("servers", "add", bad, "--", "echo")
        assert code == 2 and "not a usable server name" in out, out
    code, out = _run("servers", "add", "CLOCK", "--", "echo")
    assert code == 2 and "'clock' only in case" in out, out
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"Clock": {"command": "echo"}}}))
    code, out = _run("servers", "import", str(source))
    assert code == 0 and "only in case" in json.loads(out)["skipped"]["Clock"], out
    assert [r["name"] for r in json.loads(_run("servers", "list")[1])] == ["clock"]


def test_cli_refuses_an_entry_without_command_or_url() -> None:
    code, out = _run("servers", "add", "nothing")
    assert code == 2 and "either 'command'" in out


def test_cli_imports_a_claude_desktop_config_and_skips_known_names(tmp_path: Path) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
                }
            }
        )
    )
    code, out = _run("servers", "import", str(source))
    assert code == 0 and json.loads(out)["added"] == ["memory"]
    code, out = _run("servers", "import", str(source))
    assert "already configured" in json.loads(out)["skipped"]["memory"]
    code, out = _run("servers", "import", str(source), "--replace")
    assert json.loads(out)["replaced"] == ["memory"]
