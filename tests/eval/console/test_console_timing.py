"""How fast the console opens and answers on the msc catalog (491 servers, 2,375 tools), measured in a
real headless Chromium against a real ``tool-selector api`` process (tests/support/console_site.py).

The figures are printed in the terminal summary ("console figures"), never asserted: a timed test
fails on a busy machine and passes on a quiet one. What is asserted is that the page counted every
server and drew their table, and that each request got an answer with a tier. The measurements
(eval/console/screens.py):

- first load: a signed-in tab opens /ui in a fresh browser context (empty cache) of a browser that has
  made one navigation before: navigation start -> the first row of the servers table in the document
  (after the page's files, whoami and the servers overview); three loads, each in a new context, with
  the load event and the API calls beside them;
- playground: click on Resolve -> the answer's tier in the document, for requests written here (none
  is a benchmark query), after one warm-up request that loads the API's model run.
"""

from __future__ import annotations

import json
import statistics
from typing import TYPE_CHECKING

import httpx
import pytest

from eval.console.screens import (
    FIRST_ROWS,
    REQUESTS,
    WARM_UP,
    Answer,
    FirstLoad,
    first_load,
    resolve_in_playground,
    show,
    sign_in,
    warm_browser,
)
from tests.support.console_site import ConsoleSite, record_console_figures

if TYPE_CHECKING:  # Playwright is imported where a browser runs: without it the test skips, visibly
    from playwright.sync_api import Browser, Page

LOADS = 5  # first loads, each in a fresh context
TIERS = {"activated", "multiple_matches", "weak_matches", "not_found"}
# short requests of our own, never seen by the API process before this test
MORE_REQUESTS = (
    "post a message to the team's chat channel",
    "find hotels in Lisbon for next weekend",
    "open an issue in the repository about the failing build",
)


def test_the_console_opens_and_answers_in_the_playground_on_the_msc_catalog(
    browser: Browser, msc_site: ConsoleSite, browser_page: Page, request: pytest.FixtureRequest
) -> None:
    from playwright.sync_api import expect

    site, key = msc_site, msc_site.keys["viewer"]
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=site.url, headers=headers, timeout=60) as client:
        servers = client.get("/api/v1/overview/servers").json()["servers"]
    assert len(servers) > 490

    warm_browser(browser, site.url)
    loads = [first_load(browser, site.url, key) for _ in range(LOADS)]
    assert all(load.rows_ms > 0 for load in loads)
    assert {"/api/v1/whoami", "/api/v1/overview/servers"} <= set(loads[0].calls)

    page = browser_page
    sign_in(page, site.url, key)
    expect(page.get_by_text(f"{len(servers)} of {len(servers)} servers")).to_be_visible()  # all of them
    expect(page.locator(FIRST_ROWS)).not_to_have_count(0)
    show(page, "playground", "playground")
    warm_up = resolve_in_playground(page, WARM_UP)
    answers = [resolve_in_playground(page, text) for text in (*REQUESTS, *MORE_REQUESTS)]
    assert {a.tier for a in [warm_up, *answers]} <= TIERS
    expect(page.locator("table.ranked-tools tbody tr")).not_to_have_count(0)

    record_console_figures(request, _figures(len(servers), loads, warm_up, answers))


def _figures(servers: int, loads: list[FirstLoad], warm_up: Answer, answers: list[Answer]) -> str:
    rows = [round(load.rows_ms) for load in loads]
    events = [round(load.load_event_ms) for load in loads]
    calls = {name: [round(ms) for ms in span] for name, span in loads[-1].calls.items()}
    answered = statistics.median(a.ms for a in answers)
    return "\n".join(
        [
            f"  msc catalog: {servers} servers; the API process on loopback, Chromium headless",
            f"  first load of /ui (navigation start -> servers table shown), {len(rows)} fresh contexts: "
            f"{rows} ms "
            f"(median {statistics.median(rows):.0f}); load event {events} ms",
            f"  API calls of the last load (start, end ms): {json.dumps(calls)}",
            f"  playground (click -> tier shown): median {answered:.0f} ms over {len(answers)} requests; "
            f"warm-up {warm_up.ms:.0f} ms",
            *(f"    {a.ms:6.0f} ms  {a.tier:<16} {a.request}" for a in answers),
        ]
    )
