"""Registration through the REST API, over HTTP against a real uvicorn server, the real catalog database
and the real MiniLM model: servers and tools CRUD, near-duplicate matching, scopes, audit, bad bodies."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
import pytest

from services.access.keys import KEY_PATTERN, revoke_key
from services.write.registry import SIMILAR, SIMILAR_WITH_SAME_NAME, dedup_text
from tests.support.api_helpers import RunningApi
from tests.support.db import count_rows

V1 = "/api/v1"
FORECAST = "Get the weather forecast for a city for the next days."
KLINGON = "Translates Klingon phrases into English."
GIT_TOOLS = 12


def key_id(api: RunningApi, who: str) -> str:
    found = KEY_PATTERN.match(api.keys[who])
    assert found is not None
    return found.group(1)


def actor(api: RunningApi, who: str) -> str:
    name = f"only-{who[5:]}" if who.startswith("only:") else f"test-{who}"
    return f"key:{key_id(api, who)}:{name}"


def snapshot(api: RunningApi) -> tuple[str, int, int]:
    """What another process sees: the catalog hash, the audit row count and the tool count."""
    with api.container() as container:
        store = container.store
        audit_rows = count_rows(store.path, "audit")
        return store.catalog_hash(), audit_rows, store.counts()[1]


def id_of(tool: dict[str, Any]) -> str:
    """A tool record's id (the record itself does not carry it)."""
    return f"{tool['server']}::{tool['name']}"


def tool_path(tool_id: str) -> str:
    return f"{V1}/tools/{quote(tool_id, safe='')}"


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["hint"], str) and error["hint"]
    return error


def tool_body(name: str, description: str, server: str = "weather", **options: str) -> dict[str, Any]:
    return {"server": server, "name": name, "description": description, **options}


def register_weather(client: httpx.Client, server: str = "weather") -> dict[str, Any]:
    made = client.post(f"{V1}/servers", json={"name": server, "description": "Weather forecasts."})
    assert made.status_code == 201, made.text
    tool = client.post(f"{V1}/tools", json=tool_body("get_forecast", FORECAST, server))
    assert tool.status_code == 201, tool.text
    created: dict[str, Any] = tool.json()["tool"]
    return created


def searched(client: httpx.Client, q: str, limit: int = 10) -> list[str]:
    found = client.get(f"{V1}/tools/search", params={"q": q, "limit": limit})
    assert found.status_code == 200, found.text
    return [hit["id"] for hit in found.json()["tools"]]


def similarity(api: RunningApi, a: tuple[str, str], b: tuple[str, str]) -> float:
    vectors = api.embedder.embed_documents([dedup_text(*a), dedup_text(*b)])
    return float(np.dot(vectors[0], vectors[1]))


# -- CRUD --------------------------------------------------------------------------------------------


def test_registered_servers_and_tools_record_the_key_as_creator_and_manual_api(api: RunningApi) -> None:
    started = datetime.now(UTC)
    with api.client("contributor") as client:
        server = client.post(f"{V1}/servers", json={"name": "weather", "description": "Weather forecasts."})
        tool = client.post(f"{V1}/tools", json=tool_body("get_forecast", FORECAST))
        fetched = client.get(f"{V1}/tools/weather::get_forecast")
    finished = datetime.now(UTC)
    assert server.status_code == 201 and server.json()["outcome"] == "created"
    assert tool.status_code == 201 and tool.json()["outcome"] == "created"
    who = actor(api, "contributor")
    for record in (server.json()["server"], tool.json()["tool"]):
        assert record["creation_method"] == "manual_api"
        assert record["created_by"] == record["modified_by"] == who
        assert started <= datetime.fromisoformat(record["created_at"]) <= finished
    assert fetched.status_code == 200 and fetched.json() == tool.json()["tool"]
    assert (fetched.json()["server"], fetched.json()["name"]) == ("weather", "get_forecast")


