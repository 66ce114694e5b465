"""Deep definitions at the REST API's doors and on its read routes (issue 39, medium 8), over HTTP against a
real uvicorn server, the real catalog database and the real model.

The 500 came from pydantic's serializer: an answer holding a JSON value nested about 255 levels deep
fails with "Maximum serialization depth exceeded" (and pydantic's JSON parser refuses 200), so a schema
nested 260 deep, once stored, broke every route that showed it. Every door now refuses a JSON value of a
definition nested over 64 levels (tool_selector/core/json_limits.py) before anything is stored, and a
definition stored before the limit reads as withheld, so every route still answers."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.routes.test_api_import_jobs import wait_for_job
from tests.support.api_helpers import RunningApi
from tool_selector.core.json_limits import MAX_JSON_DEPTH, SCHEMA_CHARS, WITHHELD_KEY
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec

V1 = "/api/v1"
KEYS = ("viewer", "contributor", "editor", "admin")


def nested(levels: int) -> dict[str, Any]:
    """A JSON object nested ``levels`` deep (``{}`` is one level)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"x": value}
    return value


def schema(levels: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"deep": nested(levels - 2)}}


def refused(response: httpx.Response, *words: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] in ("invalid_input", "catalog_file"), error
    text = json.dumps(error)
    for word in words:
        assert word in text, text
    return error


def test_a_tool_nested_260_deep_is_refused_with_422_naming_the_limit_at_every_rest_door_storing_nothing(
    api: RunningApi,
) -> None:
    limit = f"more than {MAX_JSON_DEPTH} levels"
    with api.client("contributor") as client:
        made = client.post(f"{V1}/servers", json={"name": "abyss", "description": "Deep things."})
        assert made.status_code == 201, made.text
        for field in ("input_schema", "output_schema", "annotations"):
            body = {"server": "abyss", "name": "dive", "description": "Dives deep.", field: schema(260)}
            refused(client.post(f"{V1}/tools", json=body), field, limit)
        deep_metadata = {"name": "trench", "metadata": {"notes": nested(100)}}
        refused(client.post(f"{V1}/servers", json=deep_metadata), "metadata", limit)
        ok = {
            "server": "abyss",
            "name": "dive",
            "description": "Dives.",
            "input_schema": schema(MAX_JSON_DEPTH),
        }
        assert client.post(f"{V1}/tools", json=ok).status_code == 201  # at the limit: accepted
    with api.client("editor") as client:
        patched = client.patch(f"{V1}/tools/abyss::dive", json={"input_schema": schema(MAX_JSON_DEPTH + 1)})
        refused(patched, "input_schema", limit)
    with api.client("admin") as client:
        batch = {
            "servers": [{"name": "reef", "description": "Reefs."}],
            "tools": [{"server": "reef", "name": "map", "description": "Maps.", "input_schema": schema(260)}],
        }
        error = refused(client.post(f"{V1}/catalog/import", json=batch), limit)
        assert error["problems"][0]["item"] == 0, error
        for path in (f"{V1}/tools/abyss::dive", f"{V1}/quarantine", f"{V1}/enrichment/tool/abyss::dive"):
            answer = client.get(path)
            assert answer.status_code == 200, answer.text
            assert "more than" not in answer.text and '"x"' * 3 not in answer.text
        assert client.get(f"{V1}/tools/abyss::dive").json()["input_schema"] == schema(MAX_JSON_DEPTH)
        assert client.get(f"{V1}/servers/reef").status_code == 404
        assert client.get(f"{V1}/servers/trench").status_code == 404
        audit = client.get(f"{V1}/audit", params={"limit": 1000}).json()
        assert [r["target"] for r in audit if r["action"] == "tool.create"] == ["tool:abyss::dive"]


def test_a_definition_stored_too_deep_before_the_limit_is_shown_withheld_on_every_route_for_every_key(
    api: RunningApi,
) -> None:
    # stored as a version without the limit stored it: model_construct skips the validation every door
    # now runs, and the writer holds it for approval as it did (trust.registered = approve)
    deep = ToolSpec.model_construct(
        server="abyss",
        name="dive",
        description="Dives deep.",
        input_schema=schema(260),
        annotations={},
        output_schema=None,
    )
    with api.container() as container:
        container.writer.create_server(
            ServerSpec.model_construct(name="abyss", description="", metadata={"notes": nested(260)}),
            method=CreationMethod.MANUAL_API,
            actor="test",
        )
        container.writer.create_tool(deep, method=CreationMethod.MANUAL_API, actor="test", trust="approve")
        huge = deep.model_copy(update={"name": "haul", "input_schema": {"description": "y" * SCHEMA_CHARS}})
        container.writer.create_tool(huge, method=CreationMethod.MANUAL_API, actor="test", trust="approve")
        entries = {e.tool_id: e.id for e in container.store.quarantine_entries()}
        entry, too_big = entries["abyss::dive"], entries["abyss::haul"]
    routes = (
        f"{V1}/quarantine",
        f"{V1}/quarantine?everything=true",
        f"{V1}/quarantine/{entry}",
        f"{V1}/tools/abyss::dive",
        f"{V1}/enrichment/tool/abyss::dive",
        f"{V1}/tools",
        f"{V1}/tools?server=abyss",
        f"{V1}/servers",
        f"{V1}/servers/abyss",
        f"{V1}/overview/servers",
        f"{V1}/enrichment/server/abyss/status",
    )
    for key in KEYS:
        with api.client(key) as client:
            for path in routes:
                answer = client.get(path)
                assert answer.status_code == 200, (key, path, answer.text[:300])
    with api.client("admin") as client:
        tool = client.get(f"{V1}/tools/abyss::dive").json()
        assert (
            WITHHELD_KEY in tool["input_schema"] and "Delete the tool" in tool["input_schema"][WITHHELD_KEY]
        )
        assert WITHHELD_KEY in client.get(f"{V1}/servers/abyss").json()["metadata"]
        held = client.get(f"{V1}/quarantine/{entry}").json()
        assert WITHHELD_KEY in held["entry"]["new_definition"]["input_schema"]
        for held_id in (entry, too_big):
            approved = client.post(f"{V1}/quarantine/{held_id}/approve", json={"note": "test"})
            refused(approved, "cannot be approved")
            assert "Reject it" in approved.json()["error"]["hint"]
        patched = client.patch(f"{V1}/tools/abyss::dive", json={"description": "Dives."})
        refused(patched, "input_schema")
        rejected = client.post(f"{V1}/quarantine/{entry}/reject", json={"note": "too deep"})
        assert rejected.status_code == 200, rejected.text
        repaired = client.patch(f"{V1}/tools/abyss::dive", json={"input_schema": schema(3)})
        assert repaired.status_code == 200 and repaired.json()["input_schema"] == schema(3), repaired.text
        job = client.post(f"{V1}/enrichment/sync")
        assert job.status_code == 202, job.text
        assert wait_for_job(client, job.json()["job"]["id"])["state"] == "succeeded"
