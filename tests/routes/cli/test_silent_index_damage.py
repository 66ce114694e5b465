"""Damage that leaves every index file readable (vectors.npy overwritten with NaNs of the same shape, a
letter of docs.jsonl changed) through the CLI (Typer's CliRunner) and the REST API (a real uvicorn
server): resolve names the file and the repair (exit 19, HTTP 503); `index build` finds it and makes
the index anew, saying so, instead of finding nothing to do; after `index rebuild` resolve answers.

The fast tests index without the model (tests/support/index_damage.py); the one that resolves after
the repair uses the real model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from services.write.indexing import rebuild_index
from tests.support.api_helpers import running_api
from tests.support.catalogs import write_catalog
from tests.support.index_damage import current_generation, indexed_without_the_model, stand_in
from tool_selector.config.settings import Settings

TOOLS = {"weather": ["get_forecast", "get_alerts"], "files": ["read_file", "write_file"]}
QUERY = "weather forecast for Paris tomorrow"
REPAIR = "Run `tool-selector index rebuild`"
CHANGED = "has changed since it was written"


def _nan_vectors(index: Path) -> Path:
    """vectors.npy overwritten with NaNs of the same shape and type."""
    hit = current_generation(index) / "vectors.npy"
    np.save(hit, np.full(np.load(hit).shape, np.nan, dtype=np.float32))
    return hit


def _changed_letter(index: Path) -> Path:
    """One letter of a tool's document changed: it still parses, the counts still agree."""
    hit = current_generation(index) / "docs.jsonl"
    text = hit.read_text(encoding="utf-8")
    at = text.index("forecast")
    hit.write_text(text[:at] + "F" + text[at + 1 :], encoding="utf-8")
    return hit


SILENT: dict[str, Callable[[Path], Path]] = {
    "NaN vectors.npy": _nan_vectors,
    "a letter of docs.jsonl": _changed_letter,
}


def _invoke(args: Sequence[str], data: Path) -> Result:
    return CliRunner().invoke(app, list(args), env={"TOOL_SELECTOR_DATA_DIR": str(data)})


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_without_the_model(tmp_path_factory.mktemp("silent-template"), TOOLS)


@pytest.fixture
def data(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "data"))


@pytest.mark.parametrize("kind", SILENT)
def test_resolve_on_an_index_changed_after_it_was_written_names_the_file_and_the_repair(
    data: Path, kind: str
) -> None:
    hit = SILENT[kind](data / "index")
    result = _invoke(["resolve", QUERY], data)
    assert result.exit_code == 19, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    assert f"error [index_damaged]: The search index is damaged: {hit} {CHANGED}" in result.stderr
    assert REPAIR in result.stderr


@pytest.mark.parametrize("kind", SILENT)
def test_index_build_on_an_index_changed_after_it_was_written_makes_it_anew_and_says_so(
    data: Path, kind: str
) -> None:
    hit = SILENT[kind](data / "index")
    built = _invoke(["index", "build"], data)
    assert _json(built)["written"] == 4  # not "unchanged": 4
    assert f"The search index is damaged: {hit} {CHANGED}" in built.stderr
    assert "Rebuilding it from the catalog." in built.stderr
    assert _json(_invoke(["index", "build"], data))["unchanged"] == 4  # whole again


@pytest.mark.parametrize("kind", SILENT)
def test_index_rebuild_repairs_an_index_changed_after_it_was_written(data: Path, kind: str) -> None:
    SILENT[kind](data / "index")
    rebuilt = _json(_invoke(["index", "rebuild"], data))
    assert (rebuilt["documents"], rebuilt["written"], rebuilt["embedded"]) == (4, 4, 0)
    assert _json(_invoke(["index", "build"], data))["unchanged"] == 4


def test_rest_resolve_on_nan_vectors_answers_503_naming_the_file_until_rebuilt(
    template: Path, tmp_path: Path
) -> None:
    copy = Path(shutil.copytree(template, tmp_path / "template"))
    hit = _nan_vectors(copy / "index").relative_to(copy)
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache")
    with running_api(copy, tmp_path / "api", settings, stand_in()) as api:
        served = api.settings.data_dir / hit
        with api.client("viewer") as viewer:
            refused = viewer.post("/api/v1/resolve", json={"query": "weather forecast"})
            assert refused.status_code == 503
            error = refused.json()["error"]
            assert (error["code"], error["details"]["path"]) == ("index_damaged", str(served))
            assert error["message"].startswith(f"The search index is damaged: {served} {CHANGED}")
            assert error["hint"].startswith(REPAIR)
            with api.container() as operator:  # `tool-selector index rebuild` in another process
                rebuild_index(operator)
            answered = viewer.post("/api/v1/resolve", json={"query": "weather forecast"})
            assert answered.status_code == 200, answered.text


@pytest.fixture(scope="module")
def real_template(tmp_path_factory: pytest.TempPathFactory, real_model: Path) -> Path:
    """A data folder the CLI imported and indexed itself, with the real model."""
    folder = tmp_path_factory.mktemp("real-silent-template")
    data = folder / "data"
    _json(_invoke(["catalog", "import", str(write_catalog(folder / "catalog", TOOLS)), "--approve"], data))
    _json(_invoke(["index", "build"], data))
    return data


def test_after_index_rebuild_a_resolve_over_nan_vectors_answers_again(
    real_template: Path, tmp_path: Path
) -> None:
    data = Path(shutil.copytree(real_template, tmp_path / "data"))
    _nan_vectors(data / "index")
    assert _invoke(["resolve", QUERY], data).exit_code == 19
    assert _json(_invoke(["index", "rebuild"], data))["embedded"] == 0  # vectors from the catalog's cache
    decision = _json(_invoke(["resolve", QUERY], data))
    top = decision["power"] if decision["status"] == "activated" else decision["matches"][0]["power"]
    assert top == "weather"
