"""One depth (and size) limit for every JSON value a definition carries (issue 39, medium 8), held by
``ToolSpec`` and ``ServerSpec`` themselves, so every door refuses it before anything is stored: catalog
folders and batches (JSON and CSV, with the item or line), ``catalog import`` (exit 3), a client
configuration nested deeper than the JSON parser goes (``servers import``), and what was stored before
the limit reads as withheld."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from routes.cli import app
from tool_selector.catalog_files.batch import parse_csv
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.config.servers import read_client_config
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.json_limits import MAX_JSON_DEPTH, SCHEMA_CHARS, WITHHELD_KEY, json_depth, read_json
from tool_selector.core.models import ServerSpec, ToolSpec

LIMIT = f"more than {MAX_JSON_DEPTH} levels"


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"x": value}
    return value


def test_depth_is_counted_without_recursion_even_far_past_what_the_json_parser_takes() -> None:
    assert [json_depth(v) for v in ({}, [], {"a": [1, {"b": {}}]}, "text", 3)] == [1, 1, 4, 0, 0]
    assert json_depth(nested(MAX_JSON_DEPTH)) == MAX_JSON_DEPTH
    assert json_depth(nested(100_000)) == MAX_JSON_DEPTH + 1  # it stops counting there


@pytest.mark.parametrize("field", ["input_schema", "output_schema", "annotations"])
def test_a_tool_keeps_each_json_value_within_the_depth_and_size_limits(field: str) -> None:
    ToolSpec(server="s", name="t", **{field: nested(MAX_JSON_DEPTH)})
    for too_much in (nested(MAX_JSON_DEPTH + 1), nested(100_000), {"d": "x" * SCHEMA_CHARS}):
        with pytest.raises(ValidationError) as caught:
            ToolSpec(server="s", name="t", **{field: too_much})
        message = caught.value.errors()[0]["msg"]
        assert field in message and "at most" in message, message
    with pytest.raises(ValidationError, match=LIMIT):
        ServerSpec(name="s", metadata={"notes": nested(MAX_JSON_DEPTH)})


def test_a_catalog_folder_with_a_tool_nested_too_deep_is_refused_whole_naming_the_item(
    tmp_path: Path,
) -> None:
    (tmp_path / "servers.json").write_text(json.dumps([{"name": "abyss", "notes": nested(80)}]))
    tools = [
        {"server": "abyss", "name": "ok", "description": "Fine."},
        {"server": "abyss", "name": "dive", "description": "Deep.", "input_schema": nested(260)},
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    with pytest.raises(CatalogFileError) as caught:
        read_catalog_dir(tmp_path)
    problems = caught.value.details["problems"]
    assert [(p["item"], p["field"]) for p in problems] == [(0, "metadata"), (1, "input_schema")], problems
    assert all(LIMIT in p["message"] for p in problems)


def test_a_csv_schema_cell_nested_past_the_parser_is_a_problem_of_its_line_not_a_crash() -> None:
    cell = "[" * 50_000 + "]" * 50_000  # under the csv module's field limit
    text = f'server,tool,input_schema\nabyss,ok,\nabyss,dive,"{cell}"\n'
    with pytest.raises(CatalogFileError) as caught:
        parse_csv(text)
    [problem] = caught.value.details["problems"]
    assert problem["line"] == 3 and LIMIT in problem["message"], problem


def test_a_client_configuration_nested_past_the_parser_is_refused_saying_so(tmp_path: Path) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text('{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CatalogFileError, match="Cannot read"):
        read_client_config(source)


def test_catalog_import_of_a_tool_nested_too_deep_exits_3_naming_the_limit_and_stores_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "servers.json").write_text(json.dumps([{"name": "abyss", "description": "Deep things."}]))
    tool = {"server": "abyss", "name": "dive", "description": "Deep.", "output_schema": nested(260)}
    (tmp_path / "tools.json").write_text(json.dumps([tool]))
    result = CliRunner().invoke(app, ["catalog", "import", str(tmp_path), "--approve"])
    assert result.exit_code == 3, result.output
    assert "output_schema" in result.output and LIMIT in result.output, result.output
    listed = CliRunner().invoke(app, ["catalog", "list"])
    assert listed.exit_code == 0 and "abyss" not in listed.output, listed.output


def test_a_value_stored_deeper_than_the_limit_reads_as_withheld_saying_what_to_do() -> None:
    assert read_json(json.dumps(nested(MAX_JSON_DEPTH)), "input_schema", "Fix it.") == nested(MAX_JSON_DEPTH)
    shown = read_json(json.dumps(nested(260)), "input_schema", "Delete the tool.")
    assert list(shown) == [WITHHELD_KEY]
    assert "input_schema" in shown[WITHHELD_KEY] and "Delete the tool." in shown[WITHHELD_KEY]
