"""Sync timings: a first sync and a no-change sync, each as a real ``tool-selector sync`` process.

Runs in a fresh temporary data folder (the model export in the cache folder is shared), over either a
server configuration (live discovery) or a catalog folder imported from file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tool_selector.config.settings import Settings

_CLI = [sys.executable, "-c", "from routes.cli import main; main()"]


def _run(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run([*_CLI, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 20):
        raise RuntimeError(
            f"`tool-selector {' '.join(args)}` failed ({done.returncode}): {done.stderr[-2000:]}"
        )
    return wall, json.loads(done.stdout)


def bench_sync(
    settings: Settings,
    *,
    servers_file: Path | None = None,
    catalog: Path | None = None,
    enricher: str = "offline",
) -> dict[str, Any]:
    """Time ``sync`` twice (first, then nothing changed) and report wall time and phase seconds."""
    with tempfile.TemporaryDirectory(prefix="ts-bench-sync-") as tmp:
        env = {
            **os.environ,
            "TOOL_SELECTOR_DATA_DIR": str(Path(tmp) / "data"),
            "TOOL_SELECTOR_CACHE_DIR": str(settings.cache_dir),
            "TOOL_SELECTOR_SYNC__ENRICHER": enricher,
            "TOOL_SELECTOR_SERVERS_FILE": str(servers_file or Path(tmp) / "no-servers.json"),
        }
        out: dict[str, Any] = {"source": str(servers_file or catalog), "enricher": enricher}
        if catalog is not None:
            wall, _ = _run(["catalog", "import", str(catalog)], env)
            out["import_s"] = round(wall, 3)
        for label in ("first_sync", "no_change_sync"):
            wall, summary = _run(["sync"], env)
            out[label] = {
                "wall_s": round(wall, 3),
                "phases_s": summary["seconds"],
                "servers_seen": summary["servers_seen"],
                "servers_failed": summary["servers_failed"],
                "tools_added": summary["tools_added"],
                "servers_profiled": summary["servers_profiled"],
                "tools_enriched": summary["tools_enriched"],
                "documents_embedded": summary["documents_embedded"],
            }
        return out
