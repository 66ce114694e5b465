"""Every option of the CLI that takes one of a fixed set of values is checked by typer itself: a wrong
value exits 2 before any work, naming the option and listing exactly the choices the settings, the
search modes, the batch formats and the key roles and scopes accept. Letter case does not matter for
roles and scopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from routes.cli import app

ENRICHERS = ("auto", "offline", "claude", "none")


def _said(stderr: str) -> str:
    """The error text without the frame typer draws around it, on one line."""
    return " ".join(stderr.replace("│", " ").replace("╭", " ").replace("╰", " ").split())


@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        (["resolve", "a query"], "--mode", ("keyword", "semantic", "hybrid")),
        (["index", "rebuild"], "--backend", ("embedded", "weaviate")),
        (["sync"], "--enricher", ENRICHERS),
        (["lab", "eval", "ds", "--predictions", "p.jsonl"], "--enricher", ENRICHERS),
        (["lab", "bench-sync"], "--enricher", ENRICHERS),
        (["catalog", "register", "f.csv"], "--format", ("auto", "catalog", "csv", "mcpservers")),
        (["catalog", "register", "f.csv"], "--matching-mode", ("auto", "force_create", "match_only")),
        (["catalog", "register", "f.csv"], "--match-scope", ("server", "catalog")),
        (["keys", "create", "x"], "--role", ("viewer", "contributor", "editor", "admin")),
        (
            ["keys", "create", "x", "--role", "admin"],
            "--scope",
            ("read", "write", "edit", "import", "call", "approve", "admin"),
        ),
    ],
)
def test_a_value_outside_the_choices_exits_2_and_lists_the_choices(
    tmp_path: Path, command: list[str], option: str, choices: tuple[str, ...]
) -> None:
    result = CliRunner().invoke(
        app, [*command, option, "bogus"], env={"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data")}
    )
    listed = ", ".join(f"'{choice}'" for choice in choices)
    assert result.exit_code == 2 and result.stdout == ""
    said = _said(result.stderr)
    assert f"Invalid value for '{option}': Value error, 'bogus' is not one of {listed}." in said
    assert not (tmp_path / "data").exists()  # refused before any settings or database were opened


def test_roles_and_scopes_are_read_in_any_letter_case_and_stored_lower_case(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["keys", "create", "ci-bot", "--role", "Editor", "--scope", "IMPORT", "--scope", "Read"],
        env={"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data")},
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert (created["role"], created["scopes"]) == ("editor", ["import", "read"])
