"""Import batches in three formats (catalog JSON or folder, CSV, mcpServers): all or nothing, every
problem reported with its line, item and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import DATA
from tool_selector.catalog_files.batch import (
    BatchProblem,
    ImportBatch,
    parse_batch_body,
    parse_catalog_json,
    parse_csv,
    parse_mcp_servers,
    problems_of,
    read_batch_file,
)
from tool_selector.core.errors import CatalogFileError, InvalidInputError

BATCH = DATA / "batch"
CSV_HEADER = "server,server_description,tool,tool_description,input_schema,tags\n"


def _catalog() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BATCH / "catalog.json").read_text(encoding="utf-8"))
    return data


def _refused(call: Any, *args: Any, **kwargs: Any) -> tuple[CatalogFileError, list[BatchProblem]]:
    with pytest.raises(CatalogFileError) as info:
        call(*args, **kwargs)
    return info.value, problems_of(info.value)


# --------------------------------------------------------------------------- catalog JSON


def test_a_catalog_json_batch_gives_its_servers_with_metadata_and_its_tools() -> None:
    batch = parse_catalog_json(_catalog())
    assert batch.format == "catalog"
    assert [(s.name, s.description) for s in batch.servers] == [
        ("Weather", "Forecasts"),
        ("Clock", "Time zones"),
    ]
    assert batch.servers[0].metadata == {"categories": ["weather"]}
    assert [t.id for t in batch.tools] == ["Weather::forecast", "Clock::now"]
    assert batch.tools[0].input_schema["properties"] == {"city": {"type": "string"}}
    assert batch.tools[1].input_schema == {}  # null -> {}
    assert batch.server_configs == {}


def test_a_catalog_tool_may_name_a_server_that_is_already_in_the_catalog() -> None:
    batch = parse_catalog_json({"tools": [{"server": "Stored", "name": "x"}]}, known_servers={"Stored"})
    assert batch.servers == []
    assert [t.id for t in batch.tools] == ["Stored::x"]


def test_a_catalog_tool_naming_a_server_in_neither_the_batch_nor_the_catalog_is_refused() -> None:
    data = {
        "servers": [{"name": "A"}],
        "tools": [{"server": "A", "name": "ok"}, {"server": "Ghost", "name": "boo"}],
    }
    err, problems = _refused(parse_catalog_json, data, known_servers={"Stored"})
    assert [(p.section, p.item, p.field) for p in problems] == [("tools", 1, "server")]
    assert (
        "'Ghost::boo' names server 'Ghost', which is not in the batch or the catalog" in problems[0].message
    )
    assert "The catalog batch has 1 problem" in err.message
    assert "tools item 1:" in err.message


def test_every_problem_of_a_catalog_batch_is_reported_with_its_list_item_and_field() -> None:
    data = {
        "servers": [{"name": "A"}, {"description": "no name"}, "B", {"name": "A"}],
        "tools": [
            {"name": "orphan"},
            {"server": "A", "name": "x", "input_schema": "object"},
            {"server": "A", "name": "y"},
            {"server": "A", "name": "y"},
            7,
        ],
    }
    err, problems = _refused(parse_catalog_json, data)
    assert [(p.section, p.item, p.field) for p in problems] == [
        ("servers", 1, "name"),
        ("servers", 2, None),
        ("servers", 3, "name"),
        ("tools", 0, "server"),
        ("tools", 1, "input_schema"),
        ("tools", 3, "name"),
        ("tools", 4, None),
    ]
    assert problems[4].name == "A::x"
    assert "is listed twice" in problems[2].message and "is listed twice" in problems[5].message
    assert err.details["problem_count"] == 7
    assert "has 7 problems" in err.message
    assert "servers item 1: field name is missing" in err.message
    assert "tools item 1 (A::x): field input_schema" in err.message
    assert "tools item 3" not in err.message  # only the first five are shown
    assert "(and 2 more)" in err.message


def test_a_tool_is_not_blamed_for_the_problem_of_its_server() -> None:
    data = {"servers": [{"name": "A", "description": 5}], "tools": [{"server": "A", "name": "x"}]}
    _, problems = _refused(parse_catalog_json, data)
    assert [(p.section, p.item, p.field) for p in problems] == [("servers", 0, "description")]


def test_unknown_keys_and_sections_that_are_not_lists_are_problems() -> None:
    _, problems = _refused(parse_catalog_json, {"servers": {"name": "A"}, "tools": [], "extra": 1})
    assert [p.field for p in problems] == ["extra", "servers"]
    assert "unknown key(s) extra" in problems[0].message
    assert "must be a list, found dict" in problems[1].message


def test_a_catalog_batch_that_is_not_an_object_is_refused() -> None:
    err, problems = _refused(parse_catalog_json, [{"name": "A"}])
    assert "must be a JSON object, found list" in err.message
    assert problems == []


# --------------------------------------------------------------------------- CSV


def test_a_csv_batch_gives_servers_tools_schemas_and_tags() -> None:
    batch = parse_csv((BATCH / "tools.csv").read_text(encoding="utf-8"))
    assert batch.format == "csv"
    assert [(s.name, s.description, s.metadata) for s in batch.servers] == [
        ("Weather", "Forecasts for any city", {"tags": ["weather", "outdoor"]}),
        ("Clock", "Time zones", {"tags": ["time"]}),
    ]
    assert [t.id for t in batch.tools] == ["Weather::forecast", "Weather::alerts"]
    assert batch.tools[0].input_schema == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert batch.tools[1].description == "Severe weather\nalerts for a region"
    assert batch.tools[1].input_schema == {}


def test_a_csv_may_leave_out_columns_and_trailing_cells() -> None:
    batch = parse_csv("tool,server\nping,Net\n\n,Other\n")
    assert [s.name for s in batch.servers] == ["Net", "Other"]
    assert [t.id for t in batch.tools] == ["Net::ping"]


def test_csv_problems_name_the_physical_line_of_their_row_and_the_field() -> None:
    text = (
        CSV_HEADER
        + 'A,,one,"two\nlines",,\n'  # lines 2-3
        + "\n"  # line 4, blank
        + "A,,bad,,{not json,\n"  # line 5
        + ",,orphan,,,\n"  # line 6
        + "A,,list,,[1],\n"  # line 7
        + "A,,,described,,\n"  # line 8
    )
    err, problems = _refused(parse_csv, text)
    assert [(p.line, p.field) for p in problems] == [
        (5, "input_schema"),
        (6, "server"),
        (7, "input_schema"),
        (8, "tool_description"),
    ]
    assert problems[0].name == "A::bad"
    assert "is not valid JSON" in problems[0].message
    assert "must be a JSON object, found list" in problems[2].message
    assert "The CSV batch has 4 problems" in err.message
    assert "line 5 (A::bad): field input_schema is not valid JSON" in err.message


def test_two_different_descriptions_for_one_csv_server_are_refused() -> None:
    text = CSV_HEADER + "A,First,x,,,\nA,,y,,,\nA,First,z,,,\nA,Second,w,,,\n"
    _, problems = _refused(parse_csv, text)
    assert [(p.line, p.name, p.field) for p in problems] == [(5, "A", "server_description")]
    assert "differs from the one on line 2" in problems[0].message


def test_unknown_and_repeated_csv_columns_are_named() -> None:
    _, problems = _refused(parse_csv, "server,tool,colour,Tool\nA,x,red,y\n")
    assert [(p.line, p.field) for p in problems] == [(1, None), (1, "tool")]
    assert "unknown column(s) 'colour'" in problems[0].message
    assert "column(s) tool appear more than once" in problems[1].message


def test_a_csv_without_a_server_column_is_refused() -> None:
    _, problems = _refused(parse_csv, "name;tool\nA;x\n")
    assert "the header has no server column" in [p.message for p in problems]


def test_a_csv_row_with_more_cells_than_the_header_is_refused() -> None:
    _, problems = _refused(parse_csv, "server,tool\nA,x\nA,y,extra\n")
    assert [(p.line, p.message) for p in problems] == [(3, "the row has 3 cells, the header 2")]


def test_a_csv_tool_listed_twice_names_the_first_line() -> None:
    _, problems = _refused(parse_csv, "server,tool\nA,x\nB,x\nA,x\n")
    assert [(p.line, p.name) for p in problems] == [(4, "A::x")]
    assert "first on line 2" in problems[0].message


def test_broken_csv_quoting_is_refused_with_its_line() -> None:
    err, _ = _refused(parse_csv, 'server,tool\nA,x\nA,"y"z\n')
    assert "is not valid CSV" in err.message
    assert err.details["line"] == 3


def test_a_csv_row_for_a_catalog_server_without_a_description_leaves_that_server_alone() -> None:
    batch = parse_csv("server,server_description,tool\nStored,,x\nNew,,y\n", known_servers={"Stored"})
    assert [s.name for s in batch.servers] == ["New"]
    assert [t.id for t in batch.tools] == ["Stored::x", "New::y"]


def test_a_csv_server_name_that_is_too_long_is_refused_at_its_first_line() -> None:
    _, problems = _refused(parse_csv, f"server,tool\nA,x\n{'s' * 301},y\n")
    assert [(p.line, p.name, p.field) for p in problems] == [
        (3, f"{'s' * 301}::y", "server"),
        (3, None, "server"),
    ]
    assert "field server: String should have at most 300 characters" in problems[1].message


def test_a_csv_tool_name_that_is_too_long_is_named_by_its_column() -> None:
    _, problems = _refused(parse_csv, f"server,tool\nA,{'t' * 301}\n")
    assert [(p.line, p.field) for p in problems] == [(2, "tool")]


# --------------------------------------------------------------------------- mcpServers


def test_an_mcpservers_batch_gives_configurations_and_servers_without_tools() -> None:
    data = json.loads((BATCH / "mcp.json").read_text(encoding="utf-8"))
    batch = parse_mcp_servers(data)
    assert batch.format == "mcpservers"
    assert [(s.name, s.description) for s in batch.servers] == [("time", ""), ("docs", ""), ("local", "")]
    assert batch.tools == []
    assert batch.server_configs["time"].args == ["--local-timezone", "UTC"]
    assert batch.server_configs["docs"].type == "streamable-http"
    assert batch.server_configs["docs"].headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}
    assert batch.server_configs["local"].command == "./bin/server"  # no folder to resolve it against


def test_every_mcpservers_entry_that_cannot_be_run_is_reported_by_name() -> None:
    data = {
        "mcpServers": {
            "ok": {"command": "x"},
            "old": {"type": "sse", "url": "https://e/sse"},
            "bad name!": {"command": "x"},
            "neither": {"env": {}},
            "args": {"command": "x", "args": "--flag"},
            "list": ["x"],
        }
    }
    err, problems = _refused(parse_mcp_servers, data)
    assert [(p.name, p.field) for p in problems] == [
        ("old", None),
        ("bad name!", None),
        ("neither", None),
        ("args", "args"),
        ("list", None),
    ]
    assert all(p.section == "mcpServers" for p in problems)
    assert "SSE servers are not supported" in problems[0].message
    assert "give either 'command'" in problems[2].message
    assert "mcpServers 'old': SSE servers" in err.message


def test_an_object_without_mcpservers_is_refused_as_an_mcpservers_batch() -> None:
    err, _ = _refused(parse_mcp_servers, {"servers": []})
    assert "'mcpServers' object" in err.message


# --------------------------------------------------------------------------- every format


@pytest.mark.parametrize(
    ("call", "data"),
    [
        (parse_catalog_json, {"servers": [], "tools": []}),
        (parse_csv, CSV_HEADER),
        (parse_csv, ""),
        (parse_mcp_servers, {"mcpServers": {}}),
    ],
)
def test_an_empty_batch_is_refused(call: Any, data: Any) -> None:
    _, problems = _refused(call, data)
    assert [p.message for p in problems] == ["the batch has no servers and no tools"]


def test_problems_are_kept_up_to_200_and_all_are_counted() -> None:
    data = {"servers": [{"name": "A"}], "tools": [{"server": "A"} for _ in range(250)]}
    err, problems = _refused(parse_catalog_json, data)
    assert len(problems) == 200
    assert err.details["problem_count"] == 250
    assert "has 250 problems" in err.message
    assert "(and 245 more)" in err.message


# --------------------------------------------------------------------------- files


@pytest.mark.parametrize(
    ("name", "fmt", "servers", "tools"),
    [("tools.csv", "csv", 2, 2), ("catalog.json", "catalog", 2, 2), ("mcp.json", "mcpservers", 3, 0)],
)
def test_a_batch_file_is_told_its_format_by_its_name_and_keys(
    name: str, fmt: str, servers: int, tools: int
) -> None:
    batch = read_batch_file(BATCH / name)
    assert (batch.format, len(batch.servers), len(batch.tools)) == (fmt, servers, tools)


def test_a_folder_is_read_as_a_benchmark_catalog(tmp_path: Path) -> None:
    data = _catalog()
    (tmp_path / "servers.json").write_text(json.dumps(data["servers"]))
    (tmp_path / "tools.json").write_text(json.dumps([*data["tools"], {"server": "Stored", "name": "z"}]))
    batch = read_batch_file(tmp_path, known_servers={"Stored"})
    assert batch.format == "catalog"
    assert [t.id for t in batch.tools] == ["Weather::forecast", "Clock::now", "Stored::z"]


def test_a_folder_reports_the_problems_of_both_its_files(tmp_path: Path) -> None:
    (tmp_path / "servers.json").write_text(json.dumps([{"name": "A"}, {"description": "?"}]))
    (tmp_path / "tools.json").write_text(json.dumps([{"server": "A"}, {"server": "Ghost", "name": "x"}]))
    err, problems = _refused(read_batch_file, tmp_path)
    assert [(Path(p.section or "").name, p.item) for p in problems] == [
        ("servers.json", 1),
        ("tools.json", 0),
        ("tools.json", 1),
    ]
    assert f"Catalog folder {tmp_path} has 3 problems" in err.message


def test_a_relative_command_in_an_mcpservers_file_is_made_absolute_against_its_folder(tmp_path: Path) -> None:
    shutil.copy(BATCH / "mcp.json", tmp_path / "config.json")
    batch = read_batch_file(tmp_path / "config.json")
    assert batch.server_configs["local"].command == str(tmp_path.resolve() / "bin" / "server")


def test_a_file_with_another_extension_needs_its_format_named(tmp_path: Path) -> None:
    path = tmp_path / "batch.txt"
    path.write_text("server,tool\nA,x\n")
    err, _ = _refused(read_batch_file, path)
    assert "Cannot tell the format" in err.message
    assert "catalog" in err.hint and "csv" in err.hint and "mcpservers" in err.hint
    assert [t.id for t in read_batch_file(path, "csv").tools] == ["A::x"]


def test_a_json_file_of_neither_json_format_names_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "batch.json"
    path.write_text('{"items": []}')
    err, _ = _refused(read_batch_file, path)
    assert f"Cannot tell the format of {path}: found an object with keys ['items']" in err.message
    assert "mcpServers" in err.hint and "servers" in err.hint


def test_a_named_format_is_used_even_when_the_keys_say_otherwise() -> None:
    _, problems = _refused(read_batch_file, BATCH / "mcp.json", "catalog")
    assert "unknown key(s) mcpServers" in problems[0].message


def test_a_missing_batch_file_and_a_folder_read_as_csv_are_refused(tmp_path: Path) -> None:
    err, _ = _refused(read_batch_file, tmp_path / "nowhere.csv")
    assert f"Batch file {tmp_path / 'nowhere.csv'} does not exist" in err.message
    err, _ = _refused(read_batch_file, tmp_path, "csv")
    assert "is a folder, which only a catalog batch is" in err.message


def test_a_file_that_is_not_utf8_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "batch.csv"
    path.write_bytes(b"server,tool\nCaf\xc3\xa9,x\nB,caf\xe9\n")
    err, _ = _refused(read_batch_file, path)
    assert f"{path} is not UTF-8 text: byte 0xe9 at line 3, column 6" in err.message
    assert (err.details["line"], err.details["column"]) == (3, 6)


def test_broken_json_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "batch.json"
    path.write_text('{"servers": [\n  {"name": "A"},\n  {"name": }\n]}\n')
    err, _ = _refused(read_batch_file, path)
    assert "is not valid JSON" in err.message
    assert (err.details["line"], err.details["column"]) == (3, 12)


def test_a_csv_file_with_a_byte_order_mark_and_crlf_line_ends_is_read(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfserver,tool\r\nA,x\r\nA,y\r\n")
    assert [t.id for t in read_batch_file(path).tools] == ["A::x", "A::y"]


def test_problems_in_a_file_name_the_file() -> None:
    err, _ = _refused(parse_csv, "server,tool\n,x\n", source="/some/batch.csv")
    assert err.message.startswith("/some/batch.csv has 1 problem, so none of it is used: line 2:")


# --------------------------------------------------------------------------- request bodies


@pytest.mark.parametrize(
    ("content_type", "name", "fmt"),
    [
        ("application/json", "catalog.json", "catalog"),
        ("application/json; charset=utf-8", "mcp.json", "mcpservers"),
        ("application/vnd.batch+json", "mcp.json", "mcpservers"),
        ("text/csv", "tools.csv", "csv"),
        ("text/csv; charset=utf-8", "tools.csv", "csv"),
        ("auto", "catalog.json", "catalog"),
        ("auto", "tools.csv", "csv"),
        ("csv", "tools.csv", "csv"),
    ],
)
def test_a_request_body_is_parsed_by_its_content_type(content_type: str, name: str, fmt: str) -> None:
    batch = parse_batch_body(content_type, (BATCH / name).read_bytes())
    assert isinstance(batch, ImportBatch)
    assert batch.format == fmt


def test_a_request_body_of_an_unsupported_content_type_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_batch_body("application/xml", b"<servers/>")
    assert "application/xml" in info.value.message
    assert "text/csv" in info.value.hint


def test_a_request_body_passes_the_known_servers_on() -> None:
    batch = parse_batch_body("text/csv", b"server,tool\nStored,x\n", known_servers={"Stored"})
    assert (batch.servers, [t.id for t in batch.tools]) == ([], ["Stored::x"])


def test_problems_in_a_request_body_are_reported_all_at_once() -> None:
    body = json.dumps({"servers": [{"name": "A"}], "tools": [{"server": "A"}, {"server": "B", "name": "y"}]})
    err, problems = _refused(parse_batch_body, "application/json", body.encode())
    assert err.message.startswith("The request body has 2 problems")
    assert [(p.item, p.field) for p in problems] == [(0, "name"), (1, "server")]
