"""Names compared as people see them (issue 39): a server or tool name that differs from one in use only in
case, fullwidth or styled forms, or Cyrillic and Greek letters that look Latin is refused at every door,
naming the one in use: ``servers add``, ``servers import``, ``init`` and ``catalog import`` through
Typer's CliRunner on the test's own data folder; REST registration and import over HTTP against a real
uvicorn server, the real catalog database and the real model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from routes.cli import app
from tests.support.api_helpers import RunningApi
from tests.support.catalogs import write_catalog
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers
from tool_selector.core.names import TakenNames, TakenToolNames, fold, tool_copied

V1 = "/api/v1"
FULLWIDTH = "ＴＩＭＥ"  # U+FF34 U+FF29 U+FF2D U+FF25
CYRILLIC = "t\u0456me"  # tіme: CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
GREEK = "\u03a4IME"  # ΤIME: GREEK CAPITAL LETTER TAU
STYLED = "\U0001d42d\U0001d422\U0001d426\U0001d41e"  # 𝐭𝐢𝐦𝐞: MATHEMATICAL BOLD SMALL letters
LOOKALIKES = (FULLWIDTH, CYRILLIC, GREEK, STYLED)


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_fullwidth_cyrillic_greek_and_styled_copies_of_a_name_fold_to_it_and_other_names_do_not() -> None:
    assert {fold(name) for name in LOOKALIKES} == {"time"}
    taken = TakenNames(["time"])
    assert [taken.copied_by(name) for name in LOOKALIKES] == ["time"] * 4
    assert [taken.copied_by(name) for name in ("time", "timer", "тиме", "t-ime")] == [None] * 4
    tools = TakenToolNames([("time", "get_current_time"), ("web", "search")])
    assert tools.copied_by("clock", "get_current_t\u0456me") == "time::get_current_time"
    assert tools.copied_by("time", "Get_Current_Time") == "time::get_current_time"  # its own server: case too
    assert tools.copied_by("docs", "\uff53\uff45\uff41\uff52\uff43\uff48") == "web::search"  # fullwidth
    assert tools.copied_by("docs", "search") is None  # many servers serve a `search`
    assert tools.copied_by("docs", "Search") is None  # another server may differ from it in case
    pairs = [("time", "get_current_time"), ("web", "search")]  # one name against a whole catalog, one pass
    for server, name in (
        ("clock", "get_current_t\u0456me"),
        ("docs", "Search"),
        ("time", "GET_CURRENT_TIME"),
    ):
        assert tool_copied(pairs, server, name) == tools.copied_by(server, name)


def test_servers_add_refuses_lookalikes_of_a_configured_server_naming_it_and_stores_nothing() -> None:
    assert _run("servers", "add", "time", "--", "echo")[0] == 0
    for name in LOOKALIKES:
        code, out = _run("servers", "add", name, "--", "echo")
        assert code == 2, out
        assert "'time'" in out and "look alike" in out, out
    code, out = _run("servers", "list")
    assert [row["name"] for row in json.loads(out)] == ["time"]


def test_servers_import_and_init_skip_lookalikes_of_a_configured_server_saying_which(tmp_path: Path) -> None:
    assert _run("servers", "add", "time", "--", "echo")[0] == 0
    source = tmp_path / "claude_desktop_config.json"
    entries = {name: {"command": "echo"} for name in (FULLWIDTH, CYRILLIC)}
    source.write_text(json.dumps({"mcpServers": {**entries, "weather": {"command": "echo"}}}))
    code, out = _run("servers", "import", str(source))
    assert code == 0, out
    summary = json.loads(out)
    assert summary["added"] == ["weather"]
    for name in (FULLWIDTH, CYRILLIC):
        assert "'time'" in summary["skipped"][name] and "look alike" in summary["skipped"][name], summary
    code, out = _run("init", "--from", str(source), "--no-sync", "--json")
    assert code == 0, out
    read = json.loads(out)["sources"][0]
    assert all("'time'" in read["skipped"][name] for name in (FULLWIDTH, CYRILLIC)), read
    code, out = _run("servers", "list")
    assert sorted(row["name"] for row in json.loads(out)) == ["time", "weather"]


def test_catalog_import_refuses_a_lookalike_server_or_tool_naming_the_one_in_use(tmp_path: Path) -> None:
    first = write_catalog(tmp_path / "first", {"time": ["get_current_time"]})
    assert _run("catalog", "import", str(first), "--approve")[0] == 0
    for number, catalog in enumerate(
        (
            {CYRILLIC: ["now"]},  # a server looking like `time`
            {"clock": ["get_current_t\u0456me"]},  # a tool looking like time's
            {"clock": ["now", "N\u043ew"]},  # two tools of one server alike (Cyrillic о)
        )
    ):
        folder = write_catalog(tmp_path / f"bad-{number}", catalog)
        code, out = _run("catalog", "import", str(folder))
        assert code == 3, out
        assert "look alike" in out or "only in case" in out, out
    code, out = _run("catalog", "list")
    assert code == 0 and CYRILLIC not in out and "clock" not in out, out


def refused(response: httpx.Response, *words: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    error: dict[str, Any] = response.json()["error"]
    for word in words:
        assert word in error["message"], error["message"]
    return error


def test_rest_registration_and_import_refuse_lookalikes_of_a_configured_or_catalogued_name(
    api_trusting: RunningApi,
) -> None:
    api = api_trusting
    save_servers(
        api.settings.servers_path, ServersFile(mcpServers={"clock": ServerConfig(command="/bin/true")})
    )
    with api.client() as client:
        listed = {s["name"] for s in client.get(f"{V1}/servers").json()}
        assert "time" in listed
        for name in LOOKALIKES:
            refused(client.post(f"{V1}/servers", json={"name": name}), "'time'", "look alike")
        refused(client.post(f"{V1}/servers", json={"name": "\u0441lock"}), "'clock'")  # Cyrillic с
        made = client.post(f"{V1}/servers", json={"name": "chrono", "description": "Clocks and dates."})
        assert made.status_code == 201, made.text
        tool = {"server": "chrono", "name": "get_current_t\u0456me", "description": "The time now."}
        refused(client.post(f"{V1}/tools", json=tool), "'time::get_current_time'", "look alike")
        batch = {
            "servers": [{"name": "dates", "description": "Dates."}],
            "tools": [{"server": "dates", "name": "get_current_tim\u0435", "description": "Now."}],
        }
        error = refused(client.post(f"{V1}/catalog/import", json=batch))
        assert "time::get_current_time" in json.dumps(error["problems"]), error
        after = {s["name"] for s in client.get(f"{V1}/servers").json()}
        assert after == listed | {"chrono"}
        assert client.get(f"{V1}/tools/chrono::get_current_t\u0456me").status_code == 404
