"""API keys for the gateway over streamable HTTP: a pure ASGI middleware in front of the MCP app.

Every HTTP request must carry ``Authorization: Bearer <key>`` of a key with the ``read`` scope (the
MCP endpoint is the app's only route, so everything it serves is covered). A request without one is
answered here, before the MCP layer sees it, with the status of ``routes/errors.py`` and
``{"error": {"code", "message", "hint"}}`` (plus ``WWW-Authenticate: Bearer`` on 401). Lifespan
events pass through. stdio has no keys: whoever can start the process already owns the files.

The check reads the catalog database through a container of its own, so the gateway replacing its
container when a sync writes a newer index does not concern it. It runs on the event loop's thread:
one indexed SQLite read (and, at most once a minute per key, a one-row "last used" write). A worker
thread would cost a connection per thread (``Container.store`` is per thread), and anyio retires
idle worker threads after ten seconds.
"""

from __future__ import annotations

import logging

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from routes.errors import mapping_for
from services.shared.auth import authenticate
from services.shared.container import Container
from tool_selector.catalog.admin import Scope
from tool_selector.errors import AuthError, ToolSelectorError

logger = logging.getLogger(__name__)


def error_response(error: ToolSelectorError) -> JSONResponse:
    """The error as an HTTP client reads it: the table's status, code and next step."""
    mapping = mapping_for(error)
    body = {
        "error": {"code": mapping.code, "message": error.message, "hint": error.hint or mapping.next_step}
    }
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(error, AuthError) else None
    return JSONResponse(body, status_code=mapping.http_status, headers=headers)


class RequireKey:
    """Refuses every HTTP request whose bearer key is missing, unknown, revoked or lacks ``needs``."""

    def __init__(self, app: ASGIApp, container: Container, *, needs: Scope = "read") -> None:
        self.app = app
        self.container = container
        self.needs: Scope = needs

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            principal = authenticate(self.container, Headers(scope=scope).get("authorization"))
            principal.require(self.needs)
        except ToolSelectorError as exc:
            logger.info("refused %s %s: %s", scope.get("method"), scope.get("path"), exc.message)
            await error_response(exc)(scope, receive, send)
            return
        await self.app(scope, receive, send)
