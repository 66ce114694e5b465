"""Tool ids through the `tool-selector` CLI (Typer's CliRunner), with the real model: a tool name with
the id separator is refused at import, a tool dropped by a re-import leaves the index, and a catalog an
older version stored with such a name is named by `index build` without losing anything."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from services.root.container import Container
from tests.support.legacy_names import store_as_older_version
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import MiniLMEmbedder

ZEBRA = "Computes zebra stripes"
SERVERS = [{"name": "s1", "description": "A test server"}, {"name": "s2", "description": "Weather forecasts"}]
PLAIN = {"server": "s1", "name": "plain", "description": "Reads plain text files"}
FORECAST = {"server": "s2", "name": "forecast", "description": "Gives the weather forecast for a city"}


def write_catalog(folder: Path, tools: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "servers.json").write_text(json.dumps(SERVERS), encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    return folder


def invoke(args: Sequence[str], env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def ok(args: Sequence[str], env: dict[str, str]) -> Any:
    result = invoke(args, env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ranked_tools(env: dict[str, str], query: str) -> tuple[dict[str, Any], list[str]]:
    out = ok(["resolve", query, "--explain"], env)
    return out, [t["id"] for t in out["resolution"]["tools"]]


@pytest.fixture
def env(tmp_path: Path, real_model: Path) -> dict[str, str]:
    return {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"), "TOOL_SELECTOR_CACHE_DIR": str(real_model)}


def test_a_tool_name_with_the_id_separator_is_refused_and_a_dropped_tool_leaves_the_index(
    env: dict[str, str], tmp_path: Path
) -> None:
    ghost = write_catalog(tmp_path / "ghost", [{"server": "s1", "name": "a::b", "description": ZEBRA}, PLAIN])
    result = invoke(["catalog", "import", str(ghost), "--approve"], env)
    assert result.exit_code == 3, result.output
    assert "(s1::a::b)" in result.output and "contains '::'" in result.output
    assert ok(["catalog", "list"], env) == []  # all or nothing

    first = write_catalog(
        tmp_path / "v1", [{"server": "s1", "name": "a.b", "description": ZEBRA}, PLAIN, FORECAST]
    )
    ok(["catalog", "import", str(first), "--approve"], env)
    ok(["index", "build"], env)
    assert "s1::a.b" in ranked_tools(env, "compute zebra stripes")[1]
    ok(["catalog", "import", str(write_catalog(tmp_path / "v2", [PLAIN, FORECAST])), "--approve"], env)
    built = ok(["index", "build"], env)
    assert (built["removed"], built["errors"]) == (1, {})
    decision, ranked = ranked_tools(env, "compute zebra stripes")
    assert "s1::a.b" not in ranked and ranked  # the other tools are still found
    assert not (decision["status"] == "activated" and any(t["name"] == "a.b" for t in decision["tools"]))


def legacy_catalog(settings: Settings, embedder: MiniLMEmbedder) -> None:
    """What an older tool-selector left: tool ``a::b`` of s1 stored, and its document in the index."""
    with Container(settings, embedder=embedder) as container:
        store_as_older_version(
            container, SERVERS, [{"server": "s1", "name": "a::b", "description": ZEBRA}, PLAIN, FORECAST]
        )


def test_a_tool_an_older_version_stored_with_the_separator_is_named_by_index_build_and_kept(
    env: dict[str, str], tmp_path: Path, real_model: Path, embedder: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=real_model)
    legacy_catalog(settings, embedder)
    assert "s1::a::b" in ranked_tools(env, "compute zebra stripes")[1]  # the ghost an older version left

    built = ok(["index", "build", "--rebuild"], env)
    assert list(built["left_out"]) == ["s1::a::b"]
    assert "contains '::'" in built["left_out"]["s1::a::b"] and "delete" in built["left_out"]["s1::a::b"]
    assert built["errors"] == {} and built["documents"] == 2
    assert "s1::a::b" not in ranked_tools(env, "compute zebra stripes")[1]
    listed = {s["name"]: s["tools"] for s in ok(["catalog", "list"], env)}
    assert listed == {"s1": 2, "s2": 1}  # nothing stored is lost


def test_re_importing_without_a_tool_an_older_version_indexed_removes_its_document(
    env: dict[str, str], tmp_path: Path, real_model: Path, embedder: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=real_model)
    legacy_catalog(settings, embedder)
    ok(["catalog", "import", str(write_catalog(tmp_path / "v2", [PLAIN, FORECAST])), "--approve"], env)
    built = ok(["index", "build"], env)  # only s1's documents are compared
    assert built["removed"] == 1 and built["errors"] == {}
    assert "s1::a::b" not in ranked_tools(env, "compute zebra stripes")[1]
