"""End to end on examples/demo-catalog with the real model through the `tool-selector` CLI (Typer's
CliRunner): catalog import, index build and resolve, and the operator mistakes they name."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from tests.support.paths import DEMO_CATALOG

GITHUB = "GitHub Projects MCP Server"
GITHUB_QUERY = "list the open issues of my GitHub project"
TIERS = {"activated", "multiple_matches", "weak_matches", "not_found"}


def _demo_tools_of(server: str) -> list[str]:
    tools = json.loads((DEMO_CATALOG / "tools.json").read_text(encoding="utf-8"))
    return [t["name"] for t in tools if t["server"] == server]


def _invoke(args: Sequence[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory, real_model: Path) -> dict[str, str]:
    """A data folder where the CLI itself imported the demo catalog and built the index (real model)."""
    env = {
        "TOOL_SELECTOR_DATA_DIR": str(tmp_path_factory.mktemp("cli-data")),
        "TOOL_SELECTOR_CACHE_DIR": str(real_model),
    }
    imported = _json(_invoke(["catalog", "import", str(DEMO_CATALOG), "--approve"], env))
    built = _json(_invoke(["index", "build"], env))
    env["_imported"] = json.dumps(imported)
    env["_built"] = json.dumps(built)
    return env


def _env(cli_env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in cli_env.items() if not k.startswith("_")}


# --------------------------------------------------------------------------- the pipeline through the CLI


def test_catalog_import_and_index_build_report_what_they_did(cli_env: dict[str, str]) -> None:
    imported = json.loads(cli_env["_imported"])
    built = json.loads(cli_env["_built"])
    assert (imported["servers_added"], imported["tools_added"]) == (18, 134)
    assert (built["documents"], built["embedded"], built["written"]) == (134, 134, 134)
    assert built["errors"] == {}
    listed = _json(_invoke(["catalog", "list"], _env(cli_env)))
    assert len(listed) == 18
    assert {"name": GITHUB, "tools": len(_demo_tools_of(GITHUB)), "creation_method": "import"} in listed


def test_a_second_index_build_embeds_nothing(cli_env: dict[str, str]) -> None:
    again = _json(_invoke(["index", "build"], _env(cli_env)))
    assert again["documents"] == 134
    assert again["unchanged"] == 134
    assert (again["embedded"], again["written"], again["removed"]) == (0, 0, 0)


def test_a_rebuild_rewrites_every_document_with_vectors_from_the_cache(cli_env: dict[str, str]) -> None:
    rebuilt = _json(_invoke(["index", "build", "--rebuild"], _env(cli_env)))
    assert (rebuilt["documents"], rebuilt["written"], rebuilt["unchanged"]) == (134, 134, 0)
    assert (rebuilt["embedded"], rebuilt["vectors_from_cache"]) == (0, 134)


def test_resolve_prints_a_tiered_decision_with_the_github_server_on_top(cli_env: dict[str, str]) -> None:
    decision = _json(_invoke(["resolve", GITHUB_QUERY], _env(cli_env)))
    assert decision["status"] in TIERS
    assert decision["query"] == GITHUB_QUERY
    assert 0.0 <= decision["confidence"] <= 1.0
    if decision["status"] == "activated":
        top = decision["power"]
        assert sorted(t["name"] for t in decision["tools"]) == sorted(_demo_tools_of(GITHUB))
    else:
        assert decision["status"] != "not_found", decision
        top = decision["matches"][0]["power"]
    assert top == GITHUB


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_every_search_mode_ranks_tools_with_match_types(cli_env: dict[str, str], mode: str) -> None:
    out = _json(_invoke(["resolve", GITHUB_QUERY, "--mode", mode, "--explain"], _env(cli_env)))
    resolution = out["resolution"]
    assert resolution["mode"] == mode
    tools = resolution["tools"]
    assert len(tools) == 10
    scores = [t["score"] for t in tools]
    assert scores == sorted(scores, reverse=True)
    kinds = {t["match_type"] for t in tools}
    if mode == "hybrid":
        assert "hybrid" in kinds
        assert kinds <= {"hybrid", "semantic"}
    else:
        assert kinds == {mode}
    assert resolution["powers"][0]["name"] == GITHUB
    assert resolution["powers"][0]["match_type"] in {mode, "semantic"}
    assert set(resolution["features"]) >= {"top_cosine", "cosine_margin"}


def test_an_unknown_search_mode_exits_with_code_2(cli_env: dict[str, str]) -> None:
    result = _invoke(["resolve", GITHUB_QUERY, "--mode", "telepathic"], _env(cli_env))
    assert result.exit_code == 2
    assert "Invalid value for '--mode'" in result.stderr and "'telepathic' is not one of" in result.stderr
    assert all(f"'{mode}'" in result.stderr for mode in ("keyword", "semantic", "hybrid"))


# --------------------------------------------------------------------------- refused queries


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("", "The query is empty"),
        ("   ", "The query is empty"),
        ("y" * 100_000, "100,000 characters"),
    ],
    ids=["empty", "whitespace", "100kB"],
)
def test_the_cli_refuses_unusable_queries_with_exit_code_2(
    cli_env: dict[str, str], query: str, says: str
) -> None:
    result = _invoke(["resolve", query], _env(cli_env))
    assert result.exit_code == 2
    assert "error [invalid_input]" in result.stderr
    assert says in result.stderr
    assert result.stdout == ""


# --------------------------------------------------------------------------- operator mistakes


def test_resolve_before_any_index_build_names_the_command_to_run(tmp_path: Path) -> None:
    env = {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "fresh")}
    assert _invoke(["catalog", "import", str(DEMO_CATALOG), "--approve"], env).exit_code == 0
    result = _invoke(["resolve", GITHUB_QUERY], env)
    assert result.exit_code == 5
    assert "error [index_missing]" in result.stderr
    assert "tool-selector index build" in result.stderr
    assert result.stdout == ""


def test_index_build_on_an_empty_catalog_names_the_import_command(tmp_path: Path) -> None:
    result = _invoke(["index", "build"], {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "empty")})
    assert result.exit_code == 5
    assert "tool-selector catalog import" in result.stderr


@pytest.mark.parametrize("args", [["catalog", "list"], ["index", "build"], ["resolve", GITHUB_QUERY]])
def test_an_alpha_out_of_range_is_a_clear_configuration_error(args: list[str]) -> None:
    result = _invoke(args, {"TOOL_SELECTOR_SEARCH__ALPHA": "2"})
    assert result.exit_code == 7
    assert "error [configuration]" in result.stderr
    assert "Invalid settings: search.alpha (TOOL_SELECTOR_SEARCH__ALPHA)" in result.stderr
    assert "less than or equal to 1" in result.stderr
    assert "TOOL_SELECTOR_" in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_config_file_is_a_clear_configuration_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    result = _invoke(["catalog", "list"], {"TOOL_SELECTOR_CONFIG_FILE": str(missing)})
    assert result.exit_code == 7
    assert str(missing) in result.stderr


def test_the_cli_never_writes_outside_its_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "own"
    result = _invoke(
        ["catalog", "import", str(DEMO_CATALOG), "--approve"], {"TOOL_SELECTOR_DATA_DIR": str(data)}
    )
    assert result.exit_code == 0
    assert (data / "catalog.db").is_file()
    assert not (tmp_path / "env-data").exists()
    assert not (tmp_path / "xdg-data").exists()


def test_the_default_log_level_keeps_library_debug_lines_off_stderr(cli_env: dict[str, str]) -> None:
    result = _invoke(["resolve", GITHUB_QUERY], _env(cli_env))
    assert result.exit_code == 0
    assert "DEBUG" not in result.stderr, result.stderr


def _write_catalog(folder: Path, drop_server: str | None = None, change_tool: str | None = None) -> Path:
    servers = json.loads((DEMO_CATALOG / "servers.json").read_text(encoding="utf-8"))
    tools = json.loads((DEMO_CATALOG / "tools.json").read_text(encoding="utf-8"))
    servers = [s for s in servers if s["name"] != drop_server]
    tools = [t for t in tools if t["server"] != drop_server]
    for tool in tools:
        if f"{tool['server']}::{tool['name']}" == change_tool:
            tool["description"] += " Also works on archived items."
    folder.mkdir(parents=True)
    (folder / "servers.json").write_text(json.dumps(servers), encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    return folder


def test_an_index_build_after_a_catalog_change_embeds_only_the_changed_tools(
    tmp_path: Path, real_model: Path
) -> None:
    env = {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data")}
    assert _invoke(["catalog", "import", str(DEMO_CATALOG), "--approve"], env).exit_code == 0
    assert _json(_invoke(["index", "build"], env))["embedded"] == 134
    dropped = len(_demo_tools_of("Slowtime MCP Server"))
    changed = _write_catalog(
        tmp_path / "changed", drop_server="Slowtime MCP Server", change_tool=f"{GITHUB}::list-projects"
    )
    assert _invoke(["catalog", "import", str(changed), "--prune", "--approve"], env).exit_code == 0
    built = _json(_invoke(["index", "build"], env))
    assert built["documents"] == 134 - dropped
    assert (built["embedded"], built["written"], built["removed"]) == (1, 1, dropped)
    assert built["unchanged"] == 134 - dropped - 1


def test_resolve_on_an_index_older_than_the_catalog_asks_for_an_index_build(
    tmp_path: Path, real_model: Path
) -> None:
    """The index still ranks a server the catalog no longer has; resolving must not route on it."""
    env = {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data")}
    assert _invoke(["catalog", "import", str(DEMO_CATALOG), "--approve"], env).exit_code == 0
    assert _invoke(["index", "build"], env).exit_code == 0
    without_github = _write_catalog(tmp_path / "changed", drop_server=GITHUB)
    assert _invoke(["catalog", "import", str(without_github), "--prune", "--approve"], env).exit_code == 0
    result = _invoke(["resolve", GITHUB_QUERY], env)
    assert result.exit_code == 5, result.stdout[:300]
    assert "error [index_missing]" in result.stderr
    assert "tool-selector index build" in result.stderr


# --------------------------------------------------------------------------- what a person reads


def test_resolve_gives_json_into_a_pipe_and_a_short_summary_with_text(cli_env: dict[str, str]) -> None:
    piped = _json(_invoke(["resolve", GITHUB_QUERY], _env(cli_env)))  # CliRunner's stdout is no terminal
    assert piped["status"] in TIERS
    text = _invoke(["resolve", "--text", GITHUB_QUERY], _env(cli_env))
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"{piped['status']} ({piped['confidence']:.0%} sure)")
    assert lines[-1] == piped["message"]  # what to do next, last
    assert len(lines) <= 8  # a screen's corner, not every schema
    assert "input_schema" not in text.stdout and "{" not in text.stdout
    forced = _json(_invoke(["resolve", "--json", GITHUB_QUERY], _env(cli_env)))
    assert forced == piped


def test_the_summary_lists_a_line_per_tool_or_candidate_and_the_configured_powers() -> None:
    from routes.cli.resolve import summary
    from tool_selector.core.models import Decision, PowerSummary, ToolSummary

    tools = [ToolSummary(name=f"tool_{i}", description=f"does thing {i}\nover two lines") for i in range(7)]
    activated = summary(
        Decision(status="activated", confidence=0.93, query="q", message="Call one.", power="p", tools=tools)
    )
    assert activated.splitlines() == [
        "activated (93% sure): p",
        *[f"  tool_{i}  does thing {i} over two lines" for i in range(5)],
        "  ... 2 more tools (--json lists them)",
        "Call one.",
    ]
    matches = [
        PowerSummary(power="a", description="", tools=["x", "y"]),
        PowerSummary(power="b", description="B things"),
    ]
    multiple = summary(
        Decision(status="multiple_matches", confidence=0.5, query="q", message="Pick.", matches=matches)
    )
    assert multiple.splitlines() == [
        "multiple_matches (50% sure)",
        "  1. a [x, y]",
        "  2. b: B things",
        "Pick.",
    ]
    listed = [PowerSummary(power=f"s{i}", description="") for i in range(10)]
    none = summary(
        Decision(status="not_found", confidence=0.01, query="q", message="No.", available_powers=listed)
    )
    assert none.splitlines()[1] == "  configured: s0, s1, s2, s3, s4, s5, s6, s7 and 2 more"
