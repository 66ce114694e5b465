"""A disk that refuses a catalog write (issue 27, finding 5): a real `tool-selector catalog import`
process whose files may not grow past a limit (RLIMIT_FSIZE, with SIGXFSZ ignored, so a write fails as
on a full disk) exits with the `store` error, code 13, names the repair, and what was stored before is
intact."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from tests.support.catalogs import write_catalog
from tests.support.gateway_helpers import CLI


def limited(max_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return apply


def cli(data: Path, *args: str, max_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_")}
    env["TOOL_SELECTOR_DATA_DIR"] = str(data)
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
