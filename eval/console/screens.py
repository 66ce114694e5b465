"""``tool-selector lab ui-screenshots``: the operator console in a real headless Chromium, one PNG per page
at 1280x800 and 390x844, and two timings: the first load of /ui and the playground's answer.

The browser is the system's Chromium (Debian's ``chromium`` package) driven by Playwright for Python;
``playwright install`` (a browser download) is never used. The console's browser tests share this
module's pieces: finding the browser, launching it, the in-page probe and the two measurements.

What the timings mean, both read in the page from ``performance.now()`` (0 = navigation start):

- **first load**: a tab already signed in (the key in the console's session storage, as after a sign-in)
  opens /ui in a fresh browser context (empty cache): from navigation start until the first row of the
  servers table is in the document, i.e. after the page's files, ``whoami`` and the servers overview
  have loaded and rendered. The load event's end is reported beside it. The browser has made one
  navigation before (``warm_browser``), as a browser a person already runs has.
- **playground answer**: from the click on Resolve until the answer's tier badge is in the document
  (the POST /api/v1/resolve round trip and its rendering), after one warm-up request (the API
  process's first resolve runs the model for the first time).
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tool_selector.core.errors import ConfigurationError, InvalidInputError, WorldError

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
CHROMIUM_NAMES = ("chromium", "chromium-browser")
SIZES = ((1280, 800), (390, 844))
KEY_STORAGE = "tool-selector.key"  # where the console keeps the signed-in key (routes/ui/static/api.js)
FIRST_ROWS = "table.servers tbody tr"
INSTALL_HINT = (
    "Install Playwright for Python (the dev extra: `bash scripts/setup.sh`, or "
    "`pip install playwright==1.65.2`) and Debian's Chromium (`apt-get install chromium`); "
    "`playwright install` is not needed."
)
WARM_UP = "a first request, to load the model's first run"  # answered before any timed one
# Never-seen requests for the playground (none is a benchmark query).
REQUESTS = (
    "what time is it in Tokyo right now",
    "list the products in my online shop that are out of stock",
    "convert 250 US dollars to euros at today's rate",
)
# Installed before any script of a page: counts fetches in flight and marks when the servers table's
# first row appears (performance.now(), ms since navigation start).
PROBE = """
(() => {
  window.__tsPending = 0;
  window.__tsMarks = {};
  const realFetch = window.fetch.bind(window);
  window.fetch = (...args) => {
    window.__tsPending += 1;
    return realFetch(...args).finally(() => { window.__tsPending -= 1; });
  };
  const rows = new MutationObserver(() => {
    if (document.querySelector("FIRST_ROWS")) {
      window.__tsMarks.servers = performance.now();
      rows.disconnect();
    }
  });
  document.addEventListener("DOMContentLoaded", () => {
    rows.observe(document.body, { childList: true, subtree: true });
  });
})();
""".replace('"FIRST_ROWS"', json.dumps(FIRST_ROWS))
# A page is shown when its view (a new one: the one left is marked) has its heading, no fetch is in
# flight and every image is decoded.
SHOWN = """(name) => {
  const view = document.querySelector(`#page .view[data-page="${name}"]:not([data-ts-left])`);
  return Boolean(view && view.querySelector("h1")) && window.__tsPending === 0
    && [...document.images].every((image) => image.complete);
}"""
# The first load's marks: the servers table's first row, the load event, and the API calls made.
LOAD_MARKS = """() => ({
  rows: window.__tsMarks.servers,
  load: performance.getEntriesByType("navigation")[0].loadEventEnd,
  calls: performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("/api/") || e.name.endsWith("/health"))
    .map((e) => [new URL(e.name).pathname + new URL(e.name).search, e.startTime, e.responseEnd]),
})"""
# Go to a route; the view shown until then is marked, so that waiting for the new one cannot find it.
GO = """(route) => {
  if (location.hash === route) return;
  document.querySelector("#page .view")?.setAttribute("data-ts-left", "");
  location.hash = route;
}"""
# Resolve one request on the playground page: click to the tier badge of the new answer.
RESOLVE = """async (text) => {
  const query = document.getElementById("pg-query");
  const answer = document.querySelector("#page .answer");
  const button = document.querySelector("#page form.playground button[type=submit]");
  if (!query || !answer || !button) return { error: "the playground's form is not on the page" };
  query.value = text;
  const before = answer.firstChild;
  const shown = new Promise((resolve) => {
    const seen = new MutationObserver(() => {
      const badge = answer.querySelector(".verdict .badge");
      if (badge && answer.firstChild !== before) {
        seen.disconnect();
        resolve({ ms: performance.now() - started, tier: badge.textContent });
      }
    });
    seen.observe(answer, { childList: true, subtree: true });
  });
  const failed = new Promise((resolve) => setTimeout(() => resolve({
    error: "no answer within 60 s: " + (document.getElementById("flash").textContent || "nothing shown"),
  }), 60000));
  const started = performance.now();
  button.click();
  return Promise.race([shown, failed]);
}"""


def find_chromium() -> Path | None:
    """The system's Chromium: ``chromium`` (or ``chromium-browser``) on PATH, else /usr/bin/chromium."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    fallback = Path("/usr/bin/chromium")
    return fallback if fallback.exists() else None


