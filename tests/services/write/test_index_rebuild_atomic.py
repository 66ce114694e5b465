"""``index rebuild`` replaces the index in one step: the new generation becomes current only once it is
whole, so a rebuild killed half-way or stopped by a full disk leaves the previous index answering.

The kill is real: a `tool-selector index rebuild` process (the CLI's own ``main``) that pauses after
its n-th index file write (a data file, a meta.json, CURRENT), says so on stdout, and is killed there
with SIGKILL, for every n until the rebuild ends. The full disk is an ``OSError(ENOSPC)`` raised by
the index's file writer once it has written a file that holds documents. Indexed without the model
(tests/support/index_damage.py); resolves run in process with the same stand-in vectors."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index, rebuild_index
from tests.support.catalogs import write_catalog
from tests.support.index_damage import indexed_without_the_model, stand_in
from tool_selector.config.settings import Settings
from tool_selector.core.errors import StoreError
from tool_selector.index.mark import index_is_current
from tool_selector.search.embedded import backend as embedded
from tool_selector.search.embedded import files as embedded_files

TOOLS = {"weather": ["get_forecast", "get_alerts"], "files": ["read_file", "write_file"]}
QUERY = "weather forecast for Paris tomorrow"

# `tool-selector index rebuild` whose index writer stops after its n-th file (argv[1]: a data file, a
# meta.json or CURRENT), says so and waits to be killed
PAUSED_REBUILD = """
import sys
from tool_selector.search.embedded import files as embedded_files

PAUSE_AT, written = int(sys.argv[1]), []

def pausing(write):
    def write_then_maybe_wait(*args, **kwargs):
        write(*args, **kwargs)
        written.append(write.__name__)
        if len(written) == PAUSE_AT:
            print("paused after", write.__name__, flush=True)
            sys.stdin.read()  # until the test kills this process
    return write_then_maybe_wait

for name in ("write_rows", "write_meta", "write_pointer"):  # before the backend imports them
    setattr(embedded_files, name, pausing(getattr(embedded_files, name)))
from routes.cli import main
sys.argv = ["tool-selector", "index", "rebuild"]
main()
"""
PAUSED = "paused after"  # what it prints then


def _settings(root: Path, data: Path) -> Settings:
    return Settings(data_dir=data, cache_dir=root / "cache")


def _current(data: Path) -> str:
    return (data / "index" / "CURRENT").read_text(encoding="utf-8")


def _answers(settings: Settings, *, stale: bool = False) -> tuple[int, str]:
    """A fresh process's view: how many tools the index holds, and the best power for QUERY."""
    with Container(settings, embedder=stand_in()) as container:
        resolution, decision = ReadPath.fixed(container, allow_stale=stale).decide(QUERY)
        assert resolution.tools, decision
        return container.backend.count(), resolution.tools[0].server


def _rebuild_killed_after_write(n: int, data: Path, cache: Path) -> str | None:
    """Run `tool-selector index rebuild` and SIGKILL it after its n-th file write: which write that
    was, or None when the rebuild finished before making n writes."""
    env = {**os.environ, "TOOL_SELECTOR_DATA_DIR": str(data), "TOOL_SELECTOR_CACHE_DIR": str(cache)}
    command = [sys.executable, "-c", PAUSED_REBUILD, str(n)]
    with subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as rebuild:
        assert rebuild.stdout is not None and rebuild.stderr is not None
        said = rebuild.stdout.readline()  # waits for the pause (or the rebuild's JSON summary)
        if not said.startswith(PAUSED):
            _, err = rebuild.communicate()
            assert rebuild.returncode == 0, err
            return None
        rebuild.send_signal(signal.SIGKILL)
        assert rebuild.wait() == -signal.SIGKILL
        return said.split()[-1]


def test_a_rebuild_killed_after_any_file_it_writes_leaves_an_index_that_answers_whole(tmp_path: Path) -> None:
    data = indexed_without_the_model(tmp_path, TOOLS)
    settings = _settings(tmp_path, data)
    killed: list[str] = []
    while (write := _rebuild_killed_after_write(len(killed) + 1, data, tmp_path / "cache")) is not None:
        killed.append(write)
        assert _answers(settings) == (4, "weather"), f"killed after {killed}"
        with Container(settings, embedder=stand_in()) as container:
            assert index_is_current(container)
    assert "write_rows" in killed and "write_pointer" in killed  # killed amid the files, and at the swap
    assert _answers(settings) == (4, "weather")  # the rebuild that ran to its end


def _disk_full_for_documents(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A disk with room for an empty index file but not for documents: the index's file writer (in
    both modules that call it) writes what it is given, then fails with ENOSPC when that held
    documents. Returns the folders it failed in."""
    real_write_rows = embedded_files.write_rows
    failed: list[Path] = []

    def write_rows_on_a_full_disk(folder: Path, docs: Sequence[Any], *args: Any, **kwargs: Any) -> None:
        real_write_rows(folder, docs, *args, **kwargs)
        if docs:
            failed.append(folder)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(embedded_files, "write_rows", write_rows_on_a_full_disk)
    monkeypatch.setattr(embedded, "write_rows", write_rows_on_a_full_disk)
    return failed


def test_a_full_disk_during_a_rebuild_over_a_stale_index_leaves_the_previous_generation_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = indexed_without_the_model(tmp_path, TOOLS)
    settings = _settings(tmp_path, data)
    before = _current(data)
    with Container(settings, embedder=stand_in()) as container:
        grown = write_catalog(tmp_path / "grown", {**TOOLS, "files": [*TOOLS["files"], "move_file"]})
        import_catalog_dir(container, grown, approve=True, actor="test")  # the index is now stale
        failed = _disk_full_for_documents(monkeypatch)
        with pytest.raises(StoreError, match="No space left on device"):
            rebuild_index(container)
        assert failed, "the disk never filled: the rebuild did not reach the index's files"
        assert not any(folder.exists() for folder in failed)  # what it wrote was removed
        assert _current(data) == before
        assert container.backend.count() == 4  # this process still serves the previous index
        assert not index_is_current(container)  # and it stays marked stale
    assert _answers(settings, stale=True) == (4, "weather")

    monkeypatch.undo()  # room on the disk again: the next build brings the index up to date
    with Container(settings, embedder=stand_in()) as container:
        assert build_index(container).written == 1
        assert container.backend.count() == 5 and index_is_current(container)