def test_ids_with_slashes_spaces_and_colons_are_addressable_encoded_or_not(api: RunningApi) -> None:
    name = "acme/weather tools"
    with api.client("editor") as client:
        register_weather(client, server=name)
        tool_id = f"{name}::get_forecast"
        assert client.get(f"{V1}/servers/{quote(name, safe='')}").json()["name"] == name
        for path in (tool_path(tool_id), f"{V1}/tools/{tool_id}"):
            assert client.get(path).json()["server"] == name
        patched = client.patch(tool_path(tool_id), json={"description": KLINGON})
        assert patched.status_code == 200 and patched.json()["description"] == KLINGON
        assert client.delete(tool_path(tool_id)).json()["deleted"] == tool_id
        error_of(client.get(tool_path(tool_id)), 404, "not_found")


def test_a_patched_tool_is_rehashed_and_the_next_search_and_resolve_see_it(api_trusting: RunningApi) -> None:
    api = api_trusting  # registration mechanics: trust on first use (approval: test_api_quarantine)
    query = "translate Klingon phrases into English"
    with api.client("contributor") as contributor, api.client("editor") as editor:
        created = register_weather(contributor)
        server_before = contributor.get(f"{V1}/servers/weather").json()
        assert searched(contributor, query)[0] != id_of(created)  # the premise: not found before
        explained = {"query": query, "explain": True}
        first = contributor.post(f"{V1}/resolve", json=explained).json()["resolution"]["tools"][0]
        assert first["id"] != id_of(created)
        patched = editor.patch(tool_path(id_of(created)), json={"description": KLINGON})
        assert patched.status_code == 200, patched.text
        record = patched.json()
        assert record["description"] == KLINGON
        assert record["modified_by"] == actor(api, "editor") != record["created_by"]
        assert datetime.fromisoformat(record["updated_at"]) > datetime.fromisoformat(created["updated_at"])
        assert record["content_hash"] != created["content_hash"]
        server_after = contributor.get(f"{V1}/servers/weather").json()
        assert server_after["content_hash"] != server_before["content_hash"]
        assert searched(contributor, query)[0] == id_of(created)
        hit = contributor.get(f"{V1}/tools/search", params={"q": query}).json()["tools"][0]
        assert hit["description"] == KLINGON
        resolved = contributor.post(f"{V1}/resolve", json=explained)  # the same query: not a cached answer
        assert resolved.json()["resolution"]["tools"][0]["id"] == id_of(created)


def test_a_server_patch_records_the_editor_and_a_no_op_patch_is_not_audited(api_trusting: RunningApi) -> None:
    api = api_trusting  # trust.registered = tofu: the patch is applied at once (held: test_server_text_gate)
    change = {"description": "Clocks and time zones.", "metadata": {"owner": "ops"}}
    with api.client("editor") as editor:
        patched = editor.patch(f"{V1}/servers/time", json=change)
        assert patched.status_code == 200, patched.text
        assert patched.json()["modified_by"] == actor(api, "editor")
        fetched = editor.get(f"{V1}/servers/time").json()
        assert (fetched["description"], fetched["metadata"]) == (change["description"], change["metadata"])
        before = snapshot(api)
        again = editor.patch(f"{V1}/servers/time", json=change)
        assert again.status_code == 200 and again.json()["updated_at"] == patched.json()["updated_at"]
        assert snapshot(api) == before


def test_a_deleted_tool_is_gone_from_the_catalog_and_from_search(api: RunningApi) -> None:
    query = "convert a time between timezones"
    with api.client("editor") as editor:
        assert "time::convert_time" in searched(editor, query)
        deleted = editor.delete(tool_path("time::convert_time"))
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["deleted"] == "time::convert_time"
        assert deleted.json()["tool"]["name"] == "convert_time"
        error_of(editor.get(tool_path("time::convert_time")), 404, "not_found")
        assert "time::convert_time" not in searched(editor, query, limit=100)
    assert snapshot(api)[2] == 51


