"""No key below ``admin`` reads a secret value of a configured server, through any route (issue 39,
finding 3: a viewer key read ``"launch": "env API_TOKEN=sk-live-… DB_PASSWORD=…"`` and url tokens).

The servers file holds secrets everywhere a configuration can: env values (literal, and a ``${VAR}``
whose value is in the environment of the process), a secret option among the args and a database url
with a password, an HTTP url with credentials and a query token, header values, and an entry that
arrived in a catalog import (whose launch line the console shows). A sync (one server works, one exits
printing its environment to stderr, one cannot be reached) leaves errors, jobs and audit rows behind.
Then every route the app serves (walked from the app's routes, so that a new one is covered without
editing this test) is called with each key below admin, reads and writes alike, and no answer may hold
a secret; nor may the audit (read with the admin key), the log records, or the console's own files.
The admin key's overview, which does show the values, shows the sweep would notice one.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from routes.api import build_app
from routes.ui import STATIC
from tests.routes.test_api_import_jobs import wait_for_job
from tests.support.api_helpers import RunningApi
from tests.support.paths import SERVERS
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers

SECRETS = {
    "env": "sk-live-envtoken-4242",
    "password": "db-password-hunter22",
    "resolved": "resolved-from-environ-9191",
    "option": "opt-apikey-7373",
    "dsn": "dsn-password-5151",
    "userinfo": "url-password-6464",
    "query": "query-token-8282",
    "header": "header-bearer-1717",
    "imported": "imported-secret-3535",
    "station": "station-key-2626",
    "team": "team-token-from-environ-1313",
}
# the server prints these to stderr and exits: its error must not quote them
PRINTS_ITS_ENV = (
    "import os, sys; sys.stderr.write(os.environ['API_TOKEN'] + ' ' + os.environ['REF']); sys.exit(3)"
)


def secret_servers() -> dict[str, ServerConfig]:
    s = SECRETS
    return {
        "vault": ServerConfig(
            command=sys.executable,
            args=["-c", PRINTS_ITS_ENV, "--api-key", s["option"], f"postgresql://app:{s['dsn']}@db.test/x"],
            env={"API_TOKEN": s["env"], "DB_PASSWORD": s["password"], "REF": "${VAULT_REF}"},
        ),
        "docs": ServerConfig(
            url=f"http://deploy:{s['userinfo']}@127.0.0.1:9/mcp?token={s['query']}&mode=full",
            headers={"Authorization": f"Bearer {s['header']}", "X-Team": "${TEAM_TOKEN}"},
        ),
        "station": ServerConfig(
            command=sys.executable, args=[str(SERVERS / "flaky_server.py")], env={"STATION_KEY": s["station"]}
        ),
        "parcel": ServerConfig(
            command=sys.executable,
            args=["-c", "pass"],
            env={"SECRET_KEY": s["imported"]},
            enabled=False,
            origin="import",
        ),
    }


def leaked(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def app_routes(api: RunningApi) -> set[tuple[str, str]]:
    """Every (method, path) the app serves, walked from its routes (into included routers)."""
    app = build_app(api.settings)

    def walk(routes: Iterable[Any]) -> Iterator[tuple[str, str]]:
        for route in routes:
            if getattr(route, "path", None) is not None:
                yield from ((m, route.path) for m in route.methods or () if m != "HEAD")
            elif getattr(route, "original_router", None) is not None:
                yield from walk(route.original_router.routes)
            else:
                raise AssertionError(f"cannot list the routes of {route!r}: teach this walk about it")

    found = set(walk(app.routes))
    schema = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    assert schema <= {(m, p.replace(":path}", "}")) for m, p in found}, "the walk missed routes"
    return found


def fill(path: str, values: dict[str, list[str]]) -> list[str]:
    """The path with each parameter set to each of its values (every configured name for {name})."""
    paths = [path.replace(":path}", "}")]
    for key, options in values.items():
        if "{" + key + "}" in paths[0]:
            paths = [p.replace("{" + key + "}", option) for p in paths for option in options]
    assert all("{" not in p for p in paths), f"no value for a parameter of {path}"
    return paths


BODIES: dict[tuple[str, str], Any] = {
    ("PUT", "/api/v1/config/servers/{name}/enabled"): {"enabled": True},
    ("POST", "/api/v1/resolve"): {"query": "read the weather station"},
}


def sweep(
    api: RunningApi, who: str, routes: set[tuple[str, str]], values: dict[str, list[str]], methods: set[str]
) -> dict[str, int]:
    """Call every route of ``methods`` with ``who``'s key; assert no answer holds a secret."""
    statuses: dict[str, int] = {}
    with api.client(who) as client:
        for method, path in sorted(routes):
            if method not in methods:
                continue
            body = BODIES.get(
                (method, path.replace(":path}", "}")), {} if method in ("POST", "PUT", "PATCH") else None
            )
            for url in fill(path, values):
                response = client.request(method, url, json=body)
                statuses[f"{method} {url}"] = response.status_code
                assert response.status_code < 500, (who, method, url, response.text)
                assert leaked(response.text) == [], (who, method, url, response.text)
    return statuses


