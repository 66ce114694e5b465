"""Damaged files through the `tool-selector` CLI (Typer's CliRunner): a damaged search index is named, file
and fault, with exit code 19 and the repair, which works; an empty or foreign catalog database is refused
with exit code 21 and left as it is; a backup brings a catalog back.

The fast tests index without the model (tests/support/index_damage.py); the one that resolves after the
repair uses the real model."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from tests.support.catalogs import write_catalog
from tests.support.index_damage import DAMAGES, damage, indexed_without_the_model
from tool_selector.embedding.embedders import MiniLMEmbedder, relevance_model_id
from tool_selector.search.embedded.backend import EmbeddedBackend

TOOLS = {"weather": ["get_forecast", "get_alerts"], "files": ["read_file", "write_file"]}
QUERY = "weather forecast for Paris tomorrow"
REPAIR = "Run `tool-selector index rebuild`"


def _invoke(args: Sequence[str], data: Path) -> Result:
    return CliRunner().invoke(app, list(args), env={"TOOL_SELECTOR_DATA_DIR": str(data)})


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _refused(result: Result, code: str, exit_code: int) -> str:
    """The error went through the table (its code on stderr, no traceback, nothing on stdout)."""
    assert result.exit_code == exit_code, result.output
    assert isinstance(result.exception, SystemExit)
    assert f"error [{code}]: " in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""
    return result.stderr


def _only_the_file(db: Path) -> None:
    for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        extra.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_without_the_model(tmp_path_factory.mktemp("damage-template"), TOOLS)


@pytest.fixture
def data(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "data"))


# --------------------------------------------------------------------------- a damaged search index


@pytest.mark.parametrize("kind", DAMAGES)
def test_resolve_on_a_damaged_index_names_the_file_and_the_repair(data: Path, kind: str) -> None:
    hit = damage(data / "index", kind)
    stderr = _refused(_invoke(["resolve", QUERY], data), "index_damaged", 19)
    assert f"The search index is damaged: {hit} " in stderr
    assert REPAIR in stderr


@pytest.mark.parametrize("kind", DAMAGES)
def test_index_rebuild_repairs_a_damaged_index_without_reading_it(data: Path, kind: str) -> None:
    damage(data / "index", kind)
    rebuilt = _json(_invoke(["index", "rebuild"], data))
    assert (rebuilt["documents"], rebuilt["written"], rebuilt["embedded"]) == (4, 4, 0)
    index = EmbeddedBackend(data / "index", model_id=relevance_model_id(), dim=MiniLMEmbedder.dim)
    assert index.count() == 4
    assert _json(_invoke(["index", "build"], data))["unchanged"] == 4  # read back whole


@pytest.mark.parametrize("kind", DAMAGES)
def test_index_build_on_a_damaged_index_repairs_it_and_says_so(data: Path, kind: str) -> None:
    hit = damage(data / "index", kind)
    built = _invoke(["index", "build"], data)
    assert _json(built)["written"] == 4
    assert f"The search index is damaged: {hit} " in built.stderr
    assert "Rebuilding it from the catalog." in built.stderr


def test_the_gateway_refuses_to_start_on_a_damaged_index(data: Path) -> None:
    hit = damage(data / "index", "truncated vectors.npy")
    stderr = _refused(_invoke(["serve"], data), "index_damaged", 19)
    assert str(hit) in stderr and REPAIR in stderr


@pytest.fixture(scope="module")
def real_template(tmp_path_factory: pytest.TempPathFactory, real_model: Path) -> Path:
    """A data folder the CLI imported and indexed itself, with the real model."""
    folder = tmp_path_factory.mktemp("real-template")
    data = folder / "data"
    _json(_invoke(["catalog", "import", str(write_catalog(folder / "catalog", TOOLS)), "--approve"], data))
    _json(_invoke(["index", "build"], data))
    return data


@pytest.mark.parametrize("kind", DAMAGES)
def test_after_index_rebuild_resolve_answers_again(real_template: Path, tmp_path: Path, kind: str) -> None:
    data = Path(shutil.copytree(real_template, tmp_path / "data"))
    damage(data / "index", kind)
    _refused(_invoke(["resolve", QUERY], data), "index_damaged", 19)
    assert _json(_invoke(["index", "rebuild"], data))["embedded"] == 0  # vectors from the catalog's cache
    decision = _json(_invoke(["resolve", QUERY], data))
    top = decision["power"] if decision["status"] == "activated" else decision["matches"][0]["power"]
    assert top == "weather"


# --------------------------------------------------------------------------- the catalog database


def test_a_zero_byte_catalog_is_refused_by_every_command_and_left_as_it_is(data: Path) -> None:
    db = data / "catalog.db"
    _only_the_file(db)
    db.write_bytes(b"")
    commands = (["resolve", QUERY], ["catalog", "list"], ["keys", "list"], ["index", "rebuild"], ["serve"])
    for args in (*commands, ["api", "--port", "0"]):
        stderr = _refused(_invoke(args, data), "catalog_damaged", 21)
        assert f"The catalog database {db} is empty (0 bytes)" in stderr
        assert "It was left as it is. Restore catalog.db from a backup" in stderr
    assert db.stat().st_size == 0
    # the writer lock file (empty until a writer holds it) is the only thing a refused command may leave
    assert sorted(p.name for p in data.iterdir() if p.name != "write.lock") == ["catalog.db", "index"]


def test_a_foreign_sqlite_file_as_catalog_is_refused_and_left_as_it_is(data: Path) -> None:
    db = data / "catalog.db"
    _only_the_file(db)
    db.unlink()
    with closing(sqlite3.connect(db)) as other:
        other.execute("CREATE TABLE notes (body TEXT)")
        other.commit()
    before = db.read_bytes()
    stderr = _refused(_invoke(["catalog", "list"], data), "catalog_damaged", 21)
    assert f"The catalog database {db} is an SQLite database of another program" in stderr
    assert db.read_bytes() == before


def test_a_backup_put_in_place_of_a_damaged_catalog_brings_keys_and_servers_back(
    data: Path, tmp_path: Path
) -> None:
    key = _json(_invoke(["keys", "create", "ops-bot", "--role", "admin"], data))
    copy = tmp_path / "backups" / "catalog-2026-01-01.db"
    taken = _json(_invoke(["catalog", "backup", str(copy)], data))
    assert (taken["backup"], taken["servers"], taken["tools"], taken["api_keys"]) == (str(copy), 2, 4, 1)
    assert _refused(_invoke(["catalog", "backup", str(copy)], data), "conflict", 8)  # never overwrites
    db = data / "catalog.db"
    _only_the_file(db)
    db.write_bytes(b"")
    _refused(_invoke(["keys", "list"], data), "catalog_damaged", 21)
    shutil.copyfile(copy, db)  # the restore of the operator guide
    assert [k["id"] for k in _json(_invoke(["keys", "list"], data))] == [key["id"]]
    assert {s["name"] for s in _json(_invoke(["catalog", "list"], data))} == set(TOOLS)


def test_the_gateway_answers_initialize_then_every_call_with_the_damage_and_its_repair(data: Path) -> None:
    """``serve`` answers the client's initialize before it opens the index (a fast start, issue 42); an
    index it then cannot serve is no closed connection but each call's answer, saying what to do."""
    import os

    import anyio
    from mcp import StdioServerParameters
    from mcp.client.client import Client

    from tests.support.gateway_helpers import CLI

    hit = damage(data / "index", "truncated vectors.npy")
    env = {**os.environ, "TOOL_SELECTOR_DATA_DIR": str(data)}

    async def session() -> tuple[str, Any]:
        params = StdioServerParameters(command=str(CLI), args=["serve"], env=env)
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            listed = [tool.name for tool in (await client.list_tools()).tools]
            answer = await client.call_tool("resolve_intent", {"query": QUERY})
        assert "resolve_intent" in listed
        return "\n".join(getattr(c, "text", "") for c in answer.content), answer

    text, answer = anyio.run(session)
    assert answer.is_error and answer.structured_content["error"] == "index_damaged"
    assert answer.structured_content["can_proceed"] is False
    assert str(hit) in text and REPAIR in text
