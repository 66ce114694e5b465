"""The person stays in control of the memory: ``tool-selector memory list | show | forget | clear`` on a
real catalog database, and the same over REST on a real uvicorn server under the ``admin`` scope only;
forgetting and clearing are audited."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from routes.cli import app
from tests.support.api_helpers import RunningApi
from tool_selector.catalog import choices as rows
from tool_selector.catalog.store import CatalogStore

V1 = "/api/v1"


def _remember(db_path: Path, *hashes: str) -> list[int]:
    with CatalogStore(db_path) as store:
        return [
            rows.remember(
                store.database,
                request_hash=h,
                power="time",
                tool="get_current_time",
                tools_hash="x",
                model="m",
                vector=np.ones(4, np.float32),
                request=None,
            )
            for h in hashes
        ]


def _audit(db_path: Path) -> list[str]:
    with CatalogStore(db_path) as store:
        found = store.database.execute("SELECT action FROM audit ORDER BY rowid").fetchall()
    return [str(r[0]) for r in found if str(r[0]).startswith("memory.")]


def test_the_cli_lists_shows_forgets_and_clears_with_an_audit_record(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    empty = runner.invoke(app, ["memory", "list", "--text"])
    assert empty.exit_code == 0 and "Nothing remembered yet" in empty.stdout
    first, second = _remember(tmp_path / "catalog.db", "a", "b")
    listed = runner.invoke(app, ["memory", "list", "--json"])
    assert [c["id"] for c in json.loads(listed.stdout)] == [second, first]
    shown = runner.invoke(app, ["memory", "show", str(first)])
    assert json.loads(shown.stdout)["tool"] == "get_current_time"
    missing = runner.invoke(app, ["memory", "show", "999"])
    assert missing.exit_code != 0 and "memory list" in missing.stderr
    assert json.loads(runner.invoke(app, ["memory", "forget", str(first)]).stdout)["forgotten"] == first
    refused = runner.invoke(app, ["memory", "clear"], input="n\n")
    assert (
        refused.exit_code == 1
        and len(json.loads(runner.invoke(app, ["memory", "list", "--json"]).stdout)) == 1
    )
    assert json.loads(runner.invoke(app, ["memory", "clear", "--yes"]).stdout) == {"forgotten": 1}
    assert _audit(tmp_path / "catalog.db") == ["memory.forget", "memory.clear"]


def test_rest_memory_routes_are_for_admin_keys_only(api: RunningApi) -> None:
    db_path = api.settings.db_path
    [choice] = _remember(db_path, "a")
    with api.client("editor") as editor:
        assert editor.get(f"{V1}/memory").status_code == 403
        assert editor.delete(f"{V1}/memory").status_code == 403
    with api.client("admin") as admin:
        assert [c["id"] for c in admin.get(f"{V1}/memory").json()] == [choice]
        assert admin.get(f"{V1}/memory/{choice}").json()["power"] == "time"
        assert admin.get(f"{V1}/memory/999").status_code == 404
        assert admin.delete(f"{V1}/memory/{choice}").json()["id"] == choice
        _remember(db_path, "b", "c")
        assert admin.delete(f"{V1}/memory").json() == {"forgotten": 2}
        assert admin.get(f"{V1}/memory").json() == []
    assert _audit(db_path) == ["memory.forget", "memory.clear"]
