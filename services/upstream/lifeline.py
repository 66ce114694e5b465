"""Upstream servers die with the process that started them: the lifeline launcher (Linux).

The mcp SDK starts a stdio server in a session of its own and stops it by closing its stdin, then
SIGTERM and SIGKILL to its process group. When tool-selector itself is killed (``kill -9``, the OOM
killer) none of that runs, and a server that ignores a closed stdin lives on, with its children. So
on Linux ``open_session`` has the SDK start this file in front of the configured command::

    python -I -S lifeline.py PARENT_PID -- COMMAND ARGS...

The launcher asks the kernel for a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``), then
forks and execs COMMAND with ARGS exactly, with the environment it was given (read back from
``/proc/self/environ``, before Python's C-locale coercion adds ``LC_CTYPE``), in the launcher's own
process group (the session the SDK made for it). It lets go of its copies of stdin, stdout and
stderr, so the server's pipes pass straight through (nothing is relayed), and waits:

- the server exits: the launcher exits with its status (128 + N after signal N);
- the parent is gone: SIGTERM to the group, up to ``GRACE_S`` for the server to exit, then SIGKILL
  to the group, the launcher included. Every child that stayed in the group dies with it.

Signals sent to the group (the SDK's shutdown) reach the server as before; the launcher itself
ignores SIGTERM, SIGINT and SIGHUP so that it watches until the server is gone. The kernel sends the
death signal when the *thread* that started the launcher exits, so the launcher acts on it only
when its parent process is gone too (``getppid`` changed). Where this cannot work (not Linux, no
interpreter file) the command is started directly, as before. Only the standard library is used
here: the launcher runs without site-packages (``-S``) to start fast.
"""

from __future__ import annotations

import errno
import os
import sys
import time

# Every import is paid at each server start: the launcher needs neither ``typing`` nor the enums of
# ``signal`` (together 10-20 ms), so it imports the C module under it and only the checkers see more.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from collections.abc import Iterable, Mapping, Sequence
    from typing import NoReturn
else:
    import _signal as signal

GRACE_S = 2.0
"""After the parent died: how long the server has between SIGTERM and SIGKILL (the SDK's own figure)."""

LAUNCHER = os.path.abspath(__file__)
_PR_SET_PDEATHSIG = 1
_DEATH_SIGNAL = signal.SIGUSR1
_GROUP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # the server gets them too
_WATCHED = {signal.SIGCHLD, _DEATH_SIGNAL, *_GROUP_SIGNALS}
# Python ignores these; subprocess puts them back to default in a child, and so does the launcher.
_RESTORED = (signal.SIGPIPE, signal.SIGXFSZ)


def available() -> bool:
    """Whether upstream servers can be tied to this process here."""
    return sys.platform.startswith("linux") and bool(sys.executable) and os.path.isfile(LAUNCHER)


def guarded(
    command: str, args: Sequence[str], *, env: Mapping[str, str], cwd: str | None
) -> tuple[str, list[str]]:
    """The command and args to start instead of ``command args``: the launcher around them where it
    works, else them unchanged. Raises the ``OSError`` that starting ``command`` directly would
    (ENOENT, EACCES), since the launcher itself always starts."""
    if not available():
        return command, list(args)
    check_executable(command, env=env, cwd=cwd)
    return sys.executable, ["-I", "-S", LAUNCHER, str(os.getpid()), "--", command, *args]


def check_executable(command: str, *, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise ``OSError`` as exec would when ``command`` (looked up in ``env``'s PATH unless it holds a
    slash; relative to ``cwd``) is not an executable file: EACCES if some candidate exists, else ENOENT."""
    names = [command] if os.sep in command else [os.path.join(d, command) for d in os.get_exec_path(env)]
    code = errno.ENOENT
    for name in names:
        path = os.path.join(cwd, name) if cwd else name
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return
        if os.path.exists(path):
            code = errno.EACCES
    raise OSError(code, os.strerror(code), command)


# -- the launcher process --------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--" or not argv[1].isdigit():
        os.write(2, b"usage: python -I -S lifeline.py PARENT_PID -- COMMAND [ARGS...]\n")
        return 2
    parent, command, args = int(argv[1]), argv[3], argv[3:]
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)  # waited for with sigwait, never handled
    if os.getpgrp() != os.getpid():
        os.setpgid(0, 0)  # the SDK made us a group leader; never signal a group we do not lead
    _ask_for_death_signal()
    if os.getppid() != parent:
        return 1  # the parent died before the signal was armed: nobody waits for this server
    env = _given_environment()
    child = os.fork()
    if child == 0:
        _become(command, args, env, mask)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # the server's pipes are its own: EOF and EPIPE as without the launcher
    os.close(null)
    while True:
        received = signal.sigwait(_WATCHED)
        if received == signal.SIGCHLD:
            status = _reaped(child)
            if status is not None:
                code = os.waitstatus_to_exitcode(status)
                return code if code >= 0 else 128 - code
        elif received == _DEATH_SIGNAL and os.getppid() != parent:
            _stop_group(child)
        # SIGTERM, SIGINT, SIGHUP went to the whole group: the server has them; keep watching it


def _become(command: str, args: list[str], env: dict[bytes, bytes], mask: Iterable[int]) -> NoReturn:
    """In the forked child: signals as a subprocess would have them, then exec the command."""
    try:
        for restored in _RESTORED:
            signal.signal(restored, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.execvpe(command, args, env)  # PATH from env, as subprocess searches it
    except OSError as exc:
        os.write(2, f"tool-selector: could not start {command!r}: {exc.strerror or exc}\n".encode())
    finally:
        os._exit(127)


def _ask_for_death_signal() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        result: int = libc.prctl(_PR_SET_PDEATHSIG, int(_DEATH_SIGNAL), 0, 0, 0)
    except (OSError, AttributeError):
        return False
    return result == 0


def _given_environment() -> dict[bytes, bytes]:
    """The environment this process was started with, byte for byte."""
    try:
        with open("/proc/self/environ", "rb") as given:
            raw = given.read()
    except OSError:
        return dict(os.environb)
    pairs = (item.partition(b"=") for item in raw.split(b"\0"))
    return {key: value for key, sep, value in pairs if key and sep}


def _reaped(child: int) -> int | None:
    """The child's wait status once it has exited, else None."""
    try:
        pid, status = os.waitpid(child, os.WNOHANG)
    except ChildProcessError:
        return 0  # reaped already (SIGCHLD ignored by whoever started us)
    return status if pid == child else None


def _stop_group(child: int) -> None:
    group = os.getpid()
    os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while _reaped(child) is None and (left := deadline - time.monotonic()) > 0:
        signal.sigtimedwait({signal.SIGCHLD}, left)
    os.killpg(group, signal.SIGKILL)  # what is left of the group, and this process


if __name__ == "__main__":
    os._exit(main(sys.argv))