def test_a_server_with_tools_is_deleted_only_with_cascade_which_empties_search(api: RunningApi) -> None:
    query = "show the changes staged for commit in my git repository"
    api.settings.servers_path.write_text(
        '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}'
    )
    before = snapshot(api)
    with api.client("editor") as editor:
        git_tools = sorted(t for t in searched(editor, query, limit=100) if t.startswith("git::"))
        assert len(git_tools) == GIT_TOOLS
        refused = error_of(editor.delete(f"{V1}/servers/git"), 409, "conflict")
        assert sorted(refused["details"]["tools"]) == git_tools
        assert snapshot(api) == before
        assert editor.get(f"{V1}/servers/git").status_code == 200
        deleted = editor.delete(f"{V1}/servers/git", params={"cascade": "true"})
        assert deleted.status_code == 200, deleted.text
        body = deleted.json()
        assert body["deleted"] == "git" and sorted(body["tools_deleted"]) == git_tools
        assert f"{GIT_TOOLS} tool(s)" in body["note"] and "still in the server configuration" in body["note"]
        error_of(editor.get(f"{V1}/servers/git"), 404, "not_found")
        error_of(editor.get(tool_path("git::git_status")), 404, "not_found")
        assert not [t for t in searched(editor, query, limit=100) if t.startswith("git::")]
    assert snapshot(api)[2] == before[2] - GIT_TOOLS


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/servers/nowhere", None),
        ("PATCH", "/servers/nowhere", {"description": "x"}),
        ("DELETE", "/servers/nowhere", None),
        ("GET", "/tools/time::nothing", None),
        ("PATCH", "/tools/time::nothing", {"description": "x"}),
        ("DELETE", "/tools/time::nothing", None),
        ("POST", "/tools", {"server": "nowhere", "name": "x", "description": "y"}),
    ],
)
def test_an_unknown_server_or_tool_answers_404_with_a_json_error_naming_it(
    api: RunningApi, method: str, path: str, body: dict[str, Any] | None
) -> None:
    before = snapshot(api)
    with api.client("admin") as admin:
        error = error_of(admin.request(method, V1 + path, json=body), 404, "not_found")
    assert "nowhere" in error["message"] or "time::nothing" in error["message"]
    assert snapshot(api) == before


# -- near-duplicates ---------------------------------------------------------------------------------


def test_auto_returns_the_existing_tool_for_a_near_identical_one_renamed(api: RunningApi) -> None:
    near = tool_body("fetch_forecast", FORECAST.replace("next", "next few"))
    with api.client("contributor") as client:
        existing = register_weather(client)
        before = snapshot(api)
        matched = client.post(f"{V1}/tools", json=near)
    assert matched.status_code == 200, matched.text
    body = matched.json()
    assert body["outcome"] == "matched" and body["tool"] == existing
    assert body["match"]["rule"] == "similar" and body["match"]["tool_id"] == id_of(existing)
    assert body["match"]["similarity"] >= SIMILAR
    assert snapshot(api) == before


def test_the_band_below_the_similar_threshold_matches_only_a_tool_of_the_same_name(api: RunningApi) -> None:
    stored = ("get_forecast", FORECAST)
    same_name = ("getForecast", "Shows the weather for a city.")  # 0.836 with the relevance model
    other_name = ("get_weather_forecast", "Predicted weather for a town this week.")  # 0.774
    for candidate in (same_name, other_name):  # the premise: both land in the 0.75-0.85 band
        assert SIMILAR_WITH_SAME_NAME <= similarity(api, stored, candidate) < SIMILAR
    with api.client("contributor") as client:
        register_weather(client)
        matched = client.post(f"{V1}/tools", json=tool_body(*same_name))
        created = client.post(f"{V1}/tools", json=tool_body(*other_name))
    assert matched.status_code == 200, matched.text
    assert matched.json()["match"]["rule"] == "similar_same_name"
    assert id_of(matched.json()["tool"]) == "weather::get_forecast"
    expected = similarity(api, stored, same_name)
    assert matched.json()["match"]["similarity"] == pytest.approx(expected, abs=1e-3)
    assert created.status_code == 201, created.text
    assert id_of(created.json()["tool"]) == "weather::get_weather_forecast"


