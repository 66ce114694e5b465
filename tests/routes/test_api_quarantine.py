"""The quarantine over REST, against a real uvicorn server: a tool registered through the API waits for
approval by default (trust.registered = approve), is not searchable until a key with the ``approve``
scope approves it, and each decision is one audit record."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.api_helpers import RunningApi

V1 = "/api/v1"
FORECAST = "Get the ten-day weather forecast for a city, with rain and wind."


def _register(api: RunningApi) -> dict[str, Any]:
    with api.client("contributor") as client:
        client.post(f"{V1}/servers", json={"name": "skies", "description": "Forecasts."}).raise_for_status()
        created = client.post(
            f"{V1}/tools",
            json={
                "server": "skies",
                "name": "forecast",
                "description": FORECAST,
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "matching_mode": "force_create",
            },
        )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def _tool_entries(client: httpx.Client, **params: str) -> list[dict[str, Any]]:
    """The quarantine's entries for tools (the registered server's own text waits there too)."""
    entries: list[dict[str, Any]] = client.get(f"{V1}/quarantine", params=params).json()
    return [e for e in entries if e["subject"] == "tool"]


def _searched(client: httpx.Client) -> list[str]:
    found = client.get(f"{V1}/tools/search", params={"q": "ten-day weather forecast rain wind"})
    found.raise_for_status()
    return [t["id"] for t in found.json()["tools"]]


def test_a_tool_registered_over_rest_waits_for_approval_and_is_not_searchable(api: RunningApi) -> None:
    outcome = _register(api)
    assert outcome["held"] is True
    with api.client("viewer") as viewer:
        assert "skies::forecast" not in _searched(viewer)
        held = _tool_entries(viewer)
        assert [(e["tool_id"], e["kind"], e["found_by"]) for e in held] == [
            ("skies::forecast", "new", "registration")
        ]
        assert "approval is required" in held[0]["reasons"][0]
        health = viewer.get("/health").json()
        assert health["quarantined"] == ["skies::forecast"]
        shown = viewer.get(f"{V1}/quarantine/{held[0]['id']}").json()
        assert '"description": "Get the ten-day' in shown["diff"] and "approve" in shown["next"]


def test_only_a_key_with_the_approve_scope_can_approve_and_then_the_tool_is_found(api: RunningApi) -> None:
    _register(api)
    with api.client("viewer") as viewer:
        entry = _tool_entries(viewer)[0]["id"]
    with api.client("editor") as editor:
        refused = editor.post(f"{V1}/quarantine/{entry}/approve", json={"note": "ok"})
    assert refused.status_code == 403 and "'approve'" in refused.json()["error"]["message"]
    with api.client("admin") as admin:
        approved = admin.post(f"{V1}/quarantine/{entry}/approve", json={"note": "looked at it"})
        assert approved.status_code == 200, approved.text
        assert approved.json()["entry"]["state"] == "approved"
        assert "skies::forecast" in _searched(admin)
        assert admin.get("/health").json()["quarantined"] == []
        again = admin.post(f"{V1}/quarantine/{entry}/approve")
        assert again.status_code == 409 and "approved already" in again.json()["error"]["message"]
        audit = admin.get(f"{V1}/audit", params={"limit": 5}).json()
    records = audit["records"] if isinstance(audit, dict) else audit
    approvals = [r for r in records if r["action"] == "tool.approve"]
    assert len(approvals) == 1 and approvals[0]["details"]["note"] == "looked at it"


def test_a_rejected_registration_stays_held_and_an_unknown_entry_is_404(api: RunningApi) -> None:
    _register(api)
    with api.client("admin") as admin:
        entry = _tool_entries(admin)[0]["id"]
        rejected = admin.post(f"{V1}/quarantine/{entry}/reject", json={"note": "not ours"})
        assert rejected.json()["entry"]["state"] == "rejected"
        assert _tool_entries(admin) == []
        assert [e["state"] for e in _tool_entries(admin, all="true")] == ["rejected"]
        assert "skies::forecast" not in _searched(admin)
        missing = admin.post(f"{V1}/quarantine/q-0000000000/approve")
        assert missing.status_code == 404 and "quarantine list" in missing.json()["error"]["hint"]
