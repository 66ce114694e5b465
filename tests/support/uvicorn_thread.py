"""An ASGI app on a real uvicorn server on loopback, run in a thread of the test process: the REST
API's tests and the upstream MCP servers the fast gateway tests talk to over streamable HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()

    def install_signal_handlers(self) -> None:  # a test thread: the test runner owns the signals
        pass


@contextmanager
def serving(app: Any, name: str) -> Iterator[str]:
    """Serves ``app`` on a free port of 127.0.0.1 until the block ends; yields ``http://127.0.0.1:PORT``."""
    server = _Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    try:
        if not server.ready.wait(60) or not server.started:
            raise RuntimeError(f"{name} did not start within 60 s")
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)