def test_force_create_ignores_near_duplicates_but_conflicts_on_an_existing_id(api: RunningApi) -> None:
    with api.client("contributor") as client:
        register_weather(client)
        tools_before = snapshot(api)[2]
        near = tool_body("fetch_forecast", FORECAST, matching_mode="force_create")
        created = client.post(f"{V1}/tools", json=near)
        assert created.status_code == 201 and created.json()["outcome"] == "created"
        before = snapshot(api)
        error = error_of(client.post(f"{V1}/tools", json={**near, "name": "get_forecast"}), 409, "conflict")
    assert "weather::get_forecast" in error["message"]
    assert before == snapshot(api) and before[2] == tools_before + 1


def test_match_only_returns_the_match_or_404_naming_the_closest_never_creating(api: RunningApi) -> None:
    only = {"matching_mode": "match_only"}
    with api.client("contributor") as client:
        register_weather(client)
        before = snapshot(api)
        found = client.post(f"{V1}/tools", json=tool_body("forecast", FORECAST, **only))
        missing = client.post(f"{V1}/tools", json=tool_body("translate", KLINGON, **only))
        no_server = client.post(f"{V1}/servers", json={"name": "sunshine", **only})
    assert found.status_code == 200 and id_of(found.json()["tool"]) == "weather::get_forecast"
    error = error_of(missing, 404, "not_found")
    assert "'weather::get_forecast'" in error["message"]
    assert error["details"]["closest"] == "weather::get_forecast"
    error_of(no_server, 404, "not_found")
    assert snapshot(api) == before


def test_a_server_name_is_matched_in_auto_and_conflicts_in_force_create(api: RunningApi) -> None:
    before = snapshot(api)
    with api.client("contributor") as client:
        matched = client.post(f"{V1}/servers", json={"name": "time", "description": "other"})
        forced = client.post(f"{V1}/servers", json={"name": "time", "matching_mode": "force_create"})
    assert matched.status_code == 200 and matched.json()["outcome"] == "matched"
    assert matched.json()["server"]["description"] != "other"
    error_of(forced, 409, "conflict")
    assert snapshot(api) == before


def test_catalog_scope_finds_a_duplicate_in_another_server_and_server_scope_does_not(api: RunningApi) -> None:
    tool = tool_body("current_time", "Get the current time in a specific timezone.", "clock")
    with api.client("contributor") as client:
        assert client.post(f"{V1}/servers", json={"name": "clock"}).status_code == 201
        across = client.post(f"{V1}/tools", json={**tool, "match_scope": "catalog"})
        assert across.status_code == 200, across.text
        assert id_of(across.json()["tool"]) == "time::get_current_time"
        assert across.json()["match"]["similarity"] >= SIMILAR
        within = client.post(f"{V1}/tools", json={**tool, "match_scope": "server"})
    assert within.status_code == 201 and id_of(within.json()["tool"]) == "clock::current_time"


# -- scopes ------------------------------------------------------------------------------------------

