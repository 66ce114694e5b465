"""Small catalog folders in the benchmark format (servers.json + tools.json), written for a test."""

from __future__ import annotations

import json
from pathlib import Path

from tool_selector.config.settings import Settings, TrustSettings


def write_catalog(folder: Path, tools: dict[str, list[str]]) -> Path:
    """One server per key, with the named tools; descriptions are the names' words."""
    folder.mkdir(parents=True, exist_ok=True)
    servers = [{"name": s, "description": f"{s} service"} for s in tools]
    listed = [
        {"server": s, "name": t, "description": t.replace("_", " ")}
        for s, names in tools.items()
        for t in names
    ]
    (folder / "servers.json").write_text(json.dumps(servers))
    (folder / "tools.json").write_text(json.dumps(listed))
    return folder


def tofu_settings(tmp_path: Path) -> Settings:
    """Fresh data and cache folders under ``tmp_path``, the offline enricher, and registrations trusted
    as written (a registered tool is searchable at once)."""
    return Settings(
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
        sync={"enricher": "offline"},
        trust=TrustSettings(registered="tofu", intent=False),
    )
