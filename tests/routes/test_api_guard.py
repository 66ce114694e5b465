"""The REST API checks the key, then the body's size, before it reads the body (issue 15): the real
API on a real uvicorn server, with the body caps lowered (64 KiB, 1 MiB for an import) so that the
tests send little. What a client sent is known exactly: raw sockets, or a body generator that
counts what was pulled from it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.api_helpers import RunningApi, read_answer, running_api
from tool_selector.config.settings import ApiSettings, Settings
from tool_selector.embedding.embedders import MiniLMEmbedder

V1 = "/api/v1"
CAP = 64 * 1024
IMPORT_CAP = 2**20
HUGE = 200 * 2**20  # what the finding sent


@pytest.fixture
def api(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[RunningApi]:
    caps = ApiSettings(max_body_bytes=CAP, max_import_bytes=IMPORT_CAP)
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=session_cache_dir, api=caps)
    with running_api(api_template, tmp_path / "api", settings, embedder) as running:
        yield running


def raw_exchange(url: str, head: str, body: bytes = b"") -> tuple[int, dict[str, str], dict[str, Any]]:
    """Send a request's head (and ``body``, however short of what the head announces), then read the
    answer: (status, headers, JSON body). A server that waits for the rest of the body never answers,
    and the read fails after 30 s."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        return read_answer(sock)


def head(path: str, length: int, key: str | None = None) -> str:
    auth = f"Authorization: Bearer {key}\n" if key else ""
    fixed = f"POST {path} HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
    return f"{fixed}{auth}Content-Length: {length}\n"


class Counted:
    """A request body that says how much of it the client was asked for (chunked: no Content-Length)."""

    def __init__(self, total: int) -> None:
        self.total, self.pulled = total, 0

    def __iter__(self) -> Iterator[bytes]:
        chunk = b"x" * 65536
        while self.pulled < self.total:
            self.pulled += len(chunk)
            yield chunk


def test_an_unauthenticated_200_mb_post_is_answered_401_before_its_body_is_sent(api: RunningApi) -> None:
    status, headers, body = raw_exchange(api.url, head(f"{V1}/resolve", HUGE))
    assert status == 401 and headers["www-authenticate"] == "Bearer", body
    assert body["error"]["code"] == "unauthorized" and "Authorization: Bearer" in body["error"]["message"]
    assert headers["connection"] == "close"  # the 200 MB are not read, not even to drop them


def test_an_unauthenticated_streamed_body_is_refused_401_after_the_client_sent_a_few_chunks(
    api: RunningApi,
) -> None:
    body = Counted(HUGE)
    with api.client(None) as client:
        refused = client.post(f"{V1}/resolve", content=body)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
    assert body.pulled < 16 * 2**20, f"the client was made to send {body.pulled} bytes"


def test_an_authenticated_body_over_the_cap_is_refused_413_naming_the_limit_and_the_setting(
    api: RunningApi,
) -> None:
    status, headers, answered = raw_exchange(api.url, head(f"{V1}/resolve", CAP + 1, api.keys["viewer"]))
    assert status == 413 and headers["connection"] == "close", answered
    error = answered["error"]
    assert error["code"] == "too_large" and "64 KiB (65536 bytes)" in error["message"]
    assert "api.max_body_bytes" in error["hint"] and "TOOL_SELECTOR_API__MAX_BODY_BYTES" in error["hint"]
    body = Counted(HUGE)
    with api.client("viewer") as client:
        streamed = client.post(f"{V1}/resolve", content=body)
    assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "too_large", streamed.text
    assert "64 KiB" in streamed.json()["error"]["message"]
    assert body.pulled < 16 * 2**20, f"the client was made to send {body.pulled} bytes"


def _catalog(tools: int) -> bytes:
    text = "Reads one gauge of the weather station and returns its value with units. " * 8
    listed = [{"server": "gauges", "name": f"read_gauge_{i}", "description": text} for i in range(tools)]
    servers = [{"name": "gauges", "description": "Weather station gauges."}]
    return json.dumps({"servers": servers, "tools": listed}).encode()


def test_the_import_route_takes_a_catalog_over_the_default_cap_up_to_its_own(api: RunningApi) -> None:
    catalog = _catalog(300)
    assert CAP < len(catalog) < IMPORT_CAP
    json_type = {"Content-Type": "application/json"}
    with api.client("editor") as client:
        accepted = client.post(f"{V1}/catalog/import", content=catalog, headers=json_type)
        assert accepted.status_code == 202, accepted.text
        elsewhere = client.post(f"{V1}/servers", content=catalog, headers=json_type)
        assert elsewhere.status_code == 413 and "api.max_body_bytes" in elsewhere.json()["error"]["hint"]
        too_big = client.post(f"{V1}/catalog/import", content=_catalog(2000), headers=json_type)
    assert too_big.status_code == 413, too_big.text
    error = too_big.json()["error"]
    assert "1 MiB" in error["message"] and "api.max_import_bytes" in error["hint"]


def test_a_key_without_the_routes_scope_still_gets_403_and_health_needs_no_key(api: RunningApi) -> None:
    with api.client("only:import") as client:
        refused = client.post(f"{V1}/resolve", json={"query": "what time is it"})
    assert refused.status_code == 403 and "'read'" in refused.json()["error"]["message"]
    with api.client(None) as anonymous:
        assert anonymous.get("/health").status_code == 200
        assert anonymous.post(f"{V1}/resolve", json={"query": "x"}).status_code == 401