def missing_browser() -> str | None:
    """Why the console cannot be driven here (Playwright or Chromium missing), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed."
    if find_chromium() is None:
        return "No Chromium was found (chromium on PATH or /usr/bin/chromium)."
    return None


def require_browser() -> Path:
    reason = missing_browser()
    chromium = find_chromium()
    if reason is not None or chromium is None:
        raise ConfigurationError(f"The console cannot be driven: {reason}", hint=INSTALL_HINT)
    return chromium


def launch(playwright: Playwright) -> Browser:
    """A headless Chromium: the system's, with the flags a container needs."""
    return playwright.chromium.launch(executable_path=str(require_browser()), args=CHROMIUM_ARGS)


def watch_console(page: Page) -> list[str]:
    """The page's console errors and uncaught exceptions, collected as they happen."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    return errors


def new_page(browser: Browser, size: tuple[int, int], *, key: str | None = None) -> Page:
    """A page in a fresh context (empty cache and storage) with the probe; signed in with ``key``
    (put where the console keeps it) when one is given."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, device_scale_factor=1)
    context.add_init_script(PROBE)
    if key is not None:
        context.add_init_script(f"sessionStorage.setItem({json.dumps(KEY_STORAGE)}, {json.dumps(key)});")
    return context.new_page()


def sign_in(page: Page, url: str, key: str) -> None:
    """Open /ui and sign in through the form, as a person does."""
    page.goto(f"{url}/ui")
    page.fill("#api-key", key)
    page.click("#sign-in-form button[type=submit]")
    page.wait_for_selector("#nav", state="visible")


@dataclass(frozen=True)
class FirstLoad:
    rows_ms: float  # navigation start -> the servers table's first row
    load_event_ms: float  # navigation start -> the end of the load event
    calls: dict[str, tuple[float, float]]  # each API call of the load: (start, end) in ms


def warm_browser(browser: Browser, url: str, *, timeout_s: float = 180.0) -> None:
    """Wait until the API process has loaded its index and model (``/health`` says ``warm``: a person
    opens the console of a process that has been running, not one still starting), then make one
    navigation to /health in a throwaway context: the browser's own first-navigation start-up (a
    renderer process, the network service) is then out of the timed loads, and none of the console's
    files is cached (each load has a fresh context anyway)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{url}/health")
        # Playwright re-runs the check every 100 ms until it holds or the deadline passes
        page.wait_for_function(
            "async () => (await (await fetch('/health')).json()).warm === true",
            timeout=timeout_s * 1000,
            polling=100,
        )
    finally:
        context.close()


def first_load(browser: Browser, url: str, key: str, size: tuple[int, int] = SIZES[0]) -> FirstLoad:
    """Open /ui signed in, in a fresh context; see the module docstring."""
    page = new_page(browser, size, key=key)
    try:
        page.goto(f"{url}/ui")
        page.wait_for_selector(FIRST_ROWS)
        marks = page.evaluate(LOAD_MARKS)
        calls = {str(name): (float(start), float(end)) for name, start, end in marks["calls"]}
        return FirstLoad(rows_ms=float(marks["rows"]), load_event_ms=float(marks["load"]), calls=calls)
    finally:
        page.context.close()


@dataclass(frozen=True)
class Answer:
    request: str
    tier: str
    ms: float


def resolve_in_playground(page: Page, text: str) -> Answer:
    """On the playground page: type ``text``, click Resolve, wait for the tier; see the module docstring."""
    result: dict[str, Any] = page.evaluate(RESOLVE, text)
    if "error" in result:
        raise InvalidInputError(f"The playground gave no answer to {text!r}: {result['error']}")
    return Answer(request=text, tier=str(result["tier"]), ms=float(result["ms"]))


def show(page: Page, route: str, name: str, ready: str | None = None) -> None:
    """Go to ``#/route`` and wait until the page ``name`` is shown (and ``ready`` matches, if given)."""
    page.evaluate(GO, f"#/{route}")
    page.wait_for_function(SHOWN, arg=name)
    if ready is not None:
        page.wait_for_selector(ready)


