"""No REST key below ``admin`` and no MCP caller gets a command started that the operator did not write
into the configuration on the machine (issue 27, finding 1).

The attack of the finding: an ``editor`` key imports ``{"mcpServers": {...}}`` (stored switched off),
switches the entry on through the console's route, and starts a sync. Here every route of the API's
OpenAPI schema is tried with every key below admin, with the bodies that come closest to starting the
imported entry, and then a sync: the entry's command never runs. The admin path (the launch line
repeated) shows the same sweep would notice a command that runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from routes.api import build_app
from tests.routes.test_api_import_jobs import imported, wait_for_job
from tests.support.api_helpers import RunningApi
from tool_selector.catalog.admin import ROLE_SCOPES, SCOPES
from tool_selector.config.servers import load_servers
from tool_selector.config.settings import Settings

SPY = "spy"


def spy_entry(marker: Path, **extra: Any) -> dict[str, Any]:
    """An mcpServers entry whose command leaves ``marker`` behind when it runs."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"], **extra}


def keys_below_admin() -> list[str]:
    roles = [role for role in ROLE_SCOPES if role != "admin"]
    return roles + [f"only:{scope}" for scope in SCOPES if scope != "admin"]


def attacks(marker: Path, launch: str) -> dict[tuple[str, str], list[Any]]:
    """Per route of the OpenAPI schema, the bodies (None: no body) that come closest to starting the
    imported entry. A route missing here fails the sweep, so a new route is reviewed for this rule."""
    entry = spy_entry(marker, enabled=True, origin="operator", trust="tofu")
    runnable_metadata = {"transport": "stdio", "command": sys.executable, "args": entry["args"]}
    return {
        ("GET", "/health"): [None],
        ("GET", "/api/v1/whoami"): [None],
        ("GET", "/api/v1/overview/servers"): [None],
        ("PUT", "/api/v1/config/servers/{name}/enabled"): [
            {"enabled": True},
            {"enabled": True, "confirm_launch": launch},
        ],
        ("GET", "/api/v1/tools"): [None],
        ("POST", "/api/v1/tools"): [{"server": SPY, "name": "run", "description": "Runs it"}],
        ("GET", "/api/v1/enrichment/tool/{tool_id}"): [None],
        ("GET", "/api/v1/jobs"): [None],
        ("GET", "/api/v1/eval/reports"): [None],
        ("GET", "/api/v1/eval/reports/{name}"): [None],
        ("GET", "/api/v1/eval/reports/{name}/diagram"): [None],
        ("POST", "/api/v1/resolve"): [{"query": "run the spy"}],
        ("GET", "/api/v1/tools/search"): [None],
        ("GET", "/api/v1/servers"): [None],
        ("POST", "/api/v1/servers"): [{"name": "spy2", "description": "x", "metadata": runnable_metadata}],
        ("GET", "/api/v1/servers/{name}"): [None],
        ("PATCH", "/api/v1/servers/{name}"): [{"metadata": runnable_metadata}],
        ("DELETE", "/api/v1/servers/{name}"): [None],
        ("GET", "/api/v1/tools/{tool_id}"): [None],
        ("PATCH", "/api/v1/tools/{tool_id}"): [{"description": "Runs it now"}],
        ("DELETE", "/api/v1/tools/{tool_id}"): [None],
        ("POST", "/api/v1/catalog/import"): [
            {"mcpServers": {SPY: entry, "spy3": entry}},
            {"servers": [{"name": SPY, "description": "x", "metadata": runnable_metadata}], "tools": []},
        ],
        ("POST", "/api/v1/enrichment/server/{name}/profile"): [None],
        ("GET", "/api/v1/enrichment/server/{name}/status"): [None],
        ("POST", "/api/v1/enrichment/sync"): [None],
        ("GET", "/api/v1/enrichment/stats"): [None],
        ("GET", "/api/v1/jobs/{job_id}"): [None],
        ("GET", "/api/v1/audit"): [None],
        ("GET", "/api/v1/quarantine"): [None],
        ("GET", "/api/v1/quarantine/{entry_id}"): [None],
        ("POST", "/api/v1/quarantine/{entry_id}/approve"): [{}],
        ("POST", "/api/v1/quarantine/{entry_id}/reject"): [{}],
        # the memory of confirmed choices reads and erases rows; it never names a command
        ("GET", "/api/v1/memory"): [None],
        ("DELETE", "/api/v1/memory"): [None],
        ("GET", "/api/v1/memory/{choice_id}"): [None],
        ("DELETE", "/api/v1/memory/{choice_id}"): [None],
    }