MUTATIONS = [
    ("POST", "/servers", {"name": "weather"}, "viewer", "write"),
    ("PATCH", "/servers/time", {"description": "x"}, "contributor", "edit"),
    ("DELETE", "/servers/time?cascade=true", None, "only:write", "edit"),
    ("POST", "/tools", {"server": "time", "name": "tick", "description": "y"}, "only:read", "write"),
    ("PATCH", "/tools/time::convert_time", {"description": "x"}, "contributor", "edit"),
    ("DELETE", "/tools/time::convert_time", None, "only:import", "edit"),
    ("POST", "/catalog/import", {"servers": [{"name": "x"}], "tools": []}, "contributor", "import"),
    ("POST", "/enrichment/sync", None, "contributor", "edit"),
    ("POST", "/enrichment/server/time/profile", None, "only:admin", "edit"),
    ("GET", "/audit", None, "editor", "admin"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "who", "scope"), MUTATIONS, ids=[f"{m[0]} {m[1]}" for m in MUTATIONS]
)
def test_a_key_without_the_needed_scope_gets_403_naming_it_and_nothing_changes(
    api: RunningApi, method: str, path: str, body: dict[str, Any] | None, who: str, scope: str
) -> None:
    before = snapshot(api)
    with api.client(who) as client:
        error = error_of(client.request(method, V1 + path, json=body), 403, "forbidden")
    assert f"{scope!r}" in error["message"] and error["details"]["scope"] == scope
    assert snapshot(api) == before


@pytest.mark.parametrize("key", [None, "Bearer tsk_000000000000_not-a-real-key-at-all", "Basic abc"])
def test_a_request_without_a_valid_key_gets_401_with_a_bearer_challenge(
    api: RunningApi, key: str | None
) -> None:
    with api.client(None) as client:
        headers = {} if key is None else {"Authorization": key}
        refused = client.post(f"{V1}/servers", json={"name": "weather"}, headers=headers)
    error_of(refused, 401, "unauthorized")
    assert refused.headers["WWW-Authenticate"] == "Bearer"


