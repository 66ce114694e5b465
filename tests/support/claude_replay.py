"""A loopback stand-in for the Claude Messages API that replays recorded responses.

``ReplayServer`` is a real HTTP server on 127.0.0.1 (``http.server`` in a thread). Tests script the
replies (``server.enqueue(...)``), point the real ``anthropic`` SDK at ``server.base_url``, and then
assert on ``server.requests``: every POST /v1/messages with its headers and JSON body. A request with
no scripted reply left is answered 418 (which the client does not retry) and counted in
``unexpected``, and the fixture made by ``replay_server_fixture`` fails the test on teardown when a
request was unexpected or a scripted reply was never used.

Recorded bodies live in ``tests/data/claude/*.json`` in the real Messages API shape (``load`` reads
one; ``message_body`` builds one around a structured answer).

``forbid_real_network`` is the guard that keeps every test off the real API: it refuses any HTTP
request the SDK's transport sends to a host other than loopback, and clears the environment
variables through which the SDK would find a key, an endpoint or extra headers.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import pytest

from tests.support.paths import DATA

DATA_DIR = DATA / "claude"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
ANTHROPIC_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
)


def load(name: str) -> dict[str, Any]:
    """A recorded response body from tests/data/claude (``name`` without ``.json``)."""
    value = json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def message_body(
    answer: Any, *, stop_reason: str = "end_turn", model: str = "claude-haiku-4-5", msg_id: str = "msg_replay"
) -> dict[str, Any]:
    """A Messages API response whose one text block is ``answer`` (JSON-encoded unless a str)."""
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 812, "output_tokens": 240},
    }


def error_body(status: int, message: str = "") -> dict[str, Any]:
    """The API's error shape for a status (429 rate_limit_error, 529 overloaded_error, ...)."""
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
    kind = kinds.get(status, "api_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": message or kind.replace("_", " ")},
        "request_id": f"req_replay_{status}",
    }


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, headers and a JSON body; ``hang`` waits until the server closes
    (the client times out first); ``drop`` closes the connection without answering."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    drop: bool = False

    @classmethod
    def message(cls, body: dict[str, Any], **headers: str) -> Reply:
        return cls(200, body, {"request-id": "req_replay_ok", **headers})

    @classmethod
    def error(cls, status: int, body: dict[str, Any] | None = None, **headers: str) -> Reply:
        """An error status with a recorded (or made-up) body; ``retry_after="0"`` sends ``retry-after: 0``."""
        named = {k.replace("_", "-"): v for k, v in headers.items()}
        return cls(status, body if body is not None else error_body(status), named)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]

    @property
    def user_text(self) -> str:
        """The text of the first user message."""
        content = self.body["messages"][0]["content"]
        return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)

    @property
    def system_text(self) -> str:
        system = self.body.get("system", "")
        return system if isinstance(system, str) else "".join(b.get("text", "") for b in system)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.server.owner._opened(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_unparsable": raw.decode("utf-8", "replace")}
        owner = self.server.owner
        request = RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        reply = owner._take(request)
        if reply.drop:
            self.close_connection = True
            return
        if reply.hang:
            owner._released.wait(timeout=30)
            self.close_connection = True
            return
        payload = json.dumps(reply.body if reply.body is not None else {}).encode("utf-8")
        self.send_response(reply.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.do_POST()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True  # server_close() joins the handler threads
    owner: ReplayServer


class ReplayServer:
    """A scripted Messages API on 127.0.0.1; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._connections: list[socket.socket] = []
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="claude-replay", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.path != "/v1/messages" or not self._replies:
                self.unexpected.append(request)
                return Reply.error(
                    418, error_body(418, f"no scripted reply for {request.method} {request.path}")
                )
            return self._replies.popleft()

    def _opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.append(connection)

    def start(self) -> ReplayServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._released.set()
        self._httpd.shutdown()
        with self._lock:  # end kept-alive connections so that joining the handler threads cannot block
            for connection in self._connections:
                with contextlib.suppress(OSError):  # already closed by the client
                    connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def assert_all_used(self) -> None:
        assert not self.unexpected, f"unscripted requests: {[(r.method, r.path) for r in self.unexpected]}"
        assert self.pending == 0, f"{self.pending} scripted replies were never requested"


def replay_server_fixture(name: str = "replay") -> Any:
    """A pytest fixture (named ``name``) giving a started ReplayServer; on teardown it is closed and
    the test fails if a request was unscripted or a scripted reply unused. In a test module:
    ``replay = replay_server_fixture()``."""

    @pytest.fixture(name=name)
    def _replay() -> Iterator[ReplayServer]:
        with ReplayServer() as server:
            yield server
        server.assert_all_used()

    return _replay


@dataclass
class NetworkGuard:
    blocked: list[str] = field(default_factory=list)


def forbid_real_network(monkeypatch: pytest.MonkeyPatch) -> NetworkGuard:
    """Refuse every SDK request to a non-loopback host and clear the SDK's environment variables."""
    import httpx2

    for name in ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)
    guard = NetworkGuard()
    original: Callable[..., Any] = httpx2.HTTPTransport.handle_request

    def guarded(self: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        if host not in LOOPBACK_HOSTS:
            guard.blocked.append(str(request.url))
            raise httpx2.ConnectError(f"tests may not reach {host}: use the replay server", request=request)
        response: httpx2.Response = original(self, request)
        return response

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", guarded)
    return guard
