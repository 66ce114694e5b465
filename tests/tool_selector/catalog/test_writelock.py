"""The writer lock of a data folder (tool_selector/catalog/writelock.py) between real processes, and the
process
identity it and the jobs rely on (tool_selector/core/processes.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tool_selector.catalog.writelock import write_lock_for
from tool_selector.core.errors import LockedError
from tool_selector.core.processes import ProcessRef, current_process, is_running

HOLDER = """
import sys
from pathlib import Path
from tool_selector.catalog.writelock import write_lock_for
with write_lock_for(Path(sys.argv[1])).held("a test write", wait_s=0):
    print("held", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def holder_process(lock: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock until its stdin is closed (it says "held" once it has it)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "held\n"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


def test_a_second_process_is_refused_naming_the_holder_and_gets_the_lock_once_it_is_let_go(
    tmp_path: Path,
) -> None:
    lock = write_lock_for(tmp_path / "write.lock")
    with holder_process(lock.path) as other:
        assert lock.busy() and not lock.held_here()
        holder = lock.holder()
        assert holder is not None and holder.process.pid == other.pid and holder.what == "a test write"
        with pytest.raises(LockedError) as refused, lock.held("a registration", wait_s=0.2):
            pytest.fail("the lock was taken while another process held it")
        error = refused.value
        assert f"pid {other.pid}" in error.message and "a test write" in error.message
        assert "waited 0.2 s" in error.message and str(lock.path) in error.message
        assert f"If pid {other.pid} is stuck, stop it" in error.hint
        assert error.details["holder"]["process"]["pid"] == other.pid
        assert other.stdin is not None
        other.stdin.close()  # it lets go while we wait
        with lock.held("a registration", wait_s=30):
            assert lock.held_here() and lock.holder() is not None
            assert lock.holder().what == "a registration"  # type: ignore[union-attr]
    assert not lock.busy() and lock.path.read_text() == ""  # nobody is named once it is free


def test_a_holder_killed_with_sigkill_frees_the_lock_and_is_no_longer_named(tmp_path: Path) -> None:
    lock = write_lock_for(tmp_path / "write.lock")
    with holder_process(lock.path) as other:
        other.send_signal(signal.SIGKILL)
        other.wait(30)
        assert lock.path.read_text()  # the file still names it ...
        assert lock.holder() is None and not lock.busy()  # ... but it has ended
        with lock.held("after the crash", wait_s=0):
            assert lock.held_here()


def test_the_holding_thread_takes_the_lock_again_and_other_threads_wait_their_turn(tmp_path: Path) -> None:
    lock = write_lock_for(tmp_path / "write.lock")
    refused: list[LockedError] = []

    def other_thread() -> None:
        try:
            with lock.held("another thread's write", wait_s=0.1):
                pass
        except LockedError as exc:
            refused.append(exc)

    with lock.held("an import", wait_s=0), lock.held("its index refresh", wait_s=0):
        holder = lock.holder()
        assert holder is not None and holder.what == "an import"  # the outermost names the holder
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(30)
    assert (
        len(refused) == 1 and f"pid {os.getpid()}" in refused[0].message and "an import" in refused[0].message
    )
    assert write_lock_for(tmp_path / "write.lock") is lock  # one per file and process, whoever asks


def test_a_pid_given_again_to_a_newer_process_or_one_of_another_host_is_not_taken_for_the_owner() -> None:
    me = current_process()
    assert is_running(me) is True
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait(30)
    assert is_running(ProcessRef(pid=ended.pid, host=me.host)) is False
    if me.started is not None:  # Linux: the start time tells a reused pid apart
        assert is_running(me.model_copy(update={"started": me.started + 1})) is False
    assert is_running(me.model_copy(update={"host": me.host + "-elsewhere"})) is None
