"""The writer lock of a data folder: one writer at a time across every process on the machine.

Every change to the catalog and the search index (a REST registration, an import or sync job, the CLI's
``sync``, ``catalog import``, ``index build``, ``servers add`` ...) runs while holding it, so two writers
never interleave: the second one plans its change on what the first one wrote, and neither overwrites
the other's index generation. Readers (resolve, search, the gateway) never take it.

It is an OS file lock (``flock``) on ``<data_dir>/write.lock``, released by the OS when the holder ends,
even on SIGKILL, so a leftover file is harmless. While it is held the file names the holder (pid,
host, command, what it does, since when) for the error a waiting writer gets. Within one process it
is re-entrant for the thread holding it (a registration that refreshes the index takes it once), and
other threads wait their turn in the same queue as other processes.

A writer waits up to its ``wait_s`` (the ``write_lock_timeout_s`` setting), polling, and then fails
with ``LockedError`` naming the holder and what to do.

A disk that refuses a write (full, quota, file-size limit, read-only) while the lock is taken (its
file names the holder) or while it is held ends the write as one ``StoreError`` saying what to do
(tool_selector/core/disk.py), never in a traceback: every write under it is atomic, so nothing is
left half-written.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from tool_selector.core.disk import disk_refused
from tool_selector.core.errors import LockedError
from tool_selector.core.processes import ProcessRef, command_line, current_process, is_running

logger = logging.getLogger(__name__)

WRITE_LOCK_FILE = "write.lock"
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.005, 0.1


class LockHolder(BaseModel):
    """What the lock file says while the lock is held."""

    process: ProcessRef
    command: str
    what: str
    since: datetime

    def describe(self) -> str:
        ago = max(0.0, (datetime.now(UTC) - self.since).total_seconds())
        return (
            f"pid {self.process.pid}, `{self.command}`: {self.what}, since "
            f"{self.since.isoformat(timespec='seconds')}, {ago:.0f} s ago"
        )


class WriteLock:
    """The writer lock of one lock file; one object per file and process (``write_lock_for``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()  # this process's threads, in turn; re-entrant
        self._depth = 0
        self._fd: int | None = None
        self._holder: LockHolder | None = None

    @contextmanager
    def held(self, what: str, *, wait_s: float) -> Iterator[None]:
        """Hold the lock while the block runs: waits up to ``wait_s`` (0: one try), then LockedError."""
        started = time.monotonic()
        if not self._thread_lock.acquire(timeout=max(wait_s, 0.0)):
            raise self._refused(self._holder, time.monotonic() - started)
        try:
            if self._depth == 0:
                self._take(what, deadline=started + wait_s, started=started)
            self._depth += 1
            try:
                yield
            except (OSError, sqlite3.OperationalError) as exc:  # a write under the lock the disk refused
                refused = disk_refused(exc, "A file of the data folder", self.path.parent)
                if refused is None:
                    raise
                raise refused from exc
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._give_back()
        finally:
            self._thread_lock.release()

    def held_here(self) -> bool:
        """Whether a thread of this process holds it now."""
        return self._depth > 0

    def holder(self) -> LockHolder | None:
        """Who holds the lock, read from the file: None when nobody does, or when the process named
        there has ended (the OS freed its lock). Takes nothing: readers may ask."""
        if self._depth > 0 and self._holder is not None:
            return self._holder
        try:
            with self.path.open("rb") as fh:
                raw = fh.read(4096)
        except OSError:
            return None
        found = _parse(raw)
        if found is None or is_running(found.process) is False:
            return None
        return found

    def busy(self) -> bool:
        """Whether some writer (this process or another) is changing the catalog and the index now."""
        return self._depth > 0 or self.holder() is not None

    # -- the file --------------------------------------------------------------------------------

    def _take(self, what: str, *, deadline: float, started: float) -> None:
        try:
            self._take_file(what, deadline=deadline, started=started)
        except OSError as exc:
            refused = disk_refused(exc, f"The writer lock {self.path}", self.path.parent)
            if refused is None:
                raise
            raise refused from exc

    def _take_file(self, what: str, *, deadline: float, started: float) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            pause = _FIRST_PAUSE_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        holder = _parse(os.pread(fd, 4096, 0))
                        raise self._refused(holder, time.monotonic() - started) from None
                    time.sleep(min(pause, left))
                    pause = min(pause * 2, _LONGEST_PAUSE_S)
            holder = LockHolder(
                process=current_process(), command=command_line(), what=what, since=datetime.now(UTC)
            )
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.model_dump_json().encode(), 0)
        except BaseException:
            os.close(fd)  # closing drops the flock too, if it was taken
            raise
        self._fd, self._holder = fd, holder
        logger.info("writer lock %s held for %s (waited %.2f s)", self.path, what, time.monotonic() - started)

    def _give_back(self) -> None:
        fd, self._fd, self._holder = self._fd, None, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)  # nobody is named once it is free
        os.close(fd)

    def _refused(self, holder: LockHolder | None, waited: float) -> LockedError:
        who = holder.describe() if holder is not None else "a process the lock file does not name"
        pid = holder.process.pid if holder is not None else None
        return LockedError(
            f"Another writer is changing the catalog and the index ({who}); waited {waited:.1f} s for "
            f"the writer lock {self.path}.",
            hint="Retry when it has finished; nothing was changed. A write waits up to "
            "write_lock_timeout_s (TOOL_SELECTOR_WRITE_LOCK_TIMEOUT_S; api.write_wait_s for the REST API). "
            + (
                f"If pid {pid} is stuck, stop it: the OS frees the lock when it exits (never delete "
                f"{self.path.name})."
                if pid is not None
                else ""
            ),
            holder=None if holder is None else holder.model_dump(mode="json"),
            lock=str(self.path),
        )


def _parse(raw: bytes) -> LockHolder | None:
    if not raw.strip():
        return None
    try:
        return LockHolder.model_validate_json(raw)
    except ValidationError:
        return None


_locks: dict[Path, WriteLock] = {}
_locks_lock = threading.Lock()


def write_lock_for(path: Path) -> WriteLock:
    """The one ``WriteLock`` of this process for a lock file, whichever container asks: threads of one
    process then queue on one lock, and a thread holding it may take it again through another container."""
    key = path.absolute()
    with _locks_lock:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = WriteLock(key)
        return lock
