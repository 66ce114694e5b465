"""The REST API's docs page (``/docs``, Swagger UI) served from the package, so that it renders on a
closed network: FastAPI's self-hosted docs recipe (``docs_url=None``, then ``get_swagger_ui_html``
with local URLs).

Swagger UI's two files are vendored in routes/ui/swagger by scripts/vendor_swagger_ui.sh (npm's
swagger-ui-dist, minified, with its licence and provenance.json) and shipped gzip-compressed: they are
sent as they are to a browser that accepts gzip (every browser), and unpacked once for a client that
does not. The favicon is the console's icon. ``/docs/oauth2-redirect`` stays as FastAPI serves it;
``/redoc`` (ReDoc, from a CDN before) leads to ``/docs``: one docs page, no second bundle to ship.
Like ``/openapi.json``, none of these needs a key: "Authorize" takes one for "Try it out".
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from routes.api_app import error_body

SWAGGER = Path(__file__).parent / "swagger"
ASSETS = "/docs/assets"
FAVICON = "/ui/static/icon.svg"  # the console's (routes/ui/static): no bytes of its own
TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
}
# The page may load its own files only; Swagger UI's one inline script and its inline styles stay.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class PackedFile:
    """One vendored file, read (compressed) once when the app is built and served from memory."""

    def __init__(self, path: Path, media_type: str) -> None:
        self.packed = path.read_bytes()
        self.media_type = media_type
        self.etag = hashlib.sha256(self.packed).hexdigest()[:20]
        self._plain: bytes | None = None

    def response(self, request: Request) -> Response:
        packed = "gzip" in request.headers.get("accept-encoding", "")
        etag = f'"{self.etag}-gzip"' if packed else f'"{self.etag}"'  # one tag per representation
        headers = {"ETag": etag, "Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
        headers["X-Content-Type-Options"] = "nosniff"
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        if packed:
            headers["Content-Encoding"] = "gzip"
            return Response(self.packed, media_type=self.media_type, headers=headers)
        if self._plain is None:
            self._plain = gzip.decompress(self.packed)
        return Response(self._plain, media_type=self.media_type, headers=headers)


def docs_html(openapi_url: str, title: str, prefix: str = "", oauth2_redirect_url: str | None = None) -> str:
    """The /docs page, every URL in it on this server (``prefix``: the app's root path)."""
    page = get_swagger_ui_html(
        openapi_url=prefix + openapi_url,
        title=f"{title} - Swagger UI",
        swagger_js_url=f"{prefix}{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{prefix}{ASSETS}/swagger-ui.css",
        swagger_favicon_url=prefix + FAVICON,
        oauth2_redirect_url=None if oauth2_redirect_url is None else prefix + oauth2_redirect_url,
    )
    return bytes(page.body).decode()


def mount_api_docs(app: FastAPI) -> None:
    """Serve /docs, its files at /docs/assets/<name>, /docs/oauth2-redirect and /redoc (to /docs).
    The app is built with ``docs_url=None, redoc_url=None`` (FastAPI's own pages load from a CDN)."""
    files = {name: PackedFile(SWAGGER / f"{name}.gz", media_type) for name, media_type in TYPES.items()}
    openapi_url = app.openapi_url or "/openapi.json"
    redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"
    headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}

    @app.get("/docs", include_in_schema=False)
    async def docs_page(request: Request) -> HTMLResponse:
        prefix = request.scope.get("root_path", "").rstrip("/")
        return HTMLResponse(docs_html(openapi_url, app.title, prefix, redirect), headers=headers)

    @app.get(redirect, include_in_schema=False)
    async def docs_oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(ASSETS + "/{name}", include_in_schema=False)
    async def docs_file(name: str, request: Request) -> Response:
        found = files.get(name)
        if found is None:
            missing = error_body("not_found", f"The API docs have no file {name!r}.", "Open /docs.")
            return JSONResponse(missing, status_code=404)
        return found.response(request)

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> RedirectResponse:
        return RedirectResponse(request.scope.get("root_path", "").rstrip("/") + "/docs", status_code=307)
