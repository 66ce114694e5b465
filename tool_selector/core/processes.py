"""Which process owns something (a job, the writer lock), and whether that process still runs.

A ``ProcessRef`` is a pid with its host and, on Linux, its start time (clock ticks after boot, from
``/proc/<pid>/stat``): a pid the kernel gave again to a newer process has another start time, so a
process that died is never taken for one that runs. A process of another host cannot be checked from
here (the data folder is meant for one machine): ``is_running`` says so with ``None``.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ProcessRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    pid: int
    host: str
    started: int | None = None  # clock ticks after boot (Linux); tells a reused pid apart


def _stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time from ``/proc/<pid>/stat``; None where there is no /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # after "pid (comm) ": the name may hold spaces
    try:
        return fields[0], int(fields[19])  # state (field 3) and starttime (field 22)
    except (IndexError, ValueError):
        return None


_current: ProcessRef | None = None


def current_process() -> ProcessRef:
    """This process (computed again after a fork)."""
    global _current
    if _current is None or _current.pid != os.getpid():
        pid = os.getpid()
        stat = _stat(pid)
        _current = ProcessRef(pid=pid, host=socket.gethostname(), started=None if stat is None else stat[1])
    return _current


def is_running(ref: ProcessRef) -> bool | None:
    """True while the process runs, False once it ended (or its pid belongs to a newer process); None
    for a process of another host, which cannot be checked from here."""
    if ref.host != socket.gethostname():
        return None
    try:
        os.kill(ref.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    stat = _stat(ref.pid)
    if stat is None:
        return True
    state, started = stat
    if state in ("Z", "X"):  # ended, not yet reaped by its parent
        return False
    return ref.started is None or started == ref.started


def command_line() -> str:
    """What runs in this process, for a person reading a lock or a job: the program and its sub-command
    words (``tool-selector servers add``), never option values, which may hold secrets."""
    words = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"]
    for arg in sys.argv[1:4]:
        if arg.startswith("-"):
            break
        words.append(arg)
    return " ".join(words)[:200]