def schema_routes(settings: Settings) -> set[tuple[str, str]]:
    paths = build_app(settings).openapi()["paths"]
    return {(method.upper(), path) for path, ops in paths.items() for method in ops}


def fill(path: str) -> str:
    values = {"name": SPY, "tool_id": f"{SPY}::run", "job_id": "j-0", "entry_id": "q-0", "choice_id": "1"}
    for key, value in values.items():
        path = path.replace("{" + key + "}", value)
    return path


def wait_for_every_job(client: httpx.Client) -> None:
    for job in client.get("/api/v1/jobs", params={"limit": 200}).json()["jobs"]:
        wait_for_job(client, job["id"])


def test_no_key_below_admin_gets_an_imported_command_started_through_any_route_until_an_admin_allows_it(
    api: RunningApi, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    with api.client("only:import") as importer:
        imported(importer, json.dumps({"mcpServers": {SPY: spy_entry(marker)}}))
    stored = load_servers(api.settings.servers_path).mcpServers[SPY]
    assert (stored.enabled, stored.origin) == (False, "import")
    launch = stored.launch_line()
    table = attacks(marker, launch)
    assert schema_routes(api.settings) == set(table), "review every new route against this rule"

    statuses: dict[str, set[int]] = {}
    for who in keys_below_admin():
        with api.client(who) as client:
            for (method, path), bodies in table.items():
                for body in bodies:
                    response = client.request(method, fill(path), json=body)
                    statuses.setdefault(f"{method} {path}", set()).add(response.status_code)
                    assert response.status_code < 500, (who, method, path, response.text)
    with api.client("admin") as admin:
        wait_for_every_job(admin)
        sync = wait_for_job(admin, admin.post("/api/v1/enrichment/sync").json()["job"]["id"])
        assert sync["state"] == "succeeded", sync
        assert not marker.exists(), "an imported command ran"
        assert statuses["PUT /api/v1/config/servers/{name}/enabled"] >= {403}
        stored = load_servers(api.settings.servers_path).mcpServers[SPY]
        assert stored.origin == "import" and "spy3" in load_servers(api.settings.servers_path).mcpServers
        assert load_servers(api.settings.servers_path).mcpServers["spy3"].origin == "import"
        records = admin.get("/api/v1/audit", params={"target": f"config:{SPY}"}).json()
        assert {r["action"] for r in records} == {"config.enable.refused"}

        # an admin must repeat the launch line; then it is adopted, audited, and the next sync runs it
        unconfirmed = admin.put(f"/api/v1/config/servers/{SPY}/enabled", json={"enabled": True})
        assert unconfirmed.status_code == 422 and unconfirmed.json()["error"]["details"]["launch"] == launch
        switched = admin.put(
            f"/api/v1/config/servers/{SPY}/enabled", json={"enabled": True, "confirm_launch": launch}
        )
        assert switched.status_code == 200, switched.text
        assert (switched.json()["origin"], switched.json()["enabled"]) == ("operator", True)
        record = admin.get("/api/v1/audit", params={"target": f"config:{SPY}"}).json()[0]
        assert record["action"] == "config.enable" and record["actor"].endswith(":test-admin")
        assert record["details"]["launch"] == launch and record["details"]["adopted"] is True
        sync = wait_for_job(admin, admin.post("/api/v1/enrichment/sync").json()["job"]["id"])
    assert marker.exists(), "the sweep would notice a command that runs"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["switched off", "switched on by hand"])
async def test_the_gateway_never_starts_an_imported_entry_and_says_the_operator_must_allow_it(
    how: str, tmp_path: Path
) -> None:
    from tests.support.catalogs import write_catalog
    from tests.support.gateway_helpers import GatewaySetup, inprocess_gateway, text
    from tests.support.indexed import EMBEDDER, SMALL_TOOLS, indexed_catalog
    from tool_selector.config.servers import ServerConfig, ServersFile, save_servers

    marker = tmp_path / "started"
    with indexed_catalog(tmp_path, write_catalog(tmp_path / "catalog", SMALL_TOOLS)):
        pass
    setup = GatewaySetup(tmp_path / "data", tmp_path / "cache", tmp_path / "servers.json")
    entry = ServerConfig.model_validate(spy_entry(marker, origin="import", enabled=how != "switched off"))
    save_servers(setup.servers_file, ServersFile(mcpServers={SPY: entry}))
    async with inprocess_gateway(setup.settings(), EMBEDDER) as client:
        result = await client.call_tool("activate_power", {"name": SPY})
        call = await client.call_tool("call_tool", {"power": SPY, "tool": "run", "arguments": {}})
    assert result.is_error and call.is_error and not marker.exists()
    if how == "switched on by hand":
        assert "waits for the operator to allow it" in text(result)
