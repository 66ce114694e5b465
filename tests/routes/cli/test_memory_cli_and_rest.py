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
from tool_selector.catalog import memory as rows
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
                vector=np.full(4, 0.5, np.float32),
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


HUGE = "99999999999999999999999"  # past SQLite's integers


def test_an_id_out_of_range_is_not_found_over_rest_and_the_cli(api: RunningApi, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with api.client("admin") as admin:
        for method in ("GET", "DELETE"):
            answered = admin.request(method, f"{V1}/memory/{HUGE}")
            assert answered.status_code == 404, answered.text
            error = answered.json()["error"]
            assert "No remembered choice has the id 99999999999999999999" in error["message"]
            assert "memory list" in error["hint"]
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(api.settings.data_dir))
    for command in ("show", "forget"):
        said = CliRunner().invoke(app, ["memory", command, HUGE])
        assert said.exit_code == 4, (said.exit_code, said.stderr)
        assert "No remembered choice has the id" in said.stderr and "Traceback" not in said.stderr


def test_a_damaged_row_is_marked_in_the_list_and_show_says_what_is_wrong_and_how_to_repair(
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(tmp_path))
    sound, broken = _remember(tmp_path / "catalog.db", "a", "b")
    with CatalogStore(tmp_path / "catalog.db") as store:
        store.database.execute(
            "UPDATE choices SET vector = x'0000', confirmed_at = 'soon' WHERE id=?", (broken,)
        )
    runner = CliRunner()
    listed = runner.invoke(app, ["memory", "list", "--text"])
    assert listed.exit_code == 0, listed.stderr
    [line] = [row for row in listed.stdout.splitlines() if row.strip().startswith(str(broken))]
    damage = "its vector is 2 bytes long, not a list of float32 values"
    assert f"DAMAGED ({damage}; repair: tool-selector memory forget {broken})" in line
    as_json = {c["id"]: c for c in json.loads(runner.invoke(app, ["memory", "list", "--json"]).stdout)}
    assert (
        as_json[sound]["damaged"] is None
        and as_json[broken]["repair"] == f"tool-selector memory forget {broken}"
    )
    shown = runner.invoke(app, ["memory", "show", str(broken)])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["damaged"].startswith("its vector is 2 bytes")
    assert (
        f"Choice {broken} is damaged" in shown.stderr
        and f"`tool-selector memory forget {broken}`" in shown.stderr
    )
    assert json.loads(runner.invoke(app, ["memory", "forget", str(broken)]).stdout)["forgotten"] == broken
    assert [c["id"] for c in json.loads(runner.invoke(app, ["memory", "list", "--json"]).stdout)] == [sound]
