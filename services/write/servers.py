"""Use cases over the operator's server configuration: add, list, remove, import from another client.

Each change to the configuration is one audit record (through the catalog writer), like a change to
the catalog: ``config.add``, ``config.import``, ``config.enable``/``config.disable``; removing a server
that is also in the catalog is one ``server.delete`` record saying the configuration entry went too.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from pydantic import BaseModel, Field

from services.shared.container import Container
from services.shared.indexing import refresh_index
from services.shared.writing import writes
from tool_selector.errors import InvalidInputError
from tool_selector.hashing import sha256_of
from tool_selector.servers_config import (
    NAME_PATTERN,
    ServerConfig,
    get_server_config,
    load_servers,
    read_client_config,
    save_servers,
)

logger = logging.getLogger(__name__)


class ServerRow(BaseModel):
    name: str
    transport: str
    target: str = Field(description="the command line or the url")
    enabled: bool
    tools: int | None = Field(default=None, description="tools in the catalog; None = never discovered")
    state: str | None = Field(default=None, description="ok, stale or failed at the last sync")
    error: str = ""


@writes("server configuration change")
def add_server(
    container: Container, name: str, config: ServerConfig, *, replace: bool = False, actor: str
) -> ServerConfig:
    path = container.settings.servers_path
    servers = load_servers(path)
    if name in servers.mcpServers and not replace:
        raise InvalidInputError(
            f"A server named {name!r} is already configured.",
            hint="Pick another name, or pass --replace to overwrite its entry.",
            name=name,
        )
    if not re.match(NAME_PATTERN, name):
        raise InvalidInputError(
            f"{name!r} is not a usable server name.",
            hint="Use 1-100 letters, digits, '_', '-', '.', '@', '/' or spaces, starting alphanumeric.",
            name=name,
        )
    before = servers.mcpServers.get(name)
    servers.mcpServers[name] = config
    save_servers(path, servers)
    container.writer.record(
        actor,
        "config.add",
        f"config:{name}",
        before_hash=None if before is None else _config_hash(before),
        after_hash=_config_hash(config),
        replaced=before is not None,
    )
    return config


def _config_hash(config: ServerConfig) -> str:
    return sha256_of(config.model_dump(mode="json"))


def list_servers(container: Container) -> list[ServerRow]:
    servers = load_servers(container.settings.servers_path)
    counts = {s.name: s.tool_count for s in container.store.list_servers()}
    status = container.store.get_discovery()
    rows: list[ServerRow] = []
    for name, cfg in servers.mcpServers.items():
        target = (
            " ".join([cfg.command or "", *cfg.args]).strip() if cfg.transport == "stdio" else cfg.url or ""
        )
        st = status.get(name)
        rows.append(
            ServerRow(
                name=name,
                transport=cfg.transport,
                target=target,
                enabled=cfg.enabled,
                tools=counts.get(name),
                state=st.state if st else None,
                error=st.error if st else "",
            )
        )
    return rows


class RemoveSummary(BaseModel):
    name: str
    tools_removed: int = 0
    index_documents_removed: int = 0


@writes("server removal")
def remove_server(container: Container, name: str, *, actor: str) -> RemoveSummary:
    """Remove a server from the configuration, and its tools from the catalog and the index."""
    path = container.settings.servers_path
    servers = load_servers(path)
    config = get_server_config(servers, name)  # NotFoundError listing the closest names
    del servers.mcpServers[name]
    save_servers(path, servers)
    summary = RemoveSummary(name=name)
    if name in {s.name for s in container.store.list_servers()}:
        tools = container.writer.delete_server(name, cascade=True, actor=actor, config_removed=True)
        summary.tools_removed = len(tools)
        summary.index_documents_removed = refresh_index(container).removed
    else:
        container.writer.record(actor, "config.remove", f"config:{name}", before_hash=_config_hash(config))
    return summary


class ImportServersSummary(BaseModel):
    added: list[str] = Field(default_factory=list)
    replaced: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict, description="name -> why")


@writes("server configuration import")
def import_servers(
    container: Container, source: Path, *, replace: bool = False, trust: bool = False, actor: str
) -> ImportServersSummary:
    """Copy the servers of a Claude Desktop, Claude Code or Cursor configuration into ours. Their tools
    wait for approval at their first sync under the ``trust.imported`` policy, unless ``trust`` (the
    operator trusts them on first use like servers they add themselves)."""
    found = read_client_config(source, limit_bytes=container.settings.max_file_bytes)
    path = container.settings.servers_path
    servers = load_servers(path)
    summary = ImportServersSummary(skipped=dict(found.skipped))
    for name, config in found.servers.items():
        if name in servers.mcpServers and not replace:
            summary.skipped[name] = "already configured (pass --replace to overwrite)"
            continue
        (summary.replaced if name in servers.mcpServers else summary.added).append(name)
        policy = "tofu" if trust else container.settings.trust.imported
        servers.mcpServers[name] = (
            config if config.trust is not None else config.model_copy(update={"trust": policy})
        )
    if summary.added or summary.replaced:
        save_servers(path, servers)
        container.writer.record(
            actor,
            "config.import",
            "servers.json",
            after_hash=sha256_of(servers.model_dump(mode="json")),
            source=str(source),
            added=summary.added,
            replaced=summary.replaced,
        )
    return summary


@writes("server configuration change")
def set_enabled(container: Container, name: str, enabled: bool, *, actor: str) -> bool:
    """Switch a configured server on or off; returns whether it changed. Audited."""
    path = container.settings.servers_path
    servers = load_servers(path)
    config = get_server_config(servers, name)  # NotFoundError listing the closest names
    if config.enabled == enabled:
        return False
    servers.mcpServers[name] = config.model_copy(update={"enabled": enabled})
    save_servers(path, servers)
    container.writer.record(actor, "config.enable" if enabled else "config.disable", f"config:{name}")
    return True
