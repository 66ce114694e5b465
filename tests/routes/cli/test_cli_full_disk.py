"""A disk that refuses a catalog write (issue 27, finding 5): a real `tool-selector catalog import`
process whose files may not grow past a limit (RLIMIT_FSIZE, with SIGXFSZ ignored, so a write fails as
on a full disk) exits with the `store` error, code 13, names the repair, and what was stored before is
intact.

Issue 39: the same for every command that writes, on a disk already full (no file may grow at all) and on
one nearly full (the writer lock's few bytes fit, the catalog's pages do not), while another process (a
running gateway) holds the catalog open: `sync`, `catalog import`, `index build`, `index rebuild`,
`servers add`, `keys create`, `quarantine approve`, `memory clear` and `init` each end with the store
error and its repair, never a traceback, and nothing stored before is changed or lost."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import make_cache_dir
from tests.support.catalogs import write_catalog
from tests.support.gateway_helpers import CLI


def limited(max_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return apply


def cli(
    data: Path, *args: str, max_bytes: int | None = None, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_")}
    env["TOOL_SELECTOR_DATA_DIR"] = str(data)
    env["TOOL_SELECTOR_TRUST__INTENT"] = "false"  # as in every test that does not test the check (conftest)
    if cache is not None:
        env["TOOL_SELECTOR_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [str(CLI), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=None if max_bytes is None else limited(max_bytes),
        check=False,
    )


def big_catalog(folder: Path, tools: int) -> Path:
    write_catalog(folder, {"bulk": [f"tool_{i}" for i in range(tools)]})
    listed = json.loads((folder / "tools.json").read_text())
    for item in listed:
        item["description"] = f"{item['name']} " + "does one careful thing with many words " * 40
    (folder / "tools.json").write_text(json.dumps(listed))
    return folder


def test_a_catalog_import_the_disk_refuses_exits_13_with_the_repair_and_keeps_what_was_stored(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    small = write_catalog(tmp_path / "small", {"weather": ["get_forecast", "get_alerts"]})
    assert cli(data, "catalog", "import", str(small), "--approve").returncode == 0
    db = data / "catalog.db"
    wal = db.with_name("catalog.db-wal")
    room = max(db.stat().st_size, wal.stat().st_size if wal.exists() else 0) + 64 * 1024

    refused = cli(data, "catalog", "import", str(big_catalog(tmp_path / "big", 3000)), max_bytes=room)

    assert refused.returncode == 13, refused.stderr
    assert "error [store]" in refused.stderr and "Traceback" not in refused.stderr
    assert "could not be written" in refused.stderr and "Free disk space" in refused.stderr
    assert refused.stdout == ""
    with closing(sqlite3.connect(db)) as conn:
        tools = {row[0] for row in conn.execute("SELECT id FROM tools")}
    assert tools == {"weather::get_forecast", "weather::get_alerts"}
    listed = cli(data, "catalog", "list")
    assert listed.returncode == 0 and "weather" in listed.stdout


# -- every command that writes, on a disk already full (issue 39) -------------------------------------

FULL, NEARLY_FULL = 0, 4096  # RLIMIT_FSIZE: no file may grow; only the lock file's first bytes fit


@dataclass
class Folder:
    data: Path
    cache: Path
    files: Path
    held: str  # a pending quarantine entry


def snapshot(folder: Folder) -> dict[str, object]:
    """What a failed command must leave as it was: the catalog's rows, the servers file, the index."""
    with closing(sqlite3.connect(folder.data / "catalog.db")) as conn:
        rows = {
            table: sorted(map(tuple, conn.execute(f"SELECT * FROM {table}")))
            for table in ("servers", "tools", "tool_pins", "quarantine", "api_keys", "choices", "audit")
        }
    servers = folder.data / "servers.json"
    index = folder.data / "index"
    generation = index / (index / "CURRENT").read_text().strip()  # a rebuild may swap in an equal one
    return {
        **rows,
        "servers.json": servers.read_bytes() if servers.exists() else None,
        "index": {p.name: p.read_bytes() for p in generation.iterdir() if p.name != "meta.json"},
    }


@pytest.fixture
def folder(tmp_path: Path, real_model: Path) -> Folder:
    data, files = tmp_path / "data", tmp_path / "files"
    cache = make_cache_dir(tmp_path / "cache")
    weather = write_catalog(files / "weather", {"weather": ["get_forecast", "get_alerts"]})
    tides = write_catalog(files / "tides", {"tides": ["get_tide"]})
    write_catalog(files / "more", {"harbour": ["get_berth"]})
    client = files / "claude_desktop_config.json"
    client.write_text(json.dumps({"mcpServers": {"clock": {"command": "/bin/true"}}}))
    for args in (
        ("catalog", "import", str(weather), "--approve"),
        ("catalog", "import", str(tides)),  # held: trust.imported is approve
        ("servers", "add", "stub", "--disabled", "--", "/bin/true"),
        ("index", "build"),
    ):
        done = cli(data, *args, cache=cache)
        assert done.returncode == 0, (args, done.stderr)
    with closing(sqlite3.connect(data / "catalog.db")) as conn:
        held = str(conn.execute("SELECT id FROM quarantine WHERE state = 'pending'").fetchone()[0])
    return Folder(data, cache, files, held)


def commands(folder: Folder) -> dict[str, tuple[str, ...]]:
    return {
        "sync": ("sync", "--json"),
        "catalog import": ("catalog", "import", str(folder.files / "more"), "--approve"),
        "index build": ("index", "build"),
        "index rebuild": ("index", "rebuild"),
        "servers add": ("servers", "add", "clock", "--", "/bin/true"),
        "keys create": ("keys", "create", "ci-bot", "--role", "viewer"),
        "quarantine approve": ("quarantine", "approve", folder.held),
        "memory clear": ("memory", "clear", "--yes"),
        "init": ("init", "--from", str(folder.files / "claude_desktop_config.json"), "--no-sync", "--json"),
    }


COMMANDS = sorted(commands(Folder(Path(), Path(), Path(), "")))


@pytest.mark.parametrize("room", [FULL, NEARLY_FULL], ids=["full", "nearly-full"])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_writes_ends_with_the_store_error_on_a_full_disk_and_loses_nothing(
    folder: Folder, command: str, room: int
) -> None:
    before = snapshot(folder)
    with closing(sqlite3.connect(folder.data / "catalog.db")) as gateway:  # a running gateway's reader
        gateway.execute("SELECT COUNT(*) FROM tools").fetchone()
        refused = cli(folder.data, *commands(folder)[command], max_bytes=room, cache=folder.cache)

    assert refused.returncode == 13, (refused.returncode, refused.stdout, refused.stderr)
    assert "Traceback" not in refused.stderr, refused.stderr
    assert "error [store]" in refused.stderr and "could not be written" in refused.stderr, refused.stderr
    assert "Free disk space" in refused.stderr and "run it again" in refused.stderr, refused.stderr
    assert snapshot(folder) == before
    listed = cli(folder.data, "catalog", "list", cache=folder.cache)
    assert listed.returncode == 0 and "weather" in listed.stdout, listed.stderr
