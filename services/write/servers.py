"""Use cases over the operator's server configuration: add, list, remove, import from another client.

Each change to the configuration is one audit record (through the catalog writer), like a change to
the catalog: ``config.add``, ``config.import``, ``config.enable``/``config.disable`` (with the launch
line, and whether an imported entry was adopted), ``config.enable.refused`` (an API key below admin tried
to switch on an imported entry); removing a server that is also in the catalog is one ``server.delete``
record saying the configuration entry went too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from services.access.keys import Principal
from services.root.container import Container
from services.write.indexing import refresh_index
from services.write.registry import taken_server_names
from services.write.writing import writes
from tool_selector.config.servers import (
    NAME_PATTERN,
    ServerConfig,
    ServersFile,
    get_server_config,
    load_servers,
    read_client_config,
    save_servers,
)
from tool_selector.core.errors import ForbiddenError, InvalidInputError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.names import TakenNames, copy_problem

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore
    from tool_selector.catalog.writer import CatalogWriter
    from tool_selector.config.settings import Settings

logger = logging.getLogger(__name__)


class ServerRow(BaseModel):
    name: str
    transport: str
    target: str = Field(
        description="what starting it runs (shell-quoted), or its url; secret values as *** unless revealed"
    )
    enabled: bool
    origin: str = Field(description="operator, or import: never started until adopted (`servers enable`)")
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
    usable = re.match(NAME_PATTERN, name) is not None
    if not usable and name.isascii():  # a look-alike (ＴＩＭＥ, tіme) is told as one, naming the server
        raise _unusable(name)
    copied = TakenNames(taken_server_names(container.settings, container.store)).copied_by(name)
    if copied is not None:  # TIME, ＴＩＭＥ or tіme beside time: an agent could not tell them apart
        problem = copy_problem(name, copied)
        raise InvalidInputError(
            f"{problem[0].upper()}{problem[1:]}.",
            hint=f"Use {copied!r} itself (with --replace to change its entry), or a name that differs more.",
            name=name,
            existing=copied,
        )
    if not usable:
        raise _unusable(name)
    was = servers.model_copy(deep=True)
    before = servers.mcpServers.get(name)
    servers.mcpServers[name] = config
    writer = container.writer
    save_recorded(
        container.settings,
        writer,
        was,
        servers,
        lambda: writer.record(
            actor,
            "config.add",
            f"config:{name}",
            before_hash=None if before is None else _config_hash(before),
            after_hash=_config_hash(config),
            replaced=before is not None,
        ),
    )
    return config


def _unusable(name: str) -> InvalidInputError:
    return InvalidInputError(
        f"{name!r} is not a usable server name.",
        hint="Use 1-100 letters, digits, '_', '-', '.', '@', '/' or inner spaces, starting alphanumeric.",
        name=name,
    )


def _config_hash(config: ServerConfig) -> str:
    return sha256_of(config.model_dump(mode="json"))


def save_recorded(
    settings: Settings,
    writer: CatalogWriter,
    was: ServersFile,
    now: ServersFile,
    record: Callable[[], object],
) -> None:
    """Save the configuration ``now`` with its audit record (``record``, which writes the catalog through
    ``writer``'s store): both, or neither. The record's transaction commits once the file is saved; when
    it cannot (a full disk), the file is put back as it ``was`` and the store error says what to do."""
    path = settings.servers_path
    saved = False
    try:
        with writer.batch():
            record()
            save_servers(path, now)
            saved = True
    except BaseException:
        if saved:
            try:
                save_servers(path, was)
            except OSError as exc:
                logger.error("%s holds a change whose audit record could not be written: %s", path, exc)
        raise


def list_servers(settings: Settings, store: CatalogStore, *, reveal: bool = False) -> list[ServerRow]:
    """The configured servers with their tool counts and last discovery; secret values hidden unless
    ``reveal`` (the operator at the machine asking for them)."""
    servers = load_servers(settings.servers_path)
    counts = {s.name: s.tool_count for s in store.list_servers()}
    status = store.get_discovery()
    rows: list[ServerRow] = []
    for name, cfg in servers.mcpServers.items():
        st = status.get(name)
        rows.append(
            ServerRow(
                name=name,
                transport=cfg.transport,
                target=cfg.launch_line(reveal=reveal),
                enabled=cfg.enabled,
                origin=cfg.origin,
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
    was = servers.model_copy(deep=True)
    del servers.mcpServers[name]
    summary = RemoveSummary(name=name)
    catalogued = name in {s.name for s in container.store.list_servers()}
    writer = container.writer

    def record() -> None:
        if catalogued:
            tools = writer.delete_server(name, cascade=True, actor=actor, config_removed=True)
            summary.tools_removed = len(tools)
        else:
            writer.record(actor, "config.remove", f"config:{name}", before_hash=_config_hash(config))

    save_recorded(container.settings, writer, was, servers, record)
    if catalogued:
        summary.index_documents_removed = refresh_index(container).removed
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
    was = servers.model_copy(deep=True)
    taken = TakenNames(taken_server_names(container.settings, container.store))
    summary = ImportServersSummary(skipped=dict(found.skipped))
    for name in found.skipped:  # a name the file could not use (ＴＩＭＥ, tіme): say whose look-alike it is
        copied = None if name.isascii() else taken.copied_by(name)
        if copied is not None:
            summary.skipped[name] = f"{copy_problem(name, copied)}; rename it in the file"
    for name, config in found.servers.items():
        if name in servers.mcpServers and not replace:
            summary.skipped[name] = "already configured (pass --replace to overwrite)"
            continue
        copied = taken.copied_by(name)
        taken.add(name)
        if copied is not None:
            summary.skipped[name] = f"{copy_problem(name, copied)}; rename it in the file"
            continue
        (summary.replaced if name in servers.mcpServers else summary.added).append(name)
        policy = "tofu" if trust else container.settings.trust.imported
        servers.mcpServers[name] = (
            config if config.trust is not None else config.model_copy(update={"trust": policy})
        )
    if summary.added or summary.replaced:
        writer = container.writer
        save_recorded(
            container.settings,
            writer,
            was,
            servers,
            lambda: writer.record(
                actor,
                "config.import",
                "servers.json",
                after_hash=sha256_of(servers.model_dump(mode="json")),
                source=str(source),
                added=summary.added,
                replaced=summary.replaced,
            ),
        )
    return summary


class SwitchResult(BaseModel):
    name: str
    enabled: bool
    changed: bool
    adopted: bool = Field(
        default=False, description="an imported entry was adopted: its command may be started from now on"
    )
    launch: str = Field(
        description="what starting it runs (shell-quoted), or its url; secret values as *** unless revealed"
    )


IMPORTED_WAITS = (
    "{name!r} arrived in a catalog import; switching it on lets this machine start {launch}. Only the "
    "operator may allow that."
)


@writes("server configuration change")
def set_enabled(
    container: Container,
    name: str,
    enabled: bool,
    *,
    principal: Principal,
    at_machine: bool,
    confirm_launch: str | None = None,
    reveal: bool = False,
) -> SwitchResult:
    """Switch a configured server on or off. Audited, refusals too.

    An entry that arrived in a catalog import (``origin: import``) is switched on only by the operator:
    at the machine (the CLI, ``at_machine``), where it is adopted (``origin: operator``) and its launch
    line printed; over the API only with the ``admin`` scope and ``confirm_launch`` repeating its
    launch line exactly. Any other key gets ForbiddenError and the attempt is audited.

    The result shows the launch line with its secret values hidden unless ``reveal``; the audit record
    always has them hidden."""
    path = container.settings.servers_path
    servers = load_servers(path)
    config = get_server_config(servers, name)  # NotFoundError listing the closest names
    shown = config.launch_line(reveal=reveal)
    adopt = enabled and config.origin == "import"
    if adopt and not at_machine:
        _check_remote_adoption(container.writer, name, config, principal, confirm_launch)
    if config.enabled == enabled and not adopt:
        return SwitchResult(name=name, enabled=enabled, changed=False, launch=shown)
    update: dict[str, object] = {"enabled": enabled}
    if adopt:
        update["origin"] = "operator"
    was = servers.model_copy(deep=True)
    servers.mcpServers[name] = config.model_copy(update=update)
    writer = container.writer
    save_recorded(
        container.settings,
        writer,
        was,
        servers,
        lambda: writer.record(
            principal.actor,
            "config.enable" if enabled else "config.disable",
            f"config:{name}",
            before_hash=_config_hash(config),
            after_hash=_config_hash(servers.mcpServers[name]),
            launch=config.launch_line()[:LAUNCH_AUDIT_CHARS],
            adopted=adopt,
            via="machine" if at_machine else "api",
        ),
    )
    return SwitchResult(name=name, enabled=enabled, changed=True, adopted=adopt, launch=shown)


LAUNCH_AUDIT_CHARS = 2000


def _check_remote_adoption(
    writer: CatalogWriter, name: str, config: ServerConfig, principal: Principal, confirm: str | None
) -> None:
    """Over the API an imported entry is adopted only by an admin key repeating its launch line (the
    whole line, values included: the admin key sees them in the overview). The messages show it with
    its values hidden; only the admin's 422 carries the whole line in its details."""
    masked = config.launch_line()
    shown = masked if len(masked) <= 300 else masked[:300] + "…"
    waits = IMPORTED_WAITS.format(name=name, launch=shown)
    if "admin" not in principal.scopes:
        writer.record(
            principal.actor, "config.enable.refused", f"config:{name}", launch=masked[:LAUNCH_AUDIT_CHARS]
        )
        raise ForbiddenError(
            waits,
            hint=f"Run `tool-selector servers enable {name}` on the machine, after reading its entry in "
            "servers.json; or switch it on with an admin key, repeating its launch line as confirm_launch.",
            scope="admin",
            name=name,
        )
    launch = config.launch_line(reveal=True)
    if confirm != launch:
        raise InvalidInputError(
            waits,
            hint='Repeat the request with "confirm_launch" set to exactly this launch line (see it in '
            "GET /api/v1/overview/servers, field launch) once you have checked it.",
            name=name,
            launch=launch,
        )
