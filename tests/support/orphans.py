"""For the no-orphans tests: the pids that tests/servers/orphaning_server.py reports over a Unix socket
once it runs (its own and its child's), waited for as an event with a deadline; and a guarantee
that none of the processes a test learned of outlives the test, whatever its outcome."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class PidReports:
    """The listening socket and every pid reported on it so far."""

    listener: socket.socket
    pids: set[int] = field(default_factory=set)

    def wait(self, timeout: float, *, starter: subprocess.Popen[bytes]) -> set[int]:
        """The pids of the next report: the server's and its child's. Fails at once, not at the
        deadline, when ``starter`` (the process that is to start the server) exits first."""
        pidfd = os.pidfd_open(starter.pid)
        try:
            ready, _, _ = select.select([self.listener.fileno(), pidfd], [], [], timeout)
        finally:
            os.close(pidfd)
        if self.listener.fileno() not in ready:
            status = "exited" if ready else f"sent nothing within {timeout} s"
            raise AssertionError(f"{starter.args!r} {status}; its log is in the test's tmp_path")
        connection, _ = self.listener.accept()
        with connection:
            connection.settimeout(timeout)
            report = b""
            while chunk := connection.recv(100):  # the server closes after one line
                report += chunk
        pids = {int(p) for p in report.decode().split()}
        self.pids |= pids
        return pids


@contextmanager
def pid_reports(path: Path) -> Iterator[PidReports]:
    """Listen on ``path``; at the end, SIGKILL whatever reported process is still alive."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen()
        reports = PidReports(listener)
        try:
            yield reports
        finally:
            for pid in reports.pids:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
