"""API keys for the gateway over streamable HTTP: a pure ASGI middleware in front of the MCP app.

Every HTTP request must carry ``Authorization: Bearer <key>`` of a key with the ``read`` scope (the
MCP endpoint is the app's only route, so everything it serves is covered). A request without one is
answered here, before the MCP layer sees it or a byte of its body is read, with the status of
``routes/errors.py`` and ``{"error": {"code", "message", "hint"}}`` (plus ``WWW-Authenticate: Bearer``
on 401). The caller's ``Principal`` travels on in the ASGI scope (``PRINCIPAL``): the gateway's
handlers pass its scopes to the service, which lets only keys with ``call`` run upstream tools.
stdio has no keys: whoever can start the process already owns the files.

Sessions: an MCP session (``Mcp-Session-Id``) belongs to the key that opened it. A request on it with
another key is refused (403), and a session id this middleware did not see opened is refused (404).
When a key is revoked (``tool-selector keys revoke``, in another process), its sessions are closed:
at the session's next request (which is refused with 401), and by a check of the open sessions' keys
every ``gateway.key_check_s`` seconds, run alongside the app's lifespan. Closing sends the session a
DELETE through the MCP app, the protocol's own way to end a session: its streams end and its id is
forgotten, so the client has to open a new session, with a valid key.

The checks read the catalog database through a container of their own, so the gateway replacing its
container when a sync writes a newer index does not concern them. They run on the event loop's
thread: one indexed SQLite read (and, at most once a minute per key, a one-row "last used" write). A
worker thread would cost a connection per thread (``Container.store`` is per thread), and anyio
retires idle worker threads after ten seconds.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from routes.errors import mapping_for
from services.access.keys import Principal, authenticate, revoked_among
from services.root.container import Container
from tool_selector.core.choices import Scope
from tool_selector.core.errors import AuthError, ForbiddenError, NotFoundError, ToolSelectorError

logger = logging.getLogger(__name__)

PRINCIPAL = "tool_selector.principal"
"""The ASGI scope key under which the caller's ``Principal`` reaches the MCP handlers."""
SESSION_HEADER = "mcp-session-id"
FORGET_AFTER_S = 2 * 30 * 60  # twice the SDK's idle timeout: by then the SDK has closed the session
_NEW_SESSION = "Open a new session with this key: send initialize again, without the Mcp-Session-Id header."


def error_response(error: ToolSelectorError) -> JSONResponse:
    """The error as an HTTP client reads it: the table's status, code and next step."""
    mapping = mapping_for(error)
    body = {
        "error": {"code": mapping.code, "message": error.message, "hint": error.hint or mapping.next_step}
    }
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(error, AuthError) else None
    return JSONResponse(body, status_code=mapping.http_status, headers=headers)


def principal_of(scope: AsgiScope) -> Principal | None:
    """The caller this middleware let through (None when the request did not pass through it)."""
    found = scope.get(PRINCIPAL)
    return found if isinstance(found, Principal) else None


@dataclass
class _Session:
    key_id: str
    opening: dict[str, Any]  # the opening request's ASGI scope: where a DELETE for this session goes
    in_flight: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class RequireKey:
    """Refuses every HTTP request whose bearer key is missing, unknown, revoked or lacks ``needs``,
    binds each MCP session to its key, and closes the sessions of revoked keys."""

    def __init__(
        self, app: ASGIApp, container: Container, *, needs: Scope = "read", key_check_s: float = 10.0
    ) -> None:
        self.app = app
        self.container = container
        self.needs: Scope = needs
        self.key_check_s = key_check_s
        self.sessions: dict[str, _Session] = {}

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with anyio.create_task_group() as group:
                group.start_soon(self._watch_keys)
                await self.app(scope, receive, send)
                group.cancel_scope.cancel()
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        session_id = headers.get(SESSION_HEADER)
        try:
            principal = authenticate(self.container.store, headers.get("authorization"))
            principal.require(self.needs)
            session = self._session_for(session_id, principal)
        except ToolSelectorError as exc:
            logger.info("refused %s %s: %s", scope.get("method"), scope.get("path"), exc.message)
            revoked = exc.details.get("revoked_key_id") if isinstance(exc, AuthError) else None
            if isinstance(revoked, str):
                await self.close_sessions_of(revoked, "its API key was revoked")
            await error_response(exc)(scope, receive, send)
            return
        opening = {k: v for k, v in scope.items() if k != PRINCIPAL}
        scope[PRINCIPAL] = principal
        if session is None:
            await self.app(scope, receive, self._recording(send, principal, opening))
            return
        session.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_seen = time.monotonic()
        if scope.get("method") == "DELETE" and session_id is not None:
            self.sessions.pop(session_id, None)  # the client ended it

    def _session_for(self, session_id: str | None, principal: Principal) -> _Session | None:
        if session_id is None:
            return None
        session = self.sessions.get(session_id)
        if session is None:
            raise NotFoundError(
                "This MCP session is not open: it ended, timed out, or was closed when its key was revoked.",
                hint=_NEW_SESSION,
            )
        if session.key_id != principal.key_id:
            raise ForbiddenError(
                "This MCP session was opened with another API key; a session works only with the key "
                "that opened it.",
                hint=_NEW_SESSION,
            )
        return session

    def _recording(self, send: Send, principal: Principal, opening: dict[str, Any]) -> Send:
        """``send``, noting the session a successful initialize opens as the principal's."""

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None and principal.key_id is not None:
                    self.sessions[opened] = _Session(principal.key_id, opening)
            await send(message)

        return recording

    async def _watch_keys(self) -> None:
        while True:
            await anyio.sleep(self.key_check_s)
            try:
                await self.check_keys()
            except Exception:  # a locked or damaged database: the next round tries again
                logger.warning("could not check the keys of the open MCP sessions", exc_info=True)

    async def check_keys(self) -> None:
        """Close every session whose key was revoked; forget sessions the SDK has long closed."""
        if not self.sessions:
            return
        revoked = revoked_among(self.container.store, {s.key_id for s in self.sessions.values()})
        for key_id in revoked:
            await self.close_sessions_of(key_id, "its API key was revoked")
        now = time.monotonic()
        for session_id, session in list(self.sessions.items()):
            if session.in_flight == 0 and now - session.last_seen > FORGET_AFTER_S:
                self.sessions.pop(session_id, None)

    async def close_sessions_of(self, key_id: str, why: str) -> None:
        for session_id in [sid for sid, s in self.sessions.items() if s.key_id == key_id]:
            session = self.sessions.pop(session_id, None)
            if session is not None:
                logger.warning("closing MCP session %s of key %s: %s", session_id, key_id, why)
                await self._delete(session_id, session)

    async def _delete(self, session_id: str, session: _Session) -> None:
        """End the session as a client's DELETE would (its streams close; its id answers 404)."""
        kept = [(k, v) for k, v in Headers(scope=session.opening).raw if k in (b"host", b"origin")]
        scope = {
            **session.opening,
            "method": "DELETE",
            "query_string": b"",
            "headers": [*kept, (SESSION_HEADER.encode(), session_id.encode())],
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                logger.warning("closing MCP session %s answered %s", session_id, message["status"])

        await self.app(scope, receive, discard)
