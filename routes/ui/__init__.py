"""The operator console: static files served at ``/ui`` by ``tool-selector api``.

Plain HTML, CSS and JavaScript shipped in the package (routes/ui/static): no CDN, no network at run
time, no build step. The page holds no data of its own: it signs in with an API key (kept in session
storage) and calls the REST routes under /api/v1 with it, so every action is checked by the route's
scope exactly as for any other client.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from routes.api_app import error_body

STATIC = Path(__file__).parent / "static"
# What the page may load and call: its own files and its own API; nothing inline, nothing elsewhere.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}


TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


class ConsoleFiles:
    """The console's files, read once when the app is built and served from memory: a first load asks
    for seven of them at once, and an async answer from memory takes no worker thread and no file I/O
    (StaticFiles took 70-100 ms each for them under a first load's burst, 5 ms alone)."""

    def __init__(self, folder: Path) -> None:
        self.files: dict[str, tuple[bytes, str, str]] = {}
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.suffix in TYPES:
                body = path.read_bytes()
                etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
                self.files[path.name] = (body, TYPES[path.suffix], etag)

    def response(self, name: str, if_none_match: str | None) -> Response:
        found = self.files.get(name)
        if found is None:
            missing = error_body("not_found", f"The console has no file {name!r}.", "Open /ui.")
            return JSONResponse(missing, status_code=404)
        body, media_type, etag = found
        headers = {**HEADERS, "ETag": etag}
        if if_none_match == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)


def mount_console(app: FastAPI) -> None:
    """Serve the console at /ui (index.html) and its files at /ui/static/<name>."""
    files = ConsoleFiles(STATIC)

    @app.get("/ui", include_in_schema=False)
    async def console_page(request: Request) -> Response:
        return files.response("index.html", request.headers.get("if-none-match"))

    @app.get("/ui/", include_in_schema=False)
    async def console_slash() -> Response:
        return RedirectResponse("/ui", status_code=308)

    @app.get("/ui/static/{name}", include_in_schema=False)
    async def console_file(name: str, request: Request) -> Response:
        return files.response(name, request.headers.get("if-none-match"))
