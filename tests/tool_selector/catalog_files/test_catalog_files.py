"""Catalog folders in the benchmark format, and the clear errors a broken one gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from routes.cli import app
from tests.support.paths import DEMO_CATALOG
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.core.errors import CatalogFileError

SERVERS = [
    {"name": "Weather", "description": "Forecasts", "categories": ["weather"], "url": "https://w"},
    {"name": "Clock: World", "description": "Time zones"},
]
TOOLS = [
    {
        "server": "Weather",
        "name": "forecast",
        "description": "Daily forecast",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {"server": "Clock: World", "name": "now", "description": "Current time", "input_schema": None},
    {"server": "Clock: World", "name": "zones"},
]


def _write(folder: Path, servers: Any = None, tools: Any = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.json").write_text(json.dumps(SERVERS if servers is None else servers, indent=2))
    (folder / "tools.json").write_text(json.dumps(TOOLS if tools is None else tools, indent=2))
    return folder


def _error(folder: Path) -> CatalogFileError:
    with pytest.raises(CatalogFileError) as info:
        read_catalog_dir(folder)
    return info.value


# --------------------------------------------------------------------------- reading


def test_a_benchmark_format_folder_is_read_with_metadata_and_default_schemas(tmp_path: Path) -> None:
    servers, tools = read_catalog_dir(_write(tmp_path / "cat"))
    assert [s.name for s in servers] == ["Weather", "Clock: World"]
    assert servers[0].description == "Forecasts"
    assert servers[0].metadata == {"categories": ["weather"], "url": "https://w"}
    assert servers[1].metadata == {}
    assert [t.id for t in tools] == ["Weather::forecast", "Clock: World::now", "Clock: World::zones"]
    assert tools[0].input_schema["properties"] == {"city": {"type": "string"}}
    assert tools[1].input_schema == {}  # null schema -> empty object
    assert tools[2].description == ""


def test_the_demo_catalog_reads_whole() -> None:
    servers, tools = read_catalog_dir(DEMO_CATALOG)
    raw_servers = json.loads((DEMO_CATALOG / "servers.json").read_text(encoding="utf-8"))
    raw_tools = json.loads((DEMO_CATALOG / "tools.json").read_text(encoding="utf-8"))
    assert len(servers) == len(raw_servers) == 18
    assert len(tools) == len(raw_tools) == 134
    assert "GitHub Projects MCP Server" in {s.name for s in servers}
    assert all(t.server in {s.name for s in servers} for t in tools)


# --------------------------------------------------------------------------- errors


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    err = _error(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in err.message
    assert "does not exist" in err.message
    assert "servers.json" in err.hint


def test_a_file_instead_of_a_folder_is_named(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text("[]")
    err = _error(path)
    assert f"{path} is not a folder" in err.message


def test_a_missing_servers_file_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat")
    (folder / "servers.json").unlink()
    err = _error(folder)
    assert f"Missing catalog file {folder / 'servers.json'}" in err.message


def test_a_missing_tools_file_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat")
    (folder / "tools.json").unlink()
    err = _error(folder)
    assert f"Missing catalog file {folder / 'tools.json'}" in err.message


def test_broken_json_names_the_file_and_the_line(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat")
    (folder / "tools.json").write_text('[\n  {"server": "Weather", "name": "x"},\n  {"server": \n]\n')
    err = _error(folder)
    assert str(folder / "tools.json") in err.message
    assert "not valid JSON" in err.message
    assert "line 4" in err.message
    assert err.details["line"] == 4


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat")
    (folder / "servers.json").write_bytes(b'[{"name": "caf\xe9"}]')
    err = _error(folder)
    assert f"{folder / 'servers.json'} is not UTF-8" in err.message


@pytest.mark.parametrize("which", ["servers.json", "tools.json"])
def test_a_file_that_is_not_a_list_is_named(tmp_path: Path, which: str) -> None:
    folder = _write(tmp_path / "cat")
    (folder / which).write_text('{"name": "Weather"}')
    err = _error(folder)
    assert f"{folder / which} must hold a JSON list, found dict" in err.message


def test_a_server_without_a_name_names_the_item_and_the_field(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", servers=[SERVERS[0], {"description": "anonymous"}])
    err = _error(folder)
    assert f"{folder / 'servers.json'} item 1" in err.message
    assert "name" in err.message.split("item 1", 1)[1]


def test_a_server_that_is_not_an_object_names_the_item(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", servers=[SERVERS[0], "Clock"])
    err = _error(folder)
    assert f"{folder / 'servers.json'} item 1 is not an object" in err.message


def test_a_tool_without_a_server_names_the_item_and_the_field(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", tools=[TOOLS[0], {"name": "orphan", "description": "?"}])
    err = _error(folder)
    assert f"{folder / 'tools.json'} item 1" in err.message
    assert "missing field(s) server" in err.message


def test_a_tool_naming_an_unknown_server_names_the_tool_and_the_server(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", tools=[*TOOLS, {"server": "Ghost", "name": "boo"}])
    err = _error(folder)
    assert f"{folder / 'tools.json'} item 3" in err.message
    assert "'Ghost::boo'" in err.message
    assert "server 'Ghost'" in err.message
    assert "servers.json" in err.message


def test_a_server_listed_twice_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", servers=[*SERVERS, {"name": "Weather", "description": "again"}])
    err = _error(folder)
    assert f"{folder / 'servers.json'} item 2" in err.message
    assert "'Weather' is listed twice" in err.message


def test_a_tool_listed_twice_is_named(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", tools=[*TOOLS, {"server": "Weather", "name": "forecast"}])
    err = _error(folder)
    assert f"{folder / 'tools.json'} item 3" in err.message
    assert "'Weather::forecast' is listed twice" in err.message


@pytest.mark.parametrize("schema", ["object", ["type", "object"], 3])
def test_a_schema_that_is_not_an_object_names_the_tool_and_the_field(tmp_path: Path, schema: Any) -> None:
    folder = _write(
        tmp_path / "cat", tools=[TOOLS[0], {"server": "Weather", "name": "bad", "input_schema": schema}]
    )
    err = _error(folder)
    assert f"{folder / 'tools.json'} item 1 (Weather::bad)" in err.message
    assert "input_schema" in err.message


def test_an_empty_server_list_is_refused(tmp_path: Path) -> None:
    folder = _write(tmp_path / "cat", servers=[], tools=[])
    err = _error(folder)
    assert f"{folder / 'servers.json'} lists no servers" in err.message


# --------------------------------------------------------------------------- through the CLI


def test_a_broken_tools_file_fails_the_cli_import_and_leaves_the_stored_catalog_unchanged(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    good = _write(tmp_path / "good")
    first = runner.invoke(app, ["catalog", "import", str(good)])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["tools_added"] == 3
    listed_before = runner.invoke(app, ["catalog", "list"])
    assert listed_before.exit_code == 0

    broken = _write(
        tmp_path / "broken",
        servers=[*SERVERS, {"name": "Fresh", "description": "new"}],
        tools=[{"server": "Fresh", "name": "x"}, {"server": "Weather", "name": 7}],
    )
    result = runner.invoke(app, ["catalog", "import", str(broken), "--prune"])
    assert result.exit_code == 3
    assert "error [catalog_file]" in result.stderr
    assert str(broken / "tools.json") in result.stderr
    assert "item 1" in result.stderr
    assert result.stdout == ""

    listed_after = runner.invoke(app, ["catalog", "list"])
    assert listed_after.exit_code == 0
    assert json.loads(listed_after.stdout) == json.loads(listed_before.stdout)
    assert [s["name"] for s in json.loads(listed_after.stdout)] == ["Clock: World", "Weather"]
