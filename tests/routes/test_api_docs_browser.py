"""The REST API's docs page in a real Chromium (the system's, through Playwright): with every request
that is not for the loopback server blocked, /docs of a real ``tool-selector api`` renders its
operations, with no failed request and no console error (``browser_page`` checks the console)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from tests.support.api_process import ApiProcess, api_env, api_process

if TYPE_CHECKING:
    from playwright.sync_api import Page, Request, Route


@pytest.fixture
def docs_api(tmp_path: Path, real_model: Path) -> Iterator[ApiProcess]:
    """A real ``tool-selector api`` on an empty data folder (its warm-up loads the model)."""
    with api_process(api_env(tmp_path / "data", CACHE_DIR=str(real_model))) as running:
        yield running


def test_the_docs_page_renders_the_operations_with_every_outside_request_blocked(
    docs_api: ApiProcess, browser_page: Page
) -> None:
    here = urlsplit(docs_api.url).netloc
    blocked: list[str] = []
    failed: list[str] = []

    def only_here(route: Route, request: Request) -> None:
        if urlsplit(request.url).netloc == here:
            route.continue_()
        else:
            blocked.append(request.url)
            route.abort()

    browser_page.context.route("**/*", only_here)
    browser_page.on("requestfailed", lambda request: failed.append(f"{request.url}: {request.failure}"))
    browser_page.on(
        "response", lambda response: failed.append(response.url) if response.status >= 400 else None
    )
    browser_page.goto(f"{docs_api.url}/docs", wait_until="load")
    assert blocked == [], f"the docs page asked for files outside the server: {blocked}"
    resolve = browser_page.locator(".opblock-summary-path", has_text=re.compile(r"^/api/v1/resolve$"))
    resolve.first.wait_for(state="visible", timeout=60_000)
    assert browser_page.locator(".opblock").count() >= 20  # every operation, not only the first
    assert browser_page.title() == "tool-selector - Swagger UI"
    assert blocked == [] and failed == []
