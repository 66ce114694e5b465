"""The FastAPI application object: error rendering, authentication and the process's Operations.

Routes live in routes/api.py. Every error leaves as ``{"error": {"code", "message", "hint", ...}}``
with the status from the one table in routes/errors.py.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from routes.errors import mapping_for
from services.access.keys import Principal, authenticate
from services.api.operations import Operations
from services.root.container import Container
from tool_selector.core.choices import Scope
from tool_selector.core.errors import ToolSelectorError

logger = logging.getLogger(__name__)

PRINCIPAL = "tool_selector.principal"
"""The ASGI scope key under which routes/api_guard.py hands the authenticated caller to ``need``."""
_bearer = HTTPBearer(auto_error=False, description="An API key from `tool-selector keys create`.")


class ErrorDetail(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. not_found, forbidden, invalid_input")
    message: str = Field(description="what went wrong")
    hint: str = Field(default="", description="what to do about it")
    next_step: str = ""
    fields: list[dict[str, str]] | None = Field(default=None, description="422: each invalid field")
    problems: list[dict[str, Any]] | None = Field(default=None, description="import: each bad line or item")
    details: dict[str, Any] | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (401, "no API key, or an unknown or revoked one"),
        (403, "the key lacks the route's scope"),
        (404, "no such server, tool or job"),
        (413, "the request body is over its limit (api.max_body_bytes; api.max_import_bytes for an import)"),
        (409, "conflict: the name exists, the server still has tools, or a write is in progress"),
        (422, "invalid request: see fields or problems"),
        (503, "the index is missing or stale, or the backend is unreachable"),
    )
}


def error_body(code: str, message: str, hint: str = "", **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "hint": hint, **extra}}


def error_response(exc: ToolSelectorError) -> JSONResponse:
    mapping = mapping_for(exc)
    details = {k: v for k, v in exc.details.items() if k != "problems"}
    extra: dict[str, Any] = {"next_step": mapping.next_step}
    if details:
        extra["details"] = details
    if "problems" in exc.details:
        extra["problems"] = exc.details["problems"]
    headers = {"WWW-Authenticate": "Bearer"} if mapping.http_status == 401 else None
    return JSONResponse(
        error_body(mapping.code, exc.message, exc.hint, **extra),
        status_code=mapping.http_status,
        headers=headers,
    )


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(p) for p in loc)


def validation_response(exc: RequestValidationError) -> JSONResponse:
    fields = [{"field": _field(err["loc"]), "message": str(err["msg"])} for err in exc.errors()]
    shown = "; ".join(f"{f['field']}: {f['message']}" for f in fields[:5])
    return JSONResponse(
        error_body(
            "invalid_input",
            f"The request is not valid: {shown}.",
            "Fix the fields named in `fields`; /docs shows every route's schema.",
            fields=fields,
        ),
        status_code=422,
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ToolSelectorError)
    async def _ours(_: Request, exc: ToolSelectorError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return validation_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and "parsing the body" in str(exc.detail):
            return JSONResponse(
                error_body(
                    "invalid_input",
                    "The request body is not valid JSON.",
                    "Send a JSON object as described in /docs.",
                    fields=[{"field": "body", "message": "not valid JSON"}],
                ),
                status_code=422,
            )
        codes = {
            404: "not_found",
            405: "method_not_allowed",
            408: "timeout",
            413: "too_large",
            415: "unsupported_media_type",
        }
        message = str(exc.detail) if exc.detail else "Request failed."
        if exc.status_code == 404 and message == "Not Found":
            message = "No such route."
        hint = getattr(exc, "hint", "See /docs for the routes.")  # a body over its cap says what to do
        return JSONResponse(
            error_body(codes.get(exc.status_code, "http_error"), message, hint),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return JSONResponse(
            error_body(
                "internal", f"Internal error ({type(exc).__name__}).", "Tell the operator; see the log."
            ),
            status_code=500,
        )


async def ops(request: Request) -> Operations:
    operations: Operations = request.app.state.ops
    return operations


def need(scope: Scope | None) -> Callable[..., Awaitable[Principal]]:
    """A dependency: the caller's key, which must carry ``scope`` (401 without a key, 403 without it;
    ``None``: any valid key, the route checks what it may see)."""

    async def check(
        request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
    ) -> Principal:
        principal = request.scope.get(PRINCIPAL)  # authenticated by routes/api_guard.py, before the body
        if not isinstance(principal, Principal):
            # inline, not in a worker thread: one indexed SQLite read (~25 us) costs less than the hop
            header = None if credentials is None else f"Bearer {credentials.credentials}"
            if credentials is None and request.headers.get("authorization"):
                header = request.headers["authorization"]  # malformed: authenticate says how
            operations: Operations = request.app.state.ops
            principal = authenticate(operations.container.store, header)
        if scope is not None:
            principal.require(scope)
        return principal

    return check


def lifespan_for(make_container: Callable[[], Container]) -> Callable[[FastAPI], Any]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        container = make_container()
        app.state.ops = Operations(container)
        warming = threading.Thread(target=app.state.ops.warm_up, name="warm-up", daemon=True)
        warming.start()  # in the background: the process answers (health, the console) meanwhile
        try:
            yield
        finally:
            warming.join()
            app.state.ops.close()
            container.close()

    return lifespan
