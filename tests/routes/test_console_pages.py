"""The operator console (/ui) in a real browser against a real ``tool-selector api`` process on a seeded
data folder (tests/support/console_site.py): sign-in, each page with its data, each action done with a
key that has its scope and shown disabled, with the scope it needs, for a key that lacks it; keyboard.

What the page shows is checked against what the REST API answers the same key, so that a page that
draws nothing, or something else, fails.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect

from tests.support.console_site import ConsoleSite

V1 = "/api/v1"
SYNC_S = 120_000  # ms: a sync of the seeded servers (one real MCP server started) on a busy machine


def _client(site: ConsoleSite, role: str) -> httpx.Client:
    return httpx.Client(base_url=site.url, headers={"Authorization": f"Bearer {site.keys[role]}"}, timeout=60)


def _get(site: ConsoleSite, role: str, path: str, **params: Any) -> Any:
    with _client(site, role) as client:
        response = client.get(V1 + path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _sign_in(page: Page, site: ConsoleSite, role: str, route: str = "servers") -> None:
    page.goto(f"{site.url}/ui#/{route}")
    page.get_by_label("API key", exact=True).fill(site.keys[role])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.locator("#page h1")).to_be_visible()


def _go(page: Page, site: ConsoleSite, route: str) -> None:
    page.goto(f"{site.url}/ui#/{route}")
    expect(page.locator("#page h1")).to_be_visible()


def _row(page: Page, attribute: str, value: str) -> Locator:
    return page.locator(f"tr[data-{attribute}={json.dumps(value)}]")


# -- sign-in ---------------------------------------------------------------------------------------------


def test_a_wrong_key_is_refused_with_the_apis_words_and_sign_out_forgets_the_key(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    with httpx.Client(base_url=site.url, headers={"Authorization": "Bearer tsk_wrong_key"}) as client:
        refusal = client.get(f"{V1}/whoami").json()["error"]
    page.goto(f"{site.url}/ui")
    page.get_by_label("API key", exact=True).fill("tsk_wrong_key")
    page.get_by_role("button", name="Sign in").click()
    alert = page.locator("#sign-in-error")
    expect(alert).to_contain_text(refusal["message"])
    expect(alert).to_contain_text(refusal["hint"])
    expect(page.get_by_role("navigation", name="Pages")).to_be_hidden()
    assert page.evaluate("sessionStorage.length") == 0
    # the refusal is the browser's one expected network error; any other console error still fails
    refused = [e for e in browser_page.console_errors if "status of 401" in e]
    assert len(refused) == 1, browser_page.console_errors
    browser_page.console_errors.remove(refused[0])

    page.get_by_label("API key", exact=True).fill(site.keys["viewer"])
    page.get_by_label("API key", exact=True).press("Enter")
    me = _get(site, "viewer", "/whoami")
    expect(page.locator("#who-actor")).to_have_text(me["actor"])
    expect(page.locator("#who-scopes")).to_contain_text("read")
    assert page.evaluate("Object.values(sessionStorage)") == [site.keys["viewer"]]
    page.reload()  # the key lives as long as the tab's session
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key", exact=True)).to_be_visible()
    expect(page.get_by_role("navigation", name="Pages")).to_be_hidden()
    assert page.evaluate("sessionStorage.length") == 0
    page.reload()
    expect(page.get_by_label("API key", exact=True)).to_be_visible()


# -- servers ---------------------------------------------------------------------------------------------


def test_the_servers_page_shows_every_state_and_an_editor_switches_a_server_off_and_on(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    overview = _get(site, "editor", "/overview/servers")
    _sign_in(page, site, "editor")
    for state in ("ok", "failed", "disabled", "catalog"):
        row = _row(page, "server", site.servers[state])
        expect(row.locator(".badge").first).to_have_text(state)
    failed = next(s for s in overview["servers"] if s["name"] == site.servers["failed"])
    expect(_row(page, "server", site.servers["failed"])).to_contain_text(failed["error"][:60])
    expect(
        page.get_by_text(f"{len(overview['servers'])} of {len(overview['servers'])} servers")
    ).to_be_visible()
    catalog = next(s for s in overview["servers"] if s["name"] == site.servers["catalog"])
    expect(_row(page, "server", catalog["name"]).locator("td.n").first).to_have_text(
        str(catalog["tool_count"])
    )
    expect(_row(page, "server", catalog["name"]).get_by_role("button")).to_have_count(0)  # nothing to switch

    name = site.servers["ok"]
    page.get_by_role("button", name=f"Disable {name}").click()
    expect(_row(page, "server", name).locator(".badge").first).to_have_text("disabled")
    expect(page.locator("#flash")).to_contain_text(f"{name} is disabled")
    assert (
        _get(site, "editor", "/overview/servers")["counts"]["disabled"] == overview["counts"]["disabled"] + 1
    )
    page.get_by_role("button", name=f"Enable {name}").click()
    expect(_row(page, "server", name).locator(".badge").first).to_have_text("ok")
    assert next(s for s in _get(site, "editor", "/overview/servers")["servers"] if s["name"] == name)[
        "enabled"
    ]

    page.get_by_label("State", exact=True).select_option("failed")  # the page's own filter
    expect(page.locator("table.servers tbody tr")).to_have_count(overview["counts"]["failed"])
    assert "state=failed" in page.url

    _go(page, site, "servers?limit=5")  # a registry's servers come a few rows at a time
    rows = page.locator("table.servers tbody tr")
    expect(rows).to_have_count(5)
    hidden = len(overview["servers"]) - 5
    page.get_by_role("button", name=f"Show 5 more ({hidden} not shown)").click()
    expect(rows).to_have_count(10)
    expect(rows.nth(5).get_by_role("link")).to_be_focused()


def test_a_sync_started_on_the_servers_page_shows_its_progress_and_its_end(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    _sign_in(page, site, "editor")
    page.get_by_role("button", name="Start sync").click()
    panel = page.get_by_role("region", name="Sync job")
    expect(panel.locator(".badge-running")).to_be_visible(timeout=SYNC_S)
    expect(page.get_by_role("button", name="Start sync")).to_be_disabled()
    expect(panel.locator(".job-end")).to_be_visible(timeout=SYNC_S)
    job_id = panel.get_attribute("data-job")
    assert job_id
    job = _get(site, "editor", f"/jobs/{job_id}")
    assert job["state"] == "succeeded" and job["created_by"] == _get(site, "editor", "/whoami")["actor"]
    expect(panel.locator(".badge").first).to_have_text("succeeded")
    expect(panel).to_contain_text(f"{job['result']['servers_seen']} servers answered")
    expect(page.get_by_role("button", name="Start sync")).to_be_enabled()


# -- what a key without the scope sees -------------------------------------------------------------------


def test_a_viewer_sees_each_action_it_lacks_disabled_with_the_scope_it_needs(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    _sign_in(page, site, "viewer")
    for button in (
        page.get_by_role("button", name="Start sync"),
        page.get_by_role("button", name=f"Disable {site.servers['ok']}"),
        page.get_by_role("button", name=f"Enable {site.servers['disabled']}"),
    ):
        expect(button).to_be_disabled()
        expect(button).to_have_attribute("title", re.compile(r"^needs the edit scope"))
    expect(page.locator(".note[data-needs=edit]")).to_be_visible()

    _go(page, site, f"quarantine/{site.held_entry_id}")
    for name in ("Approve", "Reject"):
        expect(page.get_by_role("button", name=name)).to_be_disabled()
        expect(page.get_by_role("button", name=name)).to_have_attribute(
            "title", re.compile("needs the approve scope")
        )

    _go(page, site, "audit")
    expect(page.get_by_role("button", name="Apply filters")).to_have_attribute(
        "title", re.compile("needs the admin scope")
    )
    expect(page.locator(".note[data-needs=admin]")).to_contain_text("needs the admin scope")
    expect(page.locator("table.audit")).to_have_count(0)  # the page never asked: no refused call


# -- tools -----------------------------------------------------------------------------------------------


def test_the_tools_page_searches_filters_pages_and_shows_a_tool_beside_its_enrichment(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    total = _get(site, "viewer", "/tools", limit=1)["total"]
    assert total > 50
    _sign_in(page, site, "viewer", "tools")
    expect(page.get_by_text(f"1–50 of {total} tools")).to_be_visible()
    expect(page.locator("table.tools tbody tr")).to_have_count(50)
    page.get_by_role("button", name="Next page").click()
    expect(page.get_by_text(f"51–{min(100, total)} of {total} tools")).to_be_visible()

    held = _get(site, "viewer", "/tools", state="held")
    page.get_by_label("State", exact=True).select_option("held")
    if held["total"]:
        expect(page.locator("table.tools tbody tr")).to_have_count(held["total"])
        expect(page.locator("table.tools .badge-held")).to_have_count(held["total"])
    else:
        expect(page.get_by_text("No tools match.")).to_be_visible()
    page.get_by_label("State", exact=True).select_option("")

    server = site.servers["catalog"]
    page.get_by_label("Server", exact=True).select_option(server)
    listed = _get(site, "viewer", "/tools", server=server)
    expect(page.get_by_text(f"1–{listed['total']} of {listed['total']} tools")).to_be_visible()
    tool = listed["tools"][1]
    page.get_by_label("Search tools", exact=True).fill(tool["name"])
    page.get_by_role("button", name="Search").click()
    expect(page.locator("table.tools tbody tr").first).to_contain_text(tool["name"])
    assert "q=" in page.url and "server=" in page.url

    page.get_by_role("link", name=tool["name"], exact=True).click()
    detail = _get(site, "viewer", f"/enrichment/tool/{tool['id']}")
    assert detail["enrichment"] and detail["enrichment"]["action_entities"]
    expect(page.locator("#page h1")).to_have_text(tool["name"])
    expect(page.get_by_text(detail["tool"]["content_hash"], exact=True)).to_be_visible()
    expect(page.locator(".facts .badge").first).to_have_text(detail["approval"]["state"])
    definition = page.get_by_role("region", name="Original definition")
    expect(definition).to_contain_text(detail["definition"]["description"])
    enrichment = page.get_by_role("region", name="Enrichment")
    pairs = enrichment.locator("ul.chips").first.locator("li")
    expect(pairs).to_have_text(detail["enrichment"]["action_entities"])
    expect(enrichment).to_contain_text(detail["enrichment"]["use_cases"][0])
    expect(enrichment).to_contain_text(detail["profile"]["domain"])


# -- quarantine ------------------------------------------------------------------------------------------


def _hold_a_new_tool(site: ConsoleSite) -> str:
    """A tool registered through the API on an approved server is held: a second pending entry."""
    body = {"server": site.servers["catalog"], "name": "console_extra", "description": "Lists <b>orders</b>."}
    with _client(site, "admin") as client:
        made = client.post(f"{V1}/tools", json=body)
    assert made.status_code == 201 and made.json()["held"], made.text
    entries = _get(site, "viewer", "/quarantine", server=site.servers["catalog"])
    return next(e["id"] for e in entries if e["tool_id"].endswith("::console_extra"))


def test_an_approver_reads_the_diff_and_reasons_then_rejects_one_entry_and_approves_another(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    extra = _hold_a_new_tool(site)
    _sign_in(page, site, "approver", "quarantine")
    pending = _get(site, "approver", "/quarantine")
    expect(page.locator("table.quarantine tbody tr")).to_have_count(len(pending))

    page.get_by_role("link", name=re.compile(f"^Review {extra}")).click()
    expect(page.locator("#page h1")).to_contain_text("console_extra")
    expect(page.locator("pre.diff .line.del")).to_have_count(0)  # a new tool: nothing approved before it
    expect(page.locator("pre.diff")).to_contain_text("Lists <b>orders</b>.")  # its text, never its markup
    expect(page.locator("pre.diff b")).to_have_count(0)
    page.get_by_label("Note for the audit log", exact=True).fill("not ours")
    page.get_by_role("button", name="Reject").click()
    expect(page.locator(".decision .badge")).to_have_text("rejected")
    expect(page.get_by_role("button", name="Reject")).to_be_disabled()
    rejected = _get(site, "approver", f"/quarantine/{extra}")["entry"]
    assert rejected["state"] == "rejected" and rejected["decided_by"]

    _go(page, site, f"quarantine/{site.held_entry_id}")
    shown = _get(site, "approver", f"/quarantine/{site.held_entry_id}")
    expect(page.locator("pre.diff .line.del")).not_to_have_count(0)
    expect(page.locator("pre.diff .line.add")).not_to_have_count(0)
    added = [
        line[1:] for line in shown["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")
    ]
    expect(page.locator("pre.diff .line.add").first).to_contain_text(added[0].strip())
    expect(page.locator(".reasons li")).to_have_text(shown["entry"]["reasons"])
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(".decision .badge")).to_have_text("approved")
    expect(page.get_by_role("button", name="Approve")).to_be_disabled()
    expect(page.locator("#flash")).to_contain_text("approved")
    assert _get(site, "approver", f"/quarantine/{site.held_entry_id}")["entry"]["state"] == "approved"

    page.get_by_role("link", name=shown["entry"]["tool_id"]).click()  # the tool, now approved
    expect(page.locator(".facts .badge").first).to_have_text("approved")


# -- playground ------------------------------------------------------------------------------------------


def test_the_playground_answers_with_tier_confidence_ranked_candidates_and_the_resolve_intent_json(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    query = "what time is it in Tokyo right now"
    with _client(site, "viewer") as client:
        intent = client.post(f"{V1}/resolve", json={"query": query, "limit": 10}).json()
        explained = client.post(f"{V1}/resolve", json={"query": query, "limit": 10, "explain": True}).json()
    _sign_in(page, site, "viewer", "playground")
    page.get_by_label("Request", exact=True).fill(query)
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator(".verdict .badge")).to_have_text(intent["status"])
    expect(page.locator(".verdict .confidence")).to_have_text(
        f"{round(intent['confidence'] * 1000) / 10:g} %"
    )
    expect(page.locator(".verdict .message")).to_have_text(intent["message"])
    powers = explained["resolution"]["powers"]
    expect(page.locator("table.powers tbody tr")).to_have_count(len(powers))
    expect(page.locator("table.powers tbody tr").first).to_contain_text(powers[0]["name"])
    expect(page.locator("table.powers tbody tr").first).to_contain_text(f"{powers[0]['score']:.3f}")
    tools = explained["resolution"]["tools"]
    expect(page.locator("table.ranked-tools tbody tr").first).to_contain_text(tools[0]["name"])
    expect(page.locator("table.ranked-tools tbody tr").first.locator(".badge")).to_have_text(
        tools[0]["match_type"]
    )

    page.get_by_role("button", name="Show resolve_intent JSON").click()
    shown = json.loads(page.locator("#pg-json pre").inner_text())
    assert shown == {k: v for k, v in intent.items() if k != "resolution"}  # no ranked candidates
    expect(page.get_by_role("button", name="Hide resolve_intent JSON")).to_have_attribute(
        "aria-expanded", "true"
    )


# -- audit and jobs --------------------------------------------------------------------------------------


def test_the_audit_log_pages_to_older_records_and_filters_by_actor(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    newest = _get(site, "admin", "/audit", limit=6)
    assert len(newest) == 6
    _sign_in(page, site, "admin", "audit?limit=3")
    rows = page.locator("table.audit tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.first).to_have_attribute("data-seq", str(newest[0]["seq"]))
    page.get_by_role("button", name="Older").click()
    expect(rows.first).to_have_attribute("data-seq", str(newest[3]["seq"]))
    expect(rows.first).to_contain_text(newest[3]["action"])
    page.get_by_role("button", name="Newer").click()
    expect(rows.first).to_have_attribute("data-seq", str(newest[0]["seq"]))

    actor = newest[-1]["actor"]
    by_actor = _get(site, "admin", "/audit", actor=actor, limit=100)
    page.get_by_label("Actor", exact=True).fill(actor)
    page.get_by_label("Per page", exact=True).select_option("100")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(len(by_actor))
    expect(rows.locator("td:nth-child(3)")).to_have_text([actor] * len(by_actor))


def test_the_jobs_page_pages_and_filters_by_kind_and_state(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    with _client(site, "editor") as client:
        accepted = client.post(f"{V1}/catalog/import", json={"servers": [{"name": "console jobs test"}]})
    assert accepted.status_code == 202, accepted.text
    every = _get(site, "viewer", "/jobs", limit=100)
    assert every["total"] >= 2
    _sign_in(page, site, "viewer", "jobs?limit=1")
    expect(page.get_by_text(f"1–1 of {every['total']}")).to_be_visible()
    expect(page.locator("table.jobs tbody tr")).to_have_attribute("data-job", every["jobs"][0]["id"])
    expect(page.get_by_role("button", name="Previous page")).to_be_disabled()
    page.get_by_role("button", name="Next page").click()
    expect(page.locator("table.jobs tbody tr")).to_have_attribute("data-job", every["jobs"][1]["id"])

    page.get_by_label("Per page", exact=True).select_option("100")
    page.get_by_label("Kind", exact=True).select_option("sync")
    syncs = _get(site, "viewer", "/jobs", kind="sync", limit=100)
    expect(page.locator("table.jobs tbody tr")).to_have_count(syncs["total"])
    expect(page.locator("table.jobs tbody tr td:nth-child(2)")).to_have_text(["sync"] * syncs["total"])
    page.get_by_label("Kind", exact=True).select_option("")
    page.get_by_label("State", exact=True).select_option("failed")
    failed = _get(site, "viewer", "/jobs", state="failed")["total"]
    if failed:
        expect(page.locator("table.jobs .badge-failed")).to_have_count(failed)
    else:
        expect(page.get_by_text("No jobs match.")).to_be_visible()
    assert "state=failed" in page.url


# -- evaluation ------------------------------------------------------------------------------------------


def test_the_evaluation_page_lists_the_report_and_shows_its_tables_and_diagram(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    listed = next(r for r in _get(site, "viewer", "/eval/reports") if r["name"] == site.report_name)
    report = _get(site, "viewer", f"/eval/reports/{site.report_name}")
    _sign_in(page, site, "viewer", "eval")
    page.get_by_role("link", name=listed["title"]).click()
    expect(page.locator("#page h1")).to_have_text(report["title"])
    group, figures = next(iter(report["groups"].items()))
    recall = page.locator("table.recall tbody tr").first
    expect(recall.locator("td").first).to_have_text(group)
    expect(recall).to_contain_text(f"{figures['tool_recall_at_5']:.3f}")
    expect(page.locator("table.routing tbody tr").first).to_contain_text(f"{figures['ece']:.3f}")
    diagram = page.get_by_role("img", name=re.compile("Reliability diagram"))
    expect(diagram).to_be_visible()
    assert str(diagram.get_attribute("src")).startswith("blob:")
    assert diagram.evaluate("img => img.complete && img.naturalWidth > 100")
    page.get_by_text("The report as written (markdown)").click()
    expect(page.locator("details.markdown pre")).to_contain_text(report["markdown"].splitlines()[0])


# -- keyboard --------------------------------------------------------------------------------------------


def _focused(page: Page) -> str:
    return str(page.evaluate("document.activeElement ? document.activeElement.textContent.trim() : ''"))


def test_the_keyboard_reaches_the_skip_link_the_navigation_and_the_main_actions(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    page, site = browser_page, console_site
    page.goto(f"{site.url}/ui")
    expect(page.get_by_label("API key", exact=True)).to_be_focused()
    page.keyboard.type(site.keys["editor"])
    page.keyboard.press("Enter")
    expect(page.locator("#page h1")).to_have_text("Servers")
    page.keyboard.press("Tab")  # signed in, the focus is on the page: its first action comes next
    assert _focused(page) == "Start sync"

    page.reload()  # from the top of the page
    expect(page.locator("#page h1")).to_have_text("Servers")
    seen = []
    for _ in range(12):
        page.keyboard.press("Tab")
        seen.append(_focused(page))
        if seen[-1] == "Start sync":
            break
    nav = ["Servers", "Tools", "Quarantine", "Playground", "Audit", "Memory", "Jobs", "Evaluation"]
    assert seen == ["Skip to content", *nav, "Sign out", "Start sync"]
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus is visible

    for _ in range(8):  # back past Sign out and the links from Evaluation to Tools
        page.keyboard.press("Shift+Tab")
    assert _focused(page) == "Tools"
    page.keyboard.press("Enter")
    expect(page.locator("#page h1")).to_be_focused()
    expect(page.locator("#page h1")).to_have_text("Tools")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Search tools", exact=True)).to_be_focused()

    page.reload()
    expect(page.locator("#page h1")).to_have_text("Tools")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")  # straight to the page's heading, past the navigation
    expect(page.locator("#page h1")).to_be_focused()


def test_an_admin_forgets_one_remembered_choice_then_all_and_a_viewer_cannot(
    console_site: ConsoleSite, browser_page: Page
) -> None:
    import numpy as np

    from tool_selector.catalog import memory as rows
    from tool_selector.catalog.store import CatalogStore

    page, site = browser_page, console_site
    with CatalogStore(site.data_dir / "catalog.db") as store:
        ids = [
            rows.remember(
                store.database,
                request_hash=f"console-{i}",
                power="time",
                tool="get_current_time",
                tools_hash="x",
                model="m",
                vector=np.full(4, 0.5, np.float32),
                request="what time is it in Lima" if i else None,
            )
            for i in range(2)
        ]
    listed = _get(site, "admin", "/memory")
    assert {c["id"] for c in listed} >= set(ids)
    _sign_in(page, site, "admin", "memory")
    rows = page.locator("table.memory tbody tr")
    expect(rows).to_have_count(len(listed))
    expect(_row(page, "choice", str(ids[1]))).to_contain_text("what time is it in Lima")
    expect(_row(page, "choice", str(ids[0]))).to_contain_text("(words not kept)")
    expect(_row(page, "choice", str(ids[0]))).to_contain_text("local")  # whose: the person over stdio
    page.get_by_role("button", name=f"Forget choice {ids[0]} (time)").click()
    expect(rows).to_have_count(len(listed) - 1)
    assert ids[0] not in {c["id"] for c in _get(site, "admin", "/memory")}
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Forget everything").click()
    expect(page.get_by_text("Nothing remembered yet")).to_be_visible()
    assert _get(site, "admin", "/memory") == []
    actions = [r["action"] for r in _get(site, "admin", "/audit", limit=5)]
    assert actions[:2] == ["memory.clear", "memory.forget"]

    page.get_by_role("button", name="Sign out").click()
    _sign_in(page, site, "viewer", "memory")
    expect(page.locator('p.note[data-needs="admin"]')).to_contain_text("The memory is closed")
    expect(page.locator("table.memory")).to_have_count(0)