@dataclass
class Targets:
    """What the pages show: a tool, a held entry and an eval report (discovered when not given)."""

    tool_id: str = ""
    entry_id: str = ""
    report_name: str = ""


def pages(targets: Targets, request: str) -> list[tuple[str, str, str, str | None]]:
    """(file name, route, page name, a selector that must be there) for each screenshot."""

    def quoted(value: str) -> str:
        from urllib.parse import quote

        return quote(value, safe="")

    entry = f"quarantine/{quoted(targets.entry_id)}" if targets.entry_id else "quarantine"
    report = f"eval/{quoted(targets.report_name)}" if targets.report_name else "eval"
    return [
        ("servers", "servers", "servers", FIRST_ROWS),
        ("tools", "tools", "tools", "table.tools tbody tr"),
        ("tool", f"tools/{quoted(targets.tool_id)}", "tools", None),
        ("quarantine", entry, "quarantine", "pre.diff" if targets.entry_id else None),
        ("playground", f"playground?q={quoted(request)}", "playground", ".answer .verdict .badge"),
        ("audit", "audit", "audit", None),
        ("jobs", "jobs", "jobs", None),
        ("evaluation", report, "eval", None),
    ]


@dataclass
class Screenshots:
    files: list[Path] = field(default_factory=list)
    loads: list[FirstLoad] = field(default_factory=list)
    warm_up: Answer | None = None  # the API process's first resolve: the model's first run, not counted
    answers: list[Answer] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # console errors, pages showing an error

    def timings(self) -> dict[str, Any]:
        return {
            "first_load_ms": [round(x.rows_ms, 1) for x in self.loads],
            "first_load_median_ms": round(statistics.median(x.rows_ms for x in self.loads), 1),
            "load_event_ms": [round(x.load_event_ms, 1) for x in self.loads],
            "first_load_calls_ms": {k: [round(v, 1) for v in se] for k, se in self.loads[-1].calls.items()},
            "playground_ms": {a.request: round(a.ms, 1) for a in self.answers},
            "playground_median_ms": round(statistics.median(a.ms for a in self.answers), 1),
            "playground_warm_up_ms": round(self.warm_up.ms, 1) if self.warm_up else None,
            "tiers": {a.request: a.tier for a in self.answers},
        }


def shoot_console(
    browser: Browser,
    url: str,
    key: str,
    out_dir: Path,
    targets: Targets,
    *,
    requests: tuple[str, ...] = REQUESTS,
    loads: int = 3,
    on_file: Callable[[Path], None] | None = None,
) -> Screenshots:
    """Measure (``loads`` first loads, then each request in the playground after a warm-up) and write
    one PNG per page and size into ``out_dir`` (``servers-1280x800.png``, ...)."""
    from playwright.sync_api import Error as PlaywrightError

    out_dir.mkdir(parents=True, exist_ok=True)
    done, doing = Screenshots(), ["the first load of /ui"]
    try:
        warm_browser(browser, url)
        done.loads = [first_load(browser, url, key) for _ in range(loads)]
        for size in SIZES:
            page = new_page(browser, size)
            errors = watch_console(page)
            try:
                doing.append(f"the sign-in at {size[0]}x{size[1]}")
                sign_in(page, url, key)
                if size == SIZES[0]:
                    doing.append("the playground")
                    show(page, "playground", "playground")
                    done.warm_up = resolve_in_playground(page, WARM_UP)
                    done.answers = [resolve_in_playground(page, text) for text in requests]
                _photograph(page, size, targets, requests[0], out_dir, done, doing, on_file)
            finally:
                page.context.close()
            done.problems += [f"{size[0]}x{size[1]}: console: {text}" for text in errors]
    except PlaywrightError as exc:
        raise WorldError(
            f"The console failed at {doing[-1]}: {exc.message}",
            hint="The page's files, or the API process, did not answer as expected; run it again, and "
            "if it repeats, open the page at that step in a browser to see why.",
        ) from exc
    return done


def _photograph(
    page: Page,
    size: tuple[int, int],
    targets: Targets,
    request: str,
    out_dir: Path,
    done: Screenshots,
    doing: list[str],
    on_file: Callable[[Path], None] | None,
) -> None:
    for file, route, name, ready in pages(targets, request):
        doing.append(f"the {file} page at {size[0]}x{size[1]} (#/{route})")
        show(page, route, name, ready)
        shown_errors = page.locator("#page .error, #flash .error").all_inner_texts()
        done.problems += [f"{file}: the page shows an error: {text}" for text in shown_errors]
        path = out_dir / f"{file}-{size[0]}x{size[1]}.png"
        page.screenshot(path=str(path))
        done.files.append(path)
        if on_file is not None:
            on_file(path)
