"""``tool-selector init``: a data folder and a servers file imported from the MCP clients configured on
this machine (Claude Desktop, Claude Code, Cursor), so that a first ``sync`` and ``serve`` work.

Only files on this machine, at the places those clients keep their configuration (or files the
operator names), are read: the servers in them are ones the operator configured here. A file that is
a symbolic link is read only when the file it points to is inside the link's own folder (the client's
configuration folder, after that folder's own links): a link cannot bring in servers from a file the
client does not keep. ``read_client_config`` skips, each with its reason, the gateway's own entry
(``tool-selector serve``), what the client has switched off, and what cannot run here.

The servers file keeps the person's values (``env``, ``headers``) as the client had them, ``${VAR}``
references as references, and is written readable by its owner only (``save_servers``); nothing ``init``
prints or stores elsewhere holds a value.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from services.root.container import Container
from services.write.servers import import_servers
from services.write.writing import writes
from tool_selector.config.servers import ServersFile, load_servers, save_servers, servers_write_target
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
    container: Container,
    sources: Sequence[tuple[str, Path]],
    *,
    trust: bool,
    actor: str,
    replace: bool = False,
) -> InitSummary:
    """Create the data folder and the servers file (kept if it exists) and import the servers of each
    source that exists. A source that cannot be read is reported, not fatal: the others still count."""
    settings = container.settings
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    path = settings.servers_path
    servers_write_target(path)  # a link out of its folder: refused before anything is read or written
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
            outside_link(source)
            done = import_servers(container, source, replace=replace, trust=trust, actor=actor)
        except CatalogFileError as exc:
            read.error = str(exc)
        else:
            read.added, read.skipped = done.added + done.replaced, dict(done.skipped)
        summary.sources.append(read)
    summary.servers = sorted(load_servers(path).mcpServers)
    return summary


def outside_link(path: Path) -> None:
    """Raise CatalogFileError when ``path`` is a symbolic link to a file outside the link's own folder
    (the client's configuration folder), or a link that cannot be followed."""
    if not path.is_symlink():
        return
    folder = path.parent.resolve()
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise CatalogFileError(
            f"{path} is a symbolic link that cannot be followed ({exc}); it was not read.",
            hint="Point the link at the client's configuration file, or remove it.",
            path=str(path),
        ) from exc
    if not target.is_relative_to(folder):
        raise CatalogFileError(
            f"{path} is a symbolic link to {target}, outside the client's folder {folder}; it was not read "
            "(init reads a client's configuration only inside that folder, so that a link cannot bring in "
            "servers from a file the client does not keep).",
            hint=f"If {target} is yours, import it by name: tool-selector init --from {target}.",
            path=str(path),
            target=str(target),
        )
