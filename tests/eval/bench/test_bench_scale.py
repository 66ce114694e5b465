"""``tool-selector lab bench-scale``: the catalogs it builds from the benchmarks (msc_bench_dev whole, the
other catalogs as distractors, then renamed distractor copies, exactly the size asked) and a small run
end to end, each size in a child process, on HashingEmbedder vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.bench.scale import bench_scale, sample
from eval.bench.scale_catalog import ScaleCatalog, build_scale_catalog
from eval.bench.scale_report import format_table
from routes.cli import app
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import HashingEmbedder

MSC = {
    "weather": ["get_forecast", "get_alerts"],
    "files": ["read_file", "write_file", "list_directory"],
}
LIVEMCP = {"Weather": ["forecast_city", "radar_image", "storm_track"], "maps": ["route_plan"]}
METATOOL = {"jokes": ["tell_joke"], "recipes": ["find_recipe"], "stocks": ["quote_price"]}
MSC_TOOLS = sum(len(t) for t in MSC.values())  # 5
DISTRACTOR_TOOLS = sum(len(t) for t in [*LIVEMCP.values(), *METATOOL.values()])  # 7


def _write(folder: Path, tools: dict[str, list[str]], queries: list[dict[str, Any]] | None = None) -> None:
    folder.mkdir(parents=True)
    servers = [{"name": s, "description": f"The {s} service", "categories": [s]} for s in tools]
    listed = [
        {
            "server": s,
            "name": t,
            "description": f"{t.replace('_', ' ')} with the {s} service",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
        for s, names in tools.items()
        for t in names
    ]
    (folder / "servers.json").write_text(json.dumps(servers, indent=1))
    (folder / "tools.json").write_text(json.dumps(listed, indent=1))
    lines = [json.dumps(q) for q in queries or [_query("q1", "weather", "get_forecast", "forecast", 1)]]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n")


def _query(qid: str, server: str, tool: str, text: str, level: int) -> dict[str, Any]:
    gold = f"{server}::{tool}"
    return {
        "id": qid,
        "query": text,
        "gold_servers": [server],
        "gold_tools": [gold],
        "gold_tool_groups": [[gold]],
        "level": level,
    }


@pytest.fixture
def benchmarks(tmp_path: Path) -> Path:
    root = tmp_path / "benchmarks"
    msc_queries = [
        _query("L1-1", "weather", "get_forecast", "get the weather forecast for Paris", 1),
        _query("L2-1", "files", "read_file", "read the file notes.txt", 2),
        _query("L3-1", "files", "list_directory", "list the directory of my projects", 3),
        _query("L4-1", "weather", "get_alerts", "get weather alerts for storms", 4),
        {
            "id": "L5-1",
            "query": "book a table at a restaurant",
            "gold_servers": [],
            "gold_tools": [],
            "gold_tool_groups": [],
            "level": 5,
        },
    ]
    _write(root / "msc_bench_dev", MSC, msc_queries)
    _write(root / "livemcpbench", LIVEMCP)
    _write(root / "metatool", METATOOL)
    return root


def _read(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return json.loads((folder / "servers.json").read_text()), json.loads((folder / "tools.json").read_text())


@pytest.mark.parametrize("size", [MSC_TOOLS + 1, MSC_TOOLS + 4, MSC_TOOLS + DISTRACTOR_TOOLS, 31, 100])
def test_a_catalog_holds_exactly_the_tools_asked_for(benchmarks: Path, tmp_path: Path, size: int) -> None:
    built = build_scale_catalog(benchmarks, size, tmp_path / "out")
    servers, tools = _read(tmp_path / "out")
    assert len(tools) == built.tools == size
    assert len(servers) == built.servers
    assert built.scored_tools + built.distractor_tools + built.copy_tools == size
    assert built.copy_tools == max(0, size - MSC_TOOLS - DISTRACTOR_TOOLS)
    assert {t["server"] for t in tools} == {s["name"] for s in servers}  # no server without tools


def test_a_size_below_msc_gives_msc_whole_and_nothing_else(benchmarks: Path, tmp_path: Path) -> None:
    built = build_scale_catalog(benchmarks, 2, tmp_path / "out")
    servers, tools = _read(tmp_path / "out")
    assert (servers, tools) == _read(benchmarks / "msc_bench_dev")
    assert (built.tools, built.distractor_tools, built.copy_tools) == (MSC_TOOLS, 0, 0)


def test_msc_is_kept_as_it_is_and_never_copied(benchmarks: Path, tmp_path: Path) -> None:
    build_scale_catalog(benchmarks, 60, tmp_path / "out")
    servers, tools = _read(tmp_path / "out")
    msc_servers, msc_tools = _read(benchmarks / "msc_bench_dev")
    assert servers[: len(msc_servers)] == msc_servers
    assert tools[: len(msc_tools)] == msc_tools
    assert not [s for s in servers if s["name"].startswith(("weather (copy", "files (copy"))]
    assert [t for t in tools if t["server"] in MSC] == msc_tools


def test_clashing_names_are_made_unique_and_copies_are_named_plainly(
    benchmarks: Path, tmp_path: Path
) -> None:
    built = build_scale_catalog(benchmarks, 40, tmp_path / "out")
    servers, tools = _read(tmp_path / "out")
    names = [s["name"] for s in servers]
    assert len({n.casefold() for n in names}) == len(names)
    assert len({(t["server"], t["name"]) for t in tools}) == len(tools)
    # livemcpbench's "Weather" is msc's "weather" but for letter case: renamed, and copied under that name
    assert built.renamed == {"livemcpbench/Weather": "Weather (livemcpbench)"}
    assert "Weather (livemcpbench)" in names
    assert "Weather (livemcpbench) (copy 2)" in names
    assert "maps (copy 2)" in names and "stocks (copy 3)" in names
    copies = [t for t in tools if "(copy " in t["server"]]
    assert len(copies) == built.copy_tools == 40 - MSC_TOOLS - DISTRACTOR_TOOLS
    assert f"{built.copy_tools:,} distractor copies" in built.describe()


def test_the_last_server_is_cut_to_reach_the_size(benchmarks: Path, tmp_path: Path) -> None:
    built = build_scale_catalog(benchmarks, MSC_TOOLS + 2, tmp_path / "out")  # Weather has 3 tools
    _, tools = _read(tmp_path / "out")
    assert built.cut_server == "Weather (livemcpbench)"
    assert [t["name"] for t in tools if t["server"] == built.cut_server] == ["forecast_city", "radar_image"]


def test_the_catalog_is_the_same_every_time_and_the_queries_are_msc_unchanged(
    benchmarks: Path, tmp_path: Path
) -> None:
    build_scale_catalog(benchmarks, 37, tmp_path / "a")
    build_scale_catalog(benchmarks, 37, tmp_path / "b")
    for name in ("servers.json", "tools.json", "queries.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    source = (benchmarks / "msc_bench_dev" / "queries.jsonl").read_bytes()
    assert (tmp_path / "a" / "queries.jsonl").read_bytes() == source


def test_a_query_sample_is_spread_over_the_whole_file() -> None:
    assert sample(list(range(10)), 5) == [0, 2, 4, 6, 8]  # type: ignore[arg-type]
    assert sample(list(range(3)), None) == [0, 1, 2]  # type: ignore[arg-type]


FIGURES = (
    "size",
    "tools",
    "copy_tools",
    "composition",
    "import_s",
    "enrich_s",
    "index_s",
    "build_s",
    "build_tools_per_s",
    "peak_rss_mb",
    "data_mb",
    "index_mb",
    "service_build_s",
    "resolve_p50_ms",
    "resolve_p95_ms",
    "resolve_p99_ms",
    "tool_r5_l1_4",
    "server_r3_l1_4",
    "register_ms",
    "register_searchable_ms",
    "unregister_ms",
    "wall_s",
)


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "unused-data", cache_dir=tmp_path / "cache")


def test_each_size_is_measured_in_a_child_and_written_as_json_and_a_plot(
    benchmarks: Path, tmp_path: Path
) -> None:
    heard: list[dict[str, Any]] = []
    started: list[ScaleCatalog] = []
    rows = bench_scale(
        _settings(tmp_path),
        benchmarks,
        [MSC_TOOLS, 20],
        out=tmp_path / "out",
        registrations=2,
        embedder=HashingEmbedder(dim=384),  # the packaged calibration reads 384-dimension vectors
        on_start=started.append,
        on_row=heard.append,
    )
    assert [c.requested for c in started] == [MSC_TOOLS, 20]
    assert heard == rows
    assert [(r["size"], r["tools"], r["copy_tools"]) for r in rows] == [(5, 5, 0), (20, 20, 8)]
    for row in rows:
        assert row["finished"] is True, row.get("error")
        assert [f for f in FIGURES if row.get(f) is None] == []
        assert row["tools_indexed"] == row["tools"]
        assert row["queries"] == 5 and row["l1_4_queries"] == 4
        assert 0 < row["tool_r5_l1_4"] <= 1 and 0 < row["server_r3_l1_4"] <= 1
        assert row["resolve_p50_ms"] <= row["resolve_p95_ms"] <= row["resolve_p99_ms"]
        assert row["registrations"] == 2 and row["registered_found_top10"] == 2
        assert row["register_ms"] <= row["register_searchable_ms"]
        assert row["peak_rss_mb"] > 50  # the child's own peak, the python stack loaded
    written = json.loads((tmp_path / "out" / "scale.json").read_text())
    assert written["sizes"] == json.loads(json.dumps(rows))
    assert (tmp_path / "out" / "scale.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = format_table(rows)
    assert "tool R@5" in table and "8 distractor copies" in table


def test_a_size_past_the_timeout_is_cut_off_and_said_so(benchmarks: Path, tmp_path: Path) -> None:
    rows = bench_scale(
        _settings(tmp_path),
        benchmarks,
        [MSC_TOOLS],
        out=tmp_path / "out",
        timeout_s=0.05,  # a spawned child takes longer than that to import the stack
        embedder=HashingEmbedder(dim=384),
    )
    assert rows[0]["finished"] is False
    assert rows[0]["error"] == "did not finish in 0.05 s"
    assert rows[0].get("resolve_p95_ms") is None
    assert "did not finish in 0.05 s" in format_table(rows)
    assert (tmp_path / "out" / "scale.png").is_file()


def test_the_command_refuses_sizes_that_are_not_numbers_and_a_missing_benchmarks_folder(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["lab", "bench-scale", "--sizes", "2k", "--out", str(tmp_path / "out")])
    assert bad.exit_code == 2 and "is not a list of numbers" in bad.stderr
    missing = runner.invoke(
        app,
        [
            "lab",
            "bench-scale",
            "--sizes",
            "10",
            "--benchmarks",
            str(tmp_path / "nowhere"),
            "--out",
            str(tmp_path),
        ],
    )
    assert missing.exit_code == 3 and "does not exist" in missing.stderr
    assert not (tmp_path / "out").exists()
