"""The REST API's docs page (/docs) loads nothing from outside (routes/ui/apidocs.py): its HTML names
URLs on this server only, and its Swagger UI files are served from the package as vendored, with their
licence and provenance. The real browser's check is test_api_docs_browser.py."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from routes.api import build_app
from tests.support.paths import ROOT
from tool_selector.config.settings import Settings

SWAGGER = ROOT / "routes" / "ui" / "swagger"  # the vendored files (scripts/vendor_swagger_ui.sh)
URL_IN_PAGE = re.compile(r"""(?:src|href)="([^"]*)"|url: '([^']*)'|window\.location\.origin \+ '([^']*)'""")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The app in-process, its lifespan not started: the docs need no catalog."""
    app = build_app(Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache"))
    yield TestClient(app)


def _page_urls(html: str) -> list[str]:
    return [next(part for part in found if part) for found in URL_IN_PAGE.findall(html)]


def test_the_docs_page_names_only_urls_on_this_server_favicon_included(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    urls = _page_urls(page.text)
    assert sorted(urls) == sorted(
        [
            "/docs/assets/swagger-ui.css",
            "/docs/assets/swagger-ui-bundle.js",
            "/ui/static/icon.svg",
            "/openapi.json",
            "/docs/oauth2-redirect",
        ]
    )
    assert "//" not in page.text  # no absolute or scheme-relative URL anywhere in the page
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp and "http" not in csp
    for url in urls:  # each is served here
        assert client.get(url).status_code == 200, url


def test_behind_a_root_path_every_url_of_the_docs_page_carries_it(tmp_path: Path) -> None:
    app = build_app(Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache"))
    page = TestClient(app, root_path="/selector").get("/docs")
    assert page.status_code == 200
    assert all(url.startswith("/selector/") for url in _page_urls(page.text)), _page_urls(page.text)


def test_a_swagger_ui_file_goes_gzipped_to_a_browser_and_plain_to_a_client_without_gzip(
    client: TestClient,
) -> None:
    packed = (SWAGGER / "swagger-ui-bundle.js.gz").read_bytes()
    to_browser = client.get("/docs/assets/swagger-ui-bundle.js", headers={"Accept-Encoding": "gzip, br"})
    assert to_browser.headers["content-encoding"] == "gzip"
    assert to_browser.headers["content-type"].startswith("text/javascript")
    assert int(to_browser.headers["content-length"]) == len(packed)  # sent as shipped, not packed again
    plain = client.get("/docs/assets/swagger-ui-bundle.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == gzip.decompress(packed)
    assert plain.content.startswith(b"/*! For license information please see swagger-ui-bundle.js.LICENSE")
    assert to_browser.content == plain.content  # the client unpacked the first one
    assert to_browser.headers["etag"] != plain.headers["etag"]
    again = {"Accept-Encoding": "gzip", "If-None-Match": to_browser.headers["etag"]}
    assert client.get("/docs/assets/swagger-ui-bundle.js", headers=again).status_code == 304


def test_an_unknown_docs_file_is_a_404_in_the_apis_error_shape(client: TestClient) -> None:
    missing = client.get("/docs/assets/swagger-ui.js")
    assert missing.status_code == 404
    error = missing.json()["error"]
    assert (error["code"], error["hint"]) == ("not_found", "Open /docs.")
    assert "'swagger-ui.js'" in error["message"]


def test_redoc_leads_to_the_docs_page_and_the_schema_and_oauth2_redirect_stay(client: TestClient) -> None:
    redoc = client.get("/redoc", follow_redirects=False)
    assert redoc.status_code == 307 and redoc.headers["location"] == "/docs"
    assert client.get("/openapi.json").json()["info"]["title"] == "tool-selector"
    assert "oauth2" in client.get("/docs/oauth2-redirect").text
    paths = client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]  # the docs' routes are not API


def test_the_vendored_swagger_ui_matches_its_provenance_and_ships_its_licence() -> None:
    provenance = json.loads((SWAGGER / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["package"] == "swagger-ui-dist" and provenance["license"] == "Apache-2.0"
    assert provenance["made_by"] == f"bash scripts/vendor_swagger_ui.sh {provenance['version']}"
    on_disk = {p.name for p in SWAGGER.iterdir()} - {"provenance.json"}
    assert on_disk == set(provenance["files"])
    for name, entry in provenance["files"].items():
        assert hashlib.sha256((SWAGGER / name).read_bytes()).hexdigest() == entry["sha256"], name
    assert "Apache License" in (SWAGGER / "LICENSE").read_text(encoding="utf-8")
    assert (ROOT / "scripts" / "vendor_swagger_ui.sh").is_file()


def test_the_wheel_ships_the_swagger_ui_files() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["include"]
    folder = "/" + SWAGGER.relative_to(ROOT).as_posix()
    assert any(glob.removesuffix("/*") == folder for glob in shipped)
