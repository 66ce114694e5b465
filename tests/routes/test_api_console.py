"""The REST routes the operator console reads (routes/api_console.py), against a real uvicorn server over
a copy of the gateway-demo catalog (52 tools of 7 servers, imported: catalog-only, approved)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx

from eval.quality.dataset import Query
from eval.quality.metrics import Prediction, evaluate
from eval.quality.report import write_report_files
from services.api.jobs import JobRunner
from tests.support.api_helpers import RunningApi
from tool_selector.catalog import admin
from tool_selector.catalog.admin import JobProgress
from tool_selector.core.models import DiscoveryStatus

V1 = "/api/v1"


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code and error["hint"], error
    return error


def test_whoami_names_the_keys_scopes_and_the_roles_that_carry_each(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        me = _ok(viewer.get(f"{V1}/whoami"))
    assert me["actor"].startswith("key:") or "viewer" in me["actor"]
    assert me["scopes"] == ["read"] and me["key_id"]
    assert me["needs"]["edit"] == ["editor", "admin"] and me["needs"]["approve"] == ["admin"]
    with api.client("only:approve") as approver:
        assert _ok(approver.get(f"{V1}/whoami"))["scopes"] == ["approve"]
    with api.client(None) as anonymous:
        _refused(anonymous.get(f"{V1}/whoami"), 401, "unauthorized")


def _configure(api: RunningApi) -> None:
    """Two configured servers beside the catalog's: one enabled whose last discovery failed, one off."""
    config = {
        "mcpServers": {
            "weather": {"command": "/bin/false"},
            "notes": {"command": "/bin/true", "enabled": False},
        }
    }
    (api.settings.data_dir / "servers.json").write_text(json.dumps(config), encoding="utf-8")
    with api.container() as container:
        container.store.put_discovery(
            [
                DiscoveryStatus(
                    server="weather",
                    state="failed",
                    error="the server exited at once (exit status 1)",
                    last_attempt_at="2026-11-26T08:00:00Z",
                )
            ]
        )


def test_the_servers_overview_gives_each_server_its_status_counts_and_error(api: RunningApi) -> None:
    _configure(api)
    with api.client("viewer") as viewer:
        overview = _ok(viewer.get(f"{V1}/overview/servers"))
    by_name = {s["name"]: s for s in overview["servers"]}
    assert set(by_name) == {"time", "fetch", "git", "everything", "filesystem", "memory"} | {
        "sequential-thinking",
        "weather",
        "notes",
    }
    assert by_name["git"]["status"] == "catalog" and by_name["git"]["configured"] is False
    assert by_name["git"]["tool_count"] == 12 and by_name["git"]["enabled"] is None
    weather = by_name["weather"]
    assert (weather["status"], weather["configured"], weather["enabled"], weather["transport"]) == (
        "failed",
        True,
        True,
        "stdio",
    )
    assert "exited at once" in weather["error"] and weather["tool_count"] == 0
    assert by_name["notes"]["status"] == "disabled"
    assert overview["counts"] == {"catalog": 7, "failed": 1, "disabled": 1}


def test_switching_a_configured_server_needs_the_edit_scope_and_is_audited(api: RunningApi) -> None:
    _configure(api)
    with api.client("viewer") as viewer:
        error = _refused(
            viewer.put(f"{V1}/config/servers/notes/enabled", json={"enabled": True}), 403, "forbidden"
        )
        assert error["details"]["scope"] == "edit"
    with api.client("editor") as editor:
        switched = _ok(editor.put(f"{V1}/config/servers/notes/enabled", json={"enabled": True}))
        assert (switched["name"], switched["enabled"], switched["status"]) == ("notes", True, "pending")
        off = _ok(editor.put(f"{V1}/config/servers/weather/enabled", json={"enabled": False}))
        assert off["status"] == "disabled" and off["error"] == ""
        missing = _refused(
            editor.put(f"{V1}/config/servers/git/enabled", json={"enabled": True}), 404, "not_found"
        )
        assert "git" in missing["message"]
        _refused(
            editor.put(f"{V1}/config/servers/notes/enabled", json={"enabled": "yes please"}),
            422,
            "invalid_input",
        )
    saved = json.loads((api.settings.data_dir / "servers.json").read_text())["mcpServers"]
    assert saved["notes"].get("enabled", True) is True and saved["weather"]["enabled"] is False
    with api.client("admin") as admin:
        actions = [(r["action"], r["target"]) for r in _ok(admin.get(f"{V1}/audit", params={"limit": 5}))]
    assert actions[:2] == [("config.disable", "config:weather"), ("config.enable", "config:notes")]


