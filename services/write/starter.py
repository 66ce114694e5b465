"""``tool-selector init``: a data folder and a servers file imported from the MCP clients configured on
this machine (Claude Desktop, Claude Code, Cursor), so that a first ``sync`` and ``serve`` work.

Only files on this machine, at the places those clients keep their configuration (or files the
operator names), are read: the servers in them are ones the operator configured here. The gateway's
own entry (``tool-selector serve``) is skipped by ``read_client_config``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from services.shared.container import Container
from services.shared.writing import writes
from services.write.servers import import_servers
from tool_selector.config.servers import ServersFile, load_servers, save_servers
from tool_selector.core.errors import CatalogFileError


def client_config_paths(
    home: Path | None = None, *, platform: str = sys.platform, environ: Mapping[str, str] = os.environ
) -> list[tuple[str, Path]]:
    """Where Claude Desktop, Claude Code and Cursor keep their MCP servers on this platform (the client,
    the path), whether or not the files exist."""
    home = home or Path.home()
    if platform == "darwin":
        desktop = home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    elif platform.startswith("win"):
        desktop = Path(environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
        desktop = desktop / "claude_desktop_config.json"
    else:
        config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        desktop = config_home / "Claude" / "claude_desktop_config.json"
    return [
        ("Claude Desktop", desktop),
        ("Claude Code", home / ".claude.json"),
        ("Cursor", home / ".cursor" / "mcp.json"),
    ]


class SourceRead(BaseModel):
    client: str
    path: str
    added: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict, description="name -> why it was not imported")
    error: str | None = Field(default=None, description="why the file could not be read, if it could not")


class InitSummary(BaseModel):
    data_dir: str
    servers_file: str
    servers_file_existed: bool
    sources: list[SourceRead] = Field(default_factory=list)
    servers: list[str] = Field(default_factory=list, description="every server configured now")
    trust: str = Field(description="tofu (pin tools as first seen) or approve (hold each until approved)")


@writes("init")  # under the writer lock: a disk that refuses the servers file ends as the store error
def init_setup(
    container: Container, sources: Sequence[tuple[str, Path]], *, trust: bool, actor: str
) -> InitSummary:
    """Create the data folder and the servers file (kept if it exists) and import the servers of each
    source that exists. A source that cannot be read is reported, not fatal: the others still count."""
    settings = container.settings
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path = settings.servers_path
    existed = path.exists()
    if not existed:
        save_servers(path, ServersFile())
    summary = InitSummary(
        data_dir=str(settings.data_dir),
        servers_file=str(path),
        servers_file_existed=existed,
        trust="tofu" if trust else settings.trust.imported,
    )
    for client, source in sources:
        read = SourceRead(client=client, path=str(source))
        try:
            done = import_servers(container, source, trust=trust, actor=actor)
        except CatalogFileError as exc:
            read.error = str(exc)
        else:
            read.added, read.skipped = done.added + done.replaced, dict(done.skipped)
        summary.sources.append(read)
    summary.servers = sorted(load_servers(path).mcpServers)
    return summary
