"""A real uvicorn server on loopback serving the REST API over a fresh copy of the gateway-demo catalog.

``running_api`` starts ``routes.api.build_app`` on an OS-chosen port in a thread and waits for
uvicorn's own startup (an event, no polling), with one API key per role and one per single scope.
The embedding model is the session's real one, so a start costs only the catalog copy.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from routes.api import build_app
from services.access.keys import create_key
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import build_index
from tests.support.paths import GATEWAY_DEMO
from tests.support.uvicorn_thread import serving
from tool_selector.catalog.admin import ROLE_SCOPES, SCOPES
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import Embedder


@dataclass
class RunningApi:
    url: str
    settings: Settings
    embedder: Embedder
    keys: dict[str, str] = field(default_factory=dict)

    def client(self, who: str | None = "admin") -> httpx.Client:
        """An HTTP client sending the key of a role (viewer, contributor, editor, admin), of a single
        scope ("only:write"), or none (``None``)."""
        headers = {} if who is None else {"Authorization": f"Bearer {self.keys[who]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120.0)

    def container(self) -> Container:
        """A second view of the same data folder (what another process would see)."""
        return Container(self.settings, embedder=self.embedder)


def make_template(directory: Path, settings: Settings, embedder: Embedder) -> Path:
    """The gateway-demo catalog imported, enriched (offline) and indexed once, as a sync leaves a data
    folder; tests copy it. (A registration enriches only its own server.)"""
    data = directory / "data"
    with Container(settings.model_copy(update={"data_dir": data}), embedder=embedder) as container:
        import_catalog_dir(container, GATEWAY_DEMO, approve=True, actor="test")
        enrich_catalog(container, container.enrichers("offline"))
        build_index(container)
    return data


@contextmanager
def running_api(
    template: Path, workdir: Path, settings: Settings, embedder: Embedder
) -> Iterator[RunningApi]:
    data = workdir / "data"
    shutil.copytree(template, data)
    run_settings = settings.model_copy(update={"data_dir": data})
    api = RunningApi(url="", settings=run_settings, embedder=embedder)
    with api.container() as container:
        for role in ROLE_SCOPES:
            api.keys[role] = create_key(container.store, f"test-{role}", role=role, actor="test").key
        for scope in SCOPES:
            only = create_key(container.store, f"only-{scope}", role="admin", scopes=[scope], actor="test")
            api.keys[f"only:{scope}"] = only.key
    app = build_app(run_settings, make_container=lambda: Container(run_settings, embedder=embedder))
    with serving(app, "uvicorn-test") as url:
        api.url = url
        yield api


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], dict[str, Any]]:
    """Read one HTTP answer off a raw socket: (status, headers in lower case, JSON body). Fails when the
    connection closes without one (or, through the socket's timeout, when none comes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the connection closed without an answer: {data!r}"
        data += chunk
    raw_head, rest = data.split(b"\r\n\r\n", 1)
    lines = raw_head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    while len(rest) < int(headers["content-length"]):
        rest += sock.recv(65536)
    return int(lines[0].split()[1]), headers, json.loads(rest)
