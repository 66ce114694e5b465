"""The REST API's first check: the API key, then the body's size, before a byte of the body is read.

A pure ASGI middleware in front of the FastAPI app, because FastAPI reads and parses a request's body
before it runs the route's dependencies: a key checked there comes after a 200 MB body was read. Here,
for every request under ``/api/v1``:

1. the key is authenticated: without a valid one the answer is 401 at once, in the API's error shape,
   and the body is never read. The ``Principal`` travels on in the ASGI scope (``PRINCIPAL``), where
   ``need`` (routes/api_app.py) checks the route's scope on it;
2. the body is capped: ``api.max_body_bytes``, or a larger cap for the routes that take a whole
   catalog (``api.max_import_bytes`` for ``POST /api/v1/catalog/import``). A ``Content-Length`` over
   the cap is answered 413 at once; a body sent without one (chunked) is counted as it arrives and
   refused with 413 as soon as it passes the cap, so no more than the cap and one chunk is ever read.

3. the body must arrive within ``api.body_timeout_s`` of the request's start: a slower one (a body
   trickled in to keep a request open past its key's revocation) is refused with 408. The route then
   checks the key again when it changes anything (``Operations.write``), so a key revoked meanwhile
   changes nothing.

A refusal that leaves a large or open-ended body unread closes the connection (``Connection: close``):
left open, the server would have to read the rest of the body, only to drop it.

Other paths (``/health``, ``/docs``, ``/openapi.json``) need no key; their bodies are capped too.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from routes.api_app import PRINCIPAL, error_body, error_response
from services.access.keys import authenticate
from tool_selector.core.errors import ToolSelectorError
from tool_selector.core.files import describe_size

API_PREFIX = "/api/v1"


CLOSE = {"Connection": "close"}  # after this answer the connection ends: the rest of the body is never read


class BodyTooLarge(StarletteHTTPException):
    """Raised from ``receive`` when a body without a Content-Length passes its cap; the app's handler
    of HTTP errors renders it (routes/api_app.py) with ``hint``, and the connection is closed."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(status_code=413, detail=message, headers=CLOSE)
        self.hint = hint


def too_large(path: str, limit: int, setting: str) -> tuple[str, str]:
    """The 413's message and hint: the cap, the route, and what to do."""
    env = "TOOL_SELECTOR_" + setting.upper().replace(".", "__")
    return (
        f"The request body is over the limit of {describe_size(limit)} for {path}; it was not read.",
        f"Send a smaller body (split a batch into several requests), or ask the operator to raise the "
        f"{setting} setting ({env}).",
    )


class BodyTooSlow(StarletteHTTPException):
    """Raised from ``receive`` when a body has not arrived whole within ``api.body_timeout_s``."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(
            status_code=408,
            detail=f"The request body did not arrive within {timeout_s:g} s; nothing was done.",
            headers=CLOSE,
        )
        self.hint = (
            "Send the whole body at once (a slow or stalled upload is dropped), or ask the operator to raise "
            "api.body_timeout_s (TOOL_SELECTOR_API__BODY_TIMEOUT_S)."
        )


class KeyThenBodyLimit:
    """See the module docstring. ``larger``: path -> (cap, setting) for routes that take catalogs."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        larger: Mapping[str, tuple[int, str]] | None = None,
        body_timeout_s: float = 30.0,
    ) -> None:
        self.app = app
        self.body_timeout_s = body_timeout_s
        self.default = (max_body_bytes, "api.max_body_bytes")
        self.larger = dict(larger or {})

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        headers = Headers(scope=scope)
        limit, setting = self.larger.get(path, self.default)
        length = headers.get("content-length")
        declared = int(length) if length is not None and length.isdigit() else None
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            try:
                container = scope["app"].state.ops.container
                scope[PRINCIPAL] = authenticate(container.store, headers.get("authorization"))
            except ToolSelectorError as exc:
                refusal = error_response(exc)
                streamed = declared is None and "chunked" in headers.get("transfer-encoding", "").lower()
                if streamed or (declared or 0) > limit:  # a large or open-ended body: do not drain it
                    refusal.headers.update(CLOSE)
                await refusal(scope, receive, send)
                return
        if declared is not None and declared > limit:
            message, hint = too_large(path, limit, setting)
            refusal = JSONResponse(error_body("too_large", message, hint), status_code=413, headers=CLOSE)
            await refusal(scope, receive, send)
            return
        deadline = anyio.current_time() + self.body_timeout_s
        await self.app(scope, _counting(receive, path, limit, setting, deadline, self.body_timeout_s), send)


def _counting(
    receive: Receive, path: str, limit: int, setting: str, deadline: float, timeout_s: float
) -> Receive:
    seen = 0
    whole = False  # the last part of the body arrived: later receives wait for a disconnect, unbounded

    async def counted() -> Message:
        nonlocal seen, whole
        if whole:
            return await receive()
        with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(*too_large(path, limit, setting))
                whole = not message.get("more_body", False)
            return message
        raise BodyTooSlow(timeout_s)

    return counted
