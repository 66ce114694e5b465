"""Fixtures for browser tests of the operator console (/ui), registered by tests/conftest.py
(``pytest_plugins``), so a test module asks for them by name:

- ``console_site`` (module): a data folder seeded by eval/console/demo.py (the demo catalog, servers that
  run, fail and are switched off, a sync job, a held tool with a diff, an eval report, a key per role)
  and a real ``tool-selector api`` process on it (tests/support/api_process.py);
- ``msc_site`` (module): the same on the msc_bench_dev catalog (2,375 tools; about two minutes of
  embedding here): for the timing test only;
- ``browser`` (module): the system's Chromium, headless, driven by Playwright; skips, saying what is
  missing and how to install it, where Playwright or Chromium is not installed (``browser_installed``
  only skips: named before a site fixture, it skips before the seeding);
- ``browser_page`` (function): a page of a fresh browser context (1280x800) whose console errors and
  uncaught exceptions are collected in ``page.console_errors`` (a list: a test that expects one
  removes it) and must be empty when the test ends.

Figures a test hands to ``record_console_figures`` are printed in a "console figures" section of the
terminal summary, with or without ``-s`` and under pytest-xdist alike (they travel as the report's
user properties).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.paths import BENCHMARKS, DEMO_CATALOG

if TYPE_CHECKING:  # imported where used: this plugin is loaded by every test run, the fast loop too
    from playwright.sync_api import Browser, Page

    from tests.support.api_process import ApiProcess
    from tool_selector.embedding.embedders import MiniLMEmbedder

MSC_CATALOG = BENCHMARKS / "msc_bench_dev"
FIGURES = "console figures"  # the user property a test's figures travel in
_printed: list[tuple[str, str]] = []


@dataclass(frozen=True)
class ConsoleSite:
    """A running ``tool-selector api`` on a seeded data folder, and what was seeded."""

    url: str  # http://127.0.0.1:PORT
    keys: dict[str, str]  # admin, editor, contributor, viewer, approver (read + approve)
    data_dir: Path
    held_entry_id: str  # a pending quarantine entry (a changed description, with a diff)
    held_tool_id: str
    report_name: str  # an eval report in the reports folder ("" on msc_site)
    servers: dict[str, str]  # "ok", "failed", "disabled", "catalog" -> a server in that state
    process: ApiProcess  # the process and its stderr log


def _site(
    base: Path, cache_dir: Path, embedder: MiniLMEmbedder, catalog: Path, *, report: bool
) -> Iterator[ConsoleSite]:
    from eval.console.demo import seed_console_data, time_server_command
    from tests.support.api_process import api_env, api_process
    from tool_selector.config.settings import Settings
    from tool_selector.core.errors import ConfigurationError

    try:
        time_server_command()
    except ConfigurationError as exc:  # mcp-server-time is not installed: scripts/setup.sh was not run
        pytest.skip(str(exc))
    settings = Settings(data_dir=base / "unused", cache_dir=cache_dir)
    seed = seed_console_data(settings, base / "data", catalog=catalog, embedder=embedder, report=report)
    # a module fixture is set up before the test's own environment: name the cache folder here
    env = api_env(seed.data_dir, CACHE_DIR=str(cache_dir))
    with api_process(env) as running:
        yield ConsoleSite(
            url=running.url,
            keys=seed.keys,
            data_dir=seed.data_dir,
            held_entry_id=seed.held_entry_id,
            held_tool_id=seed.held_tool_id,
            report_name=seed.report_name,
            servers=seed.servers,
            process=running,
        )


@pytest.fixture(scope="module")
def console_site(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[ConsoleSite]:
    """The demo catalog seeded (about 15 s) and served by a real API process, shared by a module."""
    base = tmp_path_factory.mktemp("console")
    yield from _site(base, session_cache_dir, embedder, DEMO_CATALOG, report=True)


@pytest.fixture(scope="module")
def msc_site(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[ConsoleSite]:
    """The msc_bench_dev catalog (491 servers, 2,375 tools) seeded the same way, without an eval report:
    about two minutes of embedding on this machine, so for one test only."""
    if not (MSC_CATALOG / "tools.json").is_file():
        pytest.skip(f"the shared benchmark catalog {MSC_CATALOG} is not there")
    base = tmp_path_factory.mktemp("console-msc")
    yield from _site(base, session_cache_dir, embedder, MSC_CATALOG, report=False)


@pytest.fixture(scope="module")
def browser_installed() -> None:
    """Skips, saying what is missing and how to install it, where Playwright or Chromium is not installed.
    Named before a site fixture, it skips before the site is seeded."""
    from eval.console.screens import INSTALL_HINT, missing_browser

    reason = missing_browser()
    if reason is not None:
        pytest.skip(f"browser tests need a browser: {reason} {INSTALL_HINT}")


@pytest.fixture(scope="module")
def browser(browser_installed: None) -> Iterator[Browser]:
    """Headless Chromium (the system's), one per module; skips visibly when it cannot be had."""
    from playwright.sync_api import sync_playwright

    from eval.console.screens import launch

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[Page]:
    """A 1280x800 page in a fresh context; its console errors must be gone (none, or removed by the
    test as expected) when the test ends."""
    from eval.console.screens import SIZES, new_page, watch_console

    page = new_page(browser, SIZES[0])
    page.console_errors = watch_console(page)
    yield page
    errors = list(page.console_errors)
    page.context.close()
    assert errors == [], f"the page logged errors to its console: {errors}"


def record_console_figures(request: pytest.FixtureRequest, text: str) -> None:
    """Print ``text`` in the terminal summary's "console figures" section (see the module docstring)."""
    request.node.user_properties.append((FIGURES, text))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        figures = [str(value) for name, value in report.user_properties if name == FIGURES]
        _printed.extend((report.nodeid, text) for text in figures)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _printed:
        terminalreporter.section(FIGURES)
        for nodeid, text in _printed:
            terminalreporter.write_line(f"{nodeid}:\n{text}")
