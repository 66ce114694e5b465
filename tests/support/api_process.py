"""Real ``tool-selector api`` processes for the tests: started with the real CLI on an OS-chosen port,
their stderr read by a thread so that a test waits on what the process logs (an event with a deadline,
never a sleep), and stopped with SIGTERM at the end (SIGKILL if they do not stop).

``listening_url`` reads the URL uvicorn logs once it listens; ``ApiProcess.wait_for`` waits for any
log line (each worker of ``--workers N`` logs its own "Application startup complete").
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from services.access.keys import create_key
from services.root.container import Container
from tool_selector.config.settings import Settings

CLI = Path(sys.executable).parent / "tool-selector"
STARTED = "Application startup complete"
STARTUP_S = 180.0  # a process's start on a busy 2-core machine (the model's session, the index)


def listening_url(process: subprocess.Popen[bytes], timeout: float = 60.0) -> str:
    """The URL uvicorn logs once it listens (an event on the process's stderr, read with a deadline)."""
    assert process.stderr is not None
    deadline, seen = time.monotonic() + timeout, b""
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stderr], [], [], left)
        chunk = os.read(process.stderr.fileno(), 65536) if ready else b""
        if ready and not chunk:
            break  # the process closed stderr: it ended
        seen += chunk
        found = re.search(rb"Uvicorn running on (http://[\d.]+:\d+)", seen)
        if found:
            return found.group(1).decode()
    raise AssertionError(f"the API did not start within {timeout} s:\n{seen.decode(errors='replace')}")


@dataclass
class ApiProcess:
    """A running ``tool-selector api`` and everything it wrote to stderr so far."""

    process: subprocess.Popen[bytes]
    url: str = ""
    log: list[str] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            with self._changed:
                self.log.append(raw.decode(errors="replace"))
                self._changed.notify_all()
        with self._changed:
            self.log.append("")  # stderr closed: the process ended
            self._changed.notify_all()

    def wait_for(self, pattern: str, count: int = 1, timeout: float = STARTUP_S) -> list[str]:
        """Wait until ``count`` lines of stderr match ``pattern``; returns them."""

        def found() -> list[str]:
            return [line for line in self.log if re.search(pattern, line)]

        with self._changed:
            ended = self._changed.wait_for(
                lambda: len(found()) >= count or (bool(self.log) and self.log[-1] == ""), timeout
            )
            lines = found()
        if len(lines) < count:
            why = "it ended" if ended else f"{timeout} s passed"
            shown = f"{pattern!r} logged {len(lines)}/{count} times before {why}"
            raise AssertionError(f"{shown}:\n{self.text()}")
        return lines

    def text(self) -> str:
        with self._changed:
            return "".join(self.log)

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=120.0)

    def stop(self, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def api_env(data: Path, **settings: str) -> dict[str, str]:
    """The environment of an API process on ``data``: this test's (its cache folder included) with
    ``TOOL_SELECTOR_<NAME>`` for each of ``settings`` (``API__WRITE_WAIT_S="0.5"``)."""
    env = {**os.environ, "TOOL_SELECTOR_DATA_DIR": str(data), "TOOL_SELECTOR_LOG_LEVEL": "INFO"}
    env |= {f"TOOL_SELECTOR_{name.upper()}": value for name, value in settings.items()}
    return env


@contextmanager
def api_process(env: dict[str, str], *args: str) -> Iterator[ApiProcess]:
    """``tool-selector api --port 0 ARGS`` with ``env``, listening; stopped at the end."""
    process = subprocess.Popen(
        [str(CLI), "api", "--host", "127.0.0.1", "--port", "0", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    running = ApiProcess(process)
    reader = threading.Thread(target=running.read_stderr, name="api-stderr", daemon=True)
    reader.start()
    try:
        url = running.wait_for(r"Uvicorn running on http://[\d.]+:\d+", timeout=STARTUP_S)[0]
        found = re.search(r"http://[\d.]+:\d+", url)
        assert found is not None
        running.url = found.group(0)
        yield running
    finally:
        running.stop()
        reader.join(30)
        assert process.stderr is not None
        process.stderr.close()


def copy_data(template: Path, target: Path) -> Path:
    """A copy of a data folder (catalog and index) for processes of one test to share."""
    shutil.copytree(template, target)
    return target


def admin_key(data: Path) -> str:
    with Container(Settings(data_dir=data)) as container:
        return create_key(container.store, "processes", role="admin", actor="test").key