def test_tools_are_browsed_by_page_text_server_and_state(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        first = _ok(viewer.get(f"{V1}/tools", params={"limit": 20}))
        second = _ok(viewer.get(f"{V1}/tools", params={"limit": 20, "offset": 20}))
        rest = _ok(viewer.get(f"{V1}/tools", params={"limit": 500, "offset": 40}))
        ids = [t["id"] for page in (first, second, rest) for t in page["tools"]]
        assert first["total"] == 52 and len(ids) == 52 and len(set(ids)) == 52
        assert ids == sorted(ids, key=lambda i: (i.rpartition("::")[0], i.rpartition("::")[2]))
        row = next(t for t in first["tools"] if t["id"] == "fetch::fetch")
        assert (row["enrichment"], row["approval"]) == ("current", "approved") and len(
            row["content_hash"]
        ) == 64
        git = _ok(viewer.get(f"{V1}/tools", params={"server": "git"}))
        assert git["total"] == 12 and {t["server"] for t in git["tools"]} == {"git"}
        commit = _ok(viewer.get(f"{V1}/tools", params={"q": "COMMIT"}))
        assert "git::git_commit" in [t["id"] for t in commit["tools"]] and commit["total"] < 52
        literal = _ok(viewer.get(f"{V1}/tools", params={"q": "%"}))  # a wildcard character is text here
        assert all("%" in t["name"] + t["description"] + t["server"] for t in literal["tools"])
        assert _ok(viewer.get(f"{V1}/tools", params={"state": "held"}))["total"] == 0
        _refused(viewer.get(f"{V1}/tools", params={"state": "lost"}), 422, "invalid_input")
    with api.client("contributor") as contributor:  # a registered tool waits for approval
        contributor.post(f"{V1}/servers", json={"name": "skies"}).raise_for_status()
        made = contributor.post(
            f"{V1}/tools",
            json={
                "server": "skies",
                "name": "forecast",
                "description": "Ten-day forecast.",
                "matching_mode": "force_create",
            },
        )
        assert made.status_code == 201, made.text
    with api.client("viewer") as viewer:
        held = _ok(viewer.get(f"{V1}/tools", params={"state": "held"}))
        assert [t["id"] for t in held["tools"]] == ["skies::forecast"] and held["tools"][0][
            "approval"
        ] == "held"
        detail = _ok(viewer.get(f"{V1}/enrichment/tool/skies::forecast"))
        assert detail["approval"]["state"] == "held" and len(detail["approval"]["quarantine"]) == 1
        entry = _ok(viewer.get(f"{V1}/quarantine"))[0]["id"]
        assert detail["approval"]["quarantine"] == [entry]


def test_one_tool_shows_its_definition_enrichment_profile_and_pinned_hash(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        detail = _ok(viewer.get(f"{V1}/enrichment/tool/git::git_commit"))
        missing = _refused(viewer.get(f"{V1}/enrichment/tool/git::no_such_tool"), 404, "not_found")
    assert detail["tool"]["tool_id"] == "git::git_commit" and detail["definition"]["name"] == "git_commit"
    assert detail["definition"]["description"] == detail["tool"]["description"]
    assert detail["enrichment_state"] == "current"
    enrichment = detail["enrichment"]
    assert enrichment["tool_hash"] == detail["tool"]["content_hash"] and enrichment["action_entities"]
    assert detail["profile"]["server_name"] == "git"
    approval = detail["approval"]
    assert approval["state"] == "approved" and approval["quarantine"] == []
    assert approval["pinned_hash"] == approval["definition_hash"]
    assert "git::no_such_tool" in missing["message"]


def test_jobs_are_listed_newest_first_filtered_and_paged(api: RunningApi) -> None:
    with api.client("editor") as editor:
        started = [editor.post(f"{V1}/enrichment/sync").json()["job"]["id"] for _ in range(2)]
    with api.client("viewer") as viewer:
        for job_id in started:  # wait for both (polled: they run in the server's job thread)
            for _ in range(600):
                if _ok(viewer.get(f"{V1}/jobs/{job_id}"))["state"] not in ("queued", "running"):
                    break
                threading.Event().wait(0.1)
        listed = _ok(viewer.get(f"{V1}/jobs"))
        assert listed["total"] == 2 and [j["id"] for j in listed["jobs"]] == started[::-1]
        assert all(j["kind"] == "sync" and j["progress"] is None for j in listed["jobs"])
        page = _ok(viewer.get(f"{V1}/jobs", params={"limit": 1, "offset": 1}))
        assert [j["id"] for j in page["jobs"]] == [started[0]] and page["total"] == 2
        assert _ok(viewer.get(f"{V1}/jobs", params={"kind": "import"}))["total"] == 0
        state = listed["jobs"][0]["state"]
        assert _ok(viewer.get(f"{V1}/jobs", params={"state": state}))["total"] >= 1
    with api.client("only:import") as importer:
        _refused(importer.get(f"{V1}/jobs"), 403, "forbidden")


def test_a_running_job_shows_its_progress_in_its_own_process(api: RunningApi) -> None:
    release, reported = threading.Event(), threading.Event()

    def work(progress: Any) -> JobProgress:  # any model does as a result
        progress("enrich", 3, 7)
        reported.set()
        release.wait(60)
        return JobProgress(phase="done", done=7, total=7)

    with api.container() as container:
        runner = JobRunner(container)
        try:
            job = runner.submit("sync", "test", work)
            assert reported.wait(60)
            running = runner.get(job.id)
            assert running.state == "running" and running.progress is not None
            assert (running.progress.phase, running.progress.done, running.progress.total) == ("enrich", 3, 7)
            with api.container() as other:  # another API process on the folder reads the stored progress
                seen = admin.get_job(other.store, job.id).progress
                assert seen is not None and (seen.phase, seen.done, seen.total) == ("enrich", 3, 7)
            release.set()
            finished = runner.wait(job.id, timeout=60)
            assert finished.state == "succeeded" and finished.progress is None
            with api.container() as other:
                assert admin.get_job(other.store, job.id).progress is None
        finally:
            release.set()
            runner.close()


def test_progress_is_not_stored_while_another_writer_holds_the_database(api: RunningApi) -> None:
    """A job's progress waits for no one: with a write transaction open elsewhere it is skipped."""
    with api.container() as container:
        runner = JobRunner(container)
        try:
            job = runner.submit("sync", "test", lambda progress: JobProgress(phase="done", done=1, total=1))
            runner.wait(job.id, timeout=60)
        finally:
            runner.close()
    running = job.model_copy(update={"state": "running"})
    with api.container() as container:
        admin.put_job(container.store, running)
        progress = JobProgress(phase="embed", done=1, total=2)
        holder = sqlite3.connect(str(api.settings.db_path), isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            assert admin.record_progress(api.settings.db_path, job.id, progress) is False
            holder.execute("ROLLBACK")
        finally:
            holder.close()
        assert admin.get_job(container.store, job.id).progress is None
        assert admin.record_progress(api.settings.db_path, job.id, progress) is True
        assert admin.get_job(container.store, job.id).progress == progress


def _write_report(folder: Path, name: str) -> None:
    queries = [
        Query(id="a", query="q a", gold_servers=["s"], gold_tools=["s::x"], gold_tool_groups=[["s::x"]]),
        Query(id="b", query="q b", gold_servers=["s"], gold_tools=["s::y"], gold_tool_groups=[["s::y"]]),
    ]
    predictions = [
        Prediction.model_validate(
            {
                "id": q.id,
                "servers": [{"name": "s", "score": 1.0}],
                "tools": [{"id": tool, "score": 1.0}],
                "tier": "activated",
                "confidence": 0.8,
                "latency_ms": 5.0,
            }
        )
        for q, tool in zip(queries, ("s::x", "s::z"), strict=True)
    ]
    write_report_files(
        evaluate(queries, predictions), folder / f"{name}.md", title=name, settings_summary={"alpha": 0.5}
    )


def test_eval_reports_are_listed_read_and_their_diagram_served(api: RunningApi) -> None:
    folder = api.settings.reports_path
    with api.client("viewer") as viewer:
        assert _ok(viewer.get(f"{V1}/eval/reports")) == []
        _write_report(folder, "nightly")
        (folder / "old.md").write_text("# An old report\n\n| group | R@5 |\n", encoding="utf-8")
        (folder / "notes.txt").write_text("not a report", encoding="utf-8")
        listed = _ok(viewer.get(f"{V1}/eval/reports"))
        by_name = {r["name"]: r for r in listed}
        assert set(by_name) == {"nightly", "old"}
        nightly = by_name["nightly"]
        assert nightly["has_diagram"] and nightly["has_figures"] and nightly["title"] == "nightly"
        assert (
            nightly["summary"]["all"]["tool_recall_at_1"] == 0.5 and nightly["summary"]["all"]["count"] == 2
        )
        assert by_name["old"]["title"] == "An old report" and not by_name["old"]["has_figures"]
        report = _ok(viewer.get(f"{V1}/eval/reports/nightly"))
        assert report["markdown"].startswith("# nightly") and report["settings"] == {"alpha": 0.5}
        assert report["groups"]["all"]["server_recall_at_1"] == 1.0
        diagram = viewer.get(f"{V1}/eval/reports/nightly/diagram")
        assert diagram.status_code == 200 and diagram.headers["content-type"] == "image/png"
        assert diagram.content.startswith(b"\x89PNG")
        for path in ("nightly2", "..%2Fcatalog", "notes"):
            _refused(viewer.get(f"{V1}/eval/reports/{path}"), 404, "not_found")
        _refused(viewer.get(f"{V1}/eval/reports/old/diagram"), 404, "not_found")
    with api.client("only:write") as writer:
        _refused(writer.get(f"{V1}/eval/reports"), 403, "forbidden")


def test_the_console_page_is_served_with_a_strict_policy_and_no_key(api: RunningApi) -> None:
    with api.client(None) as anonymous:
        page = anonymous.get("/ui")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'self'" in policy and "unsafe" not in policy
        assert anonymous.get("/ui/", follow_redirects=False).status_code == 308
        assert anonymous.get("/ui/static/no-such-file.js").status_code == 404