@pytest.fixture
def configured(api: RunningApi, monkeypatch: pytest.MonkeyPatch) -> RunningApi:
    monkeypatch.setenv("VAULT_REF", SECRETS["resolved"])
    monkeypatch.setenv("TEAM_TOKEN", SECRETS["team"])
    save_servers(api.settings.servers_path, ServersFile(mcpServers=secret_servers()))
    return api


def test_no_key_below_admin_reads_a_configured_servers_secret_through_any_route_the_audit_or_the_logs(
    configured: RunningApi, caplog: pytest.LogCaptureFixture
) -> None:
    api = configured
    caplog.set_level(logging.INFO)
    with api.client("admin") as admin:
        sync = wait_for_job(admin, admin.post("/api/v1/enrichment/sync").json()["job"]["id"])
        assert sync["state"] == "succeeded", sync
        assert set(sync["result"]["failed"]) == {"vault", "docs"}, sync["result"]
        # switches leave audit rows with launch lines: an admin's at the API, an editor's refusal
        for enabled in (False, True):
            switched = admin.put("/api/v1/config/servers/vault/enabled", json={"enabled": enabled})
            assert switched.status_code == 200, switched.text
        revealed = admin.get("/api/v1/overview/servers").text
        tool_id = admin.get("/api/v1/tools", params={"server": "station", "limit": 1}).json()["tools"][0][
            "id"
        ]
        entries = admin.get("/api/v1/quarantine", params={"all": "true"}).json()
    with api.client("editor") as editor:
        refused = editor.put("/api/v1/config/servers/parcel/enabled", json={"enabled": True})
        assert refused.status_code == 403 and "SECRET_KEY=***" in refused.text, refused.text
    assert leaked(revealed) != [], "the admin key reads the values: the sweep would notice one"

    values = {
        "name": ["vault", "docs", "station", "parcel"],
        "tool_id": [tool_id],
        "job_id": [sync["id"]],
        "entry_id": [e["id"] for e in entries][:1] or ["q-0"],
        "choice_id": ["1"],
    }
    static = {"name": sorted(p.name for p in STATIC.iterdir() if p.is_file())}
    routes = app_routes(api)
    console_files = {r for r in routes if r[1].startswith("/ui/static/")}
    api_routes = routes - console_files

    for who in ("viewer", "contributor", "editor"):
        statuses = sweep(api, who, api_routes, values, {"GET"})
        assert statuses["GET /api/v1/overview/servers"] == 200
        sweep(api, who, console_files, static, {"GET"})
    with api.client("viewer") as viewer:
        shown = viewer.get("/api/v1/overview/servers").json()["servers"]
    viewer_overview = {s["name"]: s for s in shown}
    vault, docs = viewer_overview["vault"], viewer_overview["docs"]
    assert "API_TOKEN=***" in vault["launch"] and "REF=${VAULT_REF}" in vault["launch"], vault
    assert "--api-key '***'" in vault["launch"] and "postgresql://***:***@db.test/x" in vault["launch"], vault
    assert docs["launch"].startswith("http://***:***@127.0.0.1:9/mcp?token=***&mode=***"), docs
    assert vault["status"] == "failed" and "closed the connection" in vault["error"], vault
    assert viewer_overview["parcel"]["launch"].startswith("env 'SECRET_KEY=***'"), viewer_overview["parcel"]

    for who in ("viewer", "contributor", "editor"):  # writes too: their answers and errors
        sweep(api, who, api_routes, values, {"POST", "PUT", "PATCH", "DELETE"})
    with api.client("admin") as admin:
        for job in admin.get("/api/v1/jobs", params={"limit": 200}).json()["jobs"]:
            wait_for_job(admin, job["id"])
        audit = admin.get("/api/v1/audit", params={"limit": 1000}).json()
    for who in ("viewer", "contributor", "editor"):  # the jobs the writes started, now finished
        sweep(api, who, api_routes, values, {"GET"})

    assert leaked(json.dumps(audit)) == [], audit
    launches = [r["details"]["launch"] for r in audit if "launch" in r["details"]]
    assert len(launches) >= 3 and any("SECRET_KEY=***" in line for line in launches), launches
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert leaked(logged) == [], logged