def test_a_revoked_key_gets_401(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        assert viewer.get(f"{V1}/servers").status_code == 200
        with api.container() as container:
            revoke_key(container.store, key_id(api, "viewer"), actor="test")
        refused = viewer.get(f"{V1}/servers")
    assert "revoked" in error_of(refused, 401, "unauthorized")["message"]
    assert refused.headers["WWW-Authenticate"] == "Bearer"


def test_a_viewer_can_read_servers_tools_search_and_resolve(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        servers = viewer.get(f"{V1}/servers").json()
        assert len(servers) == 7 and "sequential-thinking" in {s["name"] for s in servers}
        assert viewer.get(f"{V1}/servers/time").json()["name"] == "time"
        assert viewer.get(tool_path("time::get_current_time")).json()["server"] == "time"
        assert searched(viewer, "current time in Tokyo")[0] == "time::get_current_time"
        resolved = viewer.post(f"{V1}/resolve", json={"query": "show the git diff of my repository"})
        assert resolved.status_code == 200 and resolved.json()["power"] == "git"


# -- audit -------------------------------------------------------------------------------------------


def test_each_mutation_writes_one_audit_row_and_leaves_the_index_current(api_trusting: RunningApi) -> None:
    api = api_trusting  # registration mechanics: trust on first use (approval: test_api_quarantine)
    tool, server = "/tools/weather::get_forecast", "/servers/weather"
    steps: list[tuple[str, str, str, dict[str, Any] | None, str]] = [
        ("contributor", "POST", "/servers", {"name": "weather"}, "server.create"),
        ("contributor", "POST", "/tools", tool_body("get_forecast", FORECAST), "tool.create"),
        ("editor", "PATCH", tool, {"description": KLINGON}, "tool.update"),
        ("admin", "PATCH", server, {"description": "Klingon."}, "server.update"),
        ("editor", "DELETE", tool, None, "tool.delete"),
        ("admin", "DELETE", server, None, "server.delete"),
    ]
    with api.client("admin") as admin:
        for who, method, path, body, action in steps:
            target = "server:weather" if action.startswith("server") else "tool:weather::get_forecast"
            audit_rows = snapshot(api)[1]
            with api.client(who) as client:
                done = client.request(method, V1 + path, json=body)
            assert done.status_code in (200, 201), done.text
            assert snapshot(api)[1] == audit_rows + 1
            assert admin.get("/health").json()["index_current"] is True
            row = admin.get(f"{V1}/audit", params={"limit": 1}).json()[0]
            assert (row["actor"], row["action"], row["target"]) == (actor(api, who), action, target)
            if action.endswith(".create"):
                assert row["before_hash"] is None and row["after_hash"]
            elif action.endswith(".delete"):
                assert row["before_hash"] and row["after_hash"] is None
            else:
                assert row["before_hash"] and row["after_hash"] and row["before_hash"] != row["after_hash"]
        newest = admin.get(f"{V1}/audit", params={"limit": len(steps)}).json()
    assert [r["action"] for r in newest] == [s[4] for s in reversed(steps)]
    assert [r["seq"] for r in newest] == sorted((r["seq"] for r in newest), reverse=True)


def test_the_audit_log_pages_newest_first_with_before_seq(api_trusting: RunningApi) -> None:
    api = api_trusting  # registration mechanics: trust on first use (approval: test_api_quarantine)
    with api.client("admin") as admin:
        register_weather(admin)
        everything = admin.get(f"{V1}/audit", params={"limit": 1000}).json()
        first = admin.get(f"{V1}/audit", params={"limit": 4}).json()
        second = admin.get(f"{V1}/audit", params={"limit": 4, "before_seq": first[-1]["seq"]}).json()
        mine = admin.get(f"{V1}/audit", params={"target": "server:weather"}).json()
    seqs = [r["seq"] for r in everything]
    assert len(seqs) >= 8 and seqs == sorted(seqs, reverse=True) and len(set(seqs)) == len(seqs)
    assert first + second == everything[:8]
    assert [r["action"] for r in first[:2]] == ["tool.create", "server.create"]
    assert [r["action"] for r in mine] == ["server.create"]


# -- bad bodies --------------------------------------------------------------------------------------

TICK = tool_body("tick", "", "time")
BAD = [
    ("POST", "/servers", {"description": "no name"}, "body.name"),
    ("POST", "/servers", {"name": 5, "description": ["x"]}, "body.name body.description"),
    ("POST", "/servers", {"name": "weather", "matching_mode": "maybe"}, "body.matching_mode"),
    ("POST", "/tools", {**TICK, "colour": "red", "input_schema": []}, "body.colour body.input_schema"),
    ("POST", "/tools", {**TICK, "matching_mode": "always"}, "body.matching_mode"),
    ("POST", "/tools", {**TICK, "match_scope": "world"}, "body.match_scope"),
    ("PATCH", "/tools/time::convert_time", {"description": 7, "name": "x"}, "body.description body.name"),
    ("PATCH", "/servers/time", {"metadata": "not an object"}, "body.metadata"),
    ("POST", "/resolve", {"query": ""}, "body.query"),
    ("GET", "/tools/search?q=time&limit=0", None, "query.limit"),
    ("GET", "/tools/search?q=time&limit=101", None, "query.limit"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "fields"), BAD, ids=[f"{b[0]} {b[1]} {b[3]}" for b in BAD]
)
def test_a_bad_request_gets_422_naming_each_bad_field_and_stores_nothing(
    api: RunningApi, method: str, path: str, body: dict[str, Any] | None, fields: str
) -> None:
    before = snapshot(api)
    with api.client("admin") as admin:
        error = error_of(admin.request(method, V1 + path, json=body), 422, "invalid_input")
    assert {f["field"] for f in error["fields"]} == set(fields.split())
    assert snapshot(api) == before


def test_a_malformed_json_body_gets_422_and_stores_nothing(api: RunningApi) -> None:
    before = snapshot(api)
    with api.client("admin") as admin:
        refused = admin.post(
            f"{V1}/servers", content=b'{"name": "weather",', headers={"Content-Type": "application/json"}
        )
        error = error_of(refused, 422, "invalid_input")
        assert error["fields"]
        error_of(admin.get(f"{V1}/servers/weather"), 404, "not_found")
    assert snapshot(api) == before
