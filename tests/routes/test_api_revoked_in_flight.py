"""A key revoked while its request is on its way changes nothing (issue 27, finding 6): a body trickled in
is cut off after ``api.body_timeout_s``; a key revoked while its body arrives, or while its job waits
for the writer lock, is refused when the change would be made. A real uvicorn API and raw sockets, so
what the client sent and when is exact."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from services.access.keys import revoke_key
from tests.routes.test_api_import_jobs import submit, wait_for_job
from tests.support.api_helpers import RunningApi, read_answer, running_api
from tool_selector.config.settings import ApiSettings, Settings
from tool_selector.embedding.embedders import MiniLMEmbedder


@pytest.fixture
def api(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[RunningApi]:
    settings = Settings(
        data_dir=tmp_path / "unused", cache_dir=session_cache_dir, api=ApiSettings(body_timeout_s=1.0)
    )
    with running_api(api_template, tmp_path / "api", settings, embedder) as running:
        yield running


def chunked_head(method: str, path: str, key: str) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        f"Authorization: Bearer {key}",
        "Transfer-Encoding: chunked",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def answer(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    status, _, body = read_answer(sock)
    return status, body


def connect(api: RunningApi) -> socket.socket:
    parts = urlsplit(api.url)
    assert parts.hostname is not None and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def key_id(api: RunningApi, role: str) -> str:
    return api.keys[role].split("_")[1]


def test_a_body_that_trickles_in_is_refused_408_after_the_body_timeout_and_changes_nothing(
    api: RunningApi,
) -> None:
    with api.client("viewer") as viewer:
        before = viewer.get("/api/v1/servers/time").json()
    with connect(api) as sock:
        sock.sendall(chunked_head("PATCH", "/api/v1/servers/time", api.keys["editor"]))
        sock.sendall(chunk(b'{"description": "Tells the'))  # and then nothing more
        status, body = answer(sock)
    assert status == 408 and body["error"]["code"] == "timeout", body
    assert "api.body_timeout_s" in body["error"]["hint"]
    with api.client("viewer") as viewer:
        assert viewer.get("/api/v1/servers/time").json() == before


def test_a_key_revoked_while_its_body_arrives_changes_nothing(api: RunningApi) -> None:
    with api.client("viewer") as viewer:
        before = viewer.get("/api/v1/servers/time").json()
    with connect(api) as sock:
        sock.sendall(chunked_head("PATCH", "/api/v1/servers/time", api.keys["editor"]))
        sock.sendall(chunk(b'{"description": "Tells the time'))
        with api.container() as container:
            revoke_key(container.store, key_id(api, "editor"), actor="test")
        sock.sendall(chunk(b', and more."}') + chunk(b""))
        status, body = answer(sock)
    assert status == 401 and "revoked" in body["error"]["message"], body
    with api.client("viewer") as viewer:
        assert viewer.get("/api/v1/servers/time").json() == before


def test_an_import_job_whose_key_is_revoked_while_it_waits_for_the_writer_changes_nothing(
    api: RunningApi,
) -> None:
    batch = {"servers": [{"name": "gauges", "description": "Weather gauges."}], "tools": []}
    with api.client("only:import") as importer, api.container() as container:
        with container.writing("a test holding the writer lock"):
            job_id = submit(importer, json.dumps(batch))
            revoke_key(container.store, key_id(api, "only:import"), actor="test")
        with api.client("admin") as admin:
            job = wait_for_job(admin, job_id)
        assert job["state"] == "failed" and "revoked" in json.dumps(job["error"]), job
        assert "gauges" not in {s.name for s in container.store.list_servers()}
