"""The naming rule of servers and tools (tool_selector/core/names.py) at the models every entry point builds,
the catalog and CSV batch readers that refuse a bad name whole, and tool ids that split one way only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.support.paths import BENCHMARKS
from tool_selector.catalog_files.batch import parse_catalog_json, parse_csv, parse_mcp_servers, problems_of
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.models import ServerSpec, ToolSpec
from tool_selector.core.names import shown_name, split_tool_id, tool_id

BAD_NAMES = {
    "NUL": "bad\x00name",
    "newline": "two\nlines",
    "right-to-left override": "evil\u202etxt.exe",
    "zero-width space": "ti\u200bme",
    "zero-width joiner": "ti\u200dme",
    "first strong isolate": "a\u2068b",
    "separator": "colA::b",
}
BENCHMARK_SETS = ("msc_bench_dev", "metatool", "livemcpbench", "toolalpaca", "restbench")


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_a_server_or_tool_name_with_an_unseen_or_separating_character_is_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="the server name"):
        ServerSpec(name=name)
    with pytest.raises(ValidationError, match="the tool name"):
        ToolSpec(server="ok", name=name)
    with pytest.raises(ValidationError, match="the server name"):
        ToolSpec(server=name, name="ok")


def test_whitespace_around_a_name_is_dropped_and_a_blank_name_is_refused() -> None:
    assert ServerSpec(name="  time \t").name == "time"
    assert ToolSpec(server=" time", name="get_time ").id == "time::get_time"
    with pytest.raises(ValidationError):
        ServerSpec(name=" \u00a0 ")


def test_names_real_mcp_tools_use_are_kept() -> None:
    for name in ("get-file", "files/read", "v1.search", "Windows:", "Peekaboo MCP: Screenshots", "a:b"):
        assert ToolSpec(server=name, name=name).name == name


def test_a_tool_name_may_not_begin_with_a_colon_so_an_id_splits_one_way_only() -> None:
    with pytest.raises(ValidationError, match="begins with ':'"):
        ToolSpec(server="W", name=":x")
    windows = ToolSpec(server="W:", name="x")
    assert split_tool_id(windows.id) == ("W:", "x")
    assert split_tool_id(tool_id("a:b", "c")) == ("a:b", "c")


def test_two_tools_that_would_share_an_id_cannot_both_be_named() -> None:
    # tool b::t of colA and tool t of colA::b would both be colA::b::t
    with pytest.raises(ValidationError, match="contains '::'"):
        ToolSpec(server="colA", name="b::t")
    with pytest.raises(ValidationError, match="contains '::'"):
        ToolSpec(server="colA::b", name="t")


def test_every_name_of_the_shared_benchmark_catalogs_keeps_the_rule() -> None:
    refused: list[str] = []
    for folder in (BENCHMARKS / name for name in BENCHMARK_SETS):
        if not (folder / "tools.json").is_file():
            pytest.skip(f"the shared benchmark catalog {folder} is not here")
        try:
            read_catalog_dir(folder)
        except CatalogFileError as exc:
            refused += [p.describe() for p in problems_of(exc)]
    assert refused == []


def test_a_catalog_batch_with_bad_names_is_refused_whole_naming_each_item() -> None:
    data = {
        "servers": [{"name": "s1"}, {"name": "evil\u202etxt"}],
        "tools": [
            {"server": "s1", "name": "a::b", "description": "Computes zebra stripes"},
            {"server": "s1", "name": "plain"},
        ],
    }
    with pytest.raises(CatalogFileError) as caught:
        parse_catalog_json(data)
    described = [p.describe() for p in problems_of(caught.value)]
    assert len(described) == 2, described
    assert "servers item 1" in described[0] and "U+202E" in described[0]
    assert "tools item 0 (s1::a::b)" in described[1] and "contains '::'" in described[1]
    assert "none of it is used" in caught.value.message


def test_a_csv_batch_with_a_control_character_or_a_separator_in_a_name_is_refused_by_line() -> None:
    text = 'server,tool\nok,fine\n"new\x00line",x\nok,"b::t"\n'
    with pytest.raises(CatalogFileError) as caught:
        parse_csv(text)
    lines = {p.line for p in problems_of(caught.value)}
    assert lines == {3, 4}, problems_of(caught.value)


def test_a_server_name_copying_a_taken_one_up_to_case_is_refused_naming_it() -> None:
    with pytest.raises(CatalogFileError) as caught:
        parse_catalog_json({"servers": [{"name": "TIME"}]}, taken={"time"})
    assert "differs from the server 'time' only in case" in caught.value.message
    with pytest.raises(CatalogFileError, match="only in case"):
        parse_csv("server,tool\nTime,now\n", taken={"time"})
    with pytest.raises(CatalogFileError, match="only in case"):
        parse_catalog_json({"servers": [{"name": "git"}, {"name": "GIT"}]})
    with pytest.raises(CatalogFileError, match="only in case"):
        parse_mcp_servers({"mcpServers": {"TIME": {"command": "/bin/true"}}}, taken={"time"})
    # the same name is the same server, not a copy
    assert [s.name for s in parse_catalog_json({"servers": [{"name": "time"}]}, taken={"time"}).servers] == [
        "time"
    ]


def test_a_folder_catalog_refuses_a_case_copy_of_a_taken_name(tmp_path: Path) -> None:
    (tmp_path / "servers.json").write_text(json.dumps([{"name": "Time"}]), encoding="utf-8")
    (tmp_path / "tools.json").write_text("[]", encoding="utf-8")
    with pytest.raises(CatalogFileError, match="'time' only in case"):
        read_catalog_dir(tmp_path, taken={"time"})


def test_a_name_echoed_in_an_error_is_cut_at_the_name_limit_and_says_so() -> None:
    shown = shown_name("x" * 100_000)
    assert len(shown) < 400 and "cut" in shown and "100000 characters" in shown
    assert shown_name("time") == "'time'"
