"""The operator console: static files served at ``/ui`` by ``tool-selector api``.

Plain HTML, CSS and JavaScript shipped in the package (routes/ui/static): no CDN, no network at run
time, no build step. The page holds no data of its own: it signs in with an API key (kept in session
storage) and calls the REST routes under /api/v1 with it, so every action is checked by the route's
scope exactly as for any other client.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
# What the page may load and call: its own files and its own API; nothing inline, nothing elsewhere.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


def mount_console(app: FastAPI) -> None:
    """Serve the console at /ui (index.html) and its files at /ui/static/..."""

    @app.get("/ui", include_in_schema=False)
    def console_page() -> Response:
        return FileResponse(STATIC / "index.html", headers=HEADERS)

    @app.get("/ui/", include_in_schema=False)
    def console_slash() -> Response:
        return RedirectResponse("/ui", status_code=308)

    app.mount("/ui/static", StaticFiles(directory=STATIC), name="console-static")
