"""What the operator console shows beyond the plain REST resources: servers with their status, one
tool with everything known about it, and the caller's own scopes.

A server's status, for the Servers page:
- ``disabled``: in the configuration, switched off (the sync removes its tools, the gateway never
  starts it);
- ``ok`` / ``stale`` / ``failed``: configured and enabled, as its last discovery left it (``failed``
  carries the error; ``stale``: the last discovery failed, the tools of the one before are kept);
- ``pending``: configured and enabled, never discovered yet (run a sync);
- ``catalog``: only in the catalog (imported or registered): nothing to start, nothing to discover.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from services.access.keys import Principal, roles_with
from services.root.container import Container
from services.write import registry
from services.write.servers import set_enabled
from services.write.sync import last_sync
from tool_selector.catalog.admin import SCOPES
from tool_selector.catalog.browse import ApprovalState, EnrichmentState, browse_servers
from tool_selector.config.servers import ServerConfig, get_server_config, load_servers
from tool_selector.core.choices import Scope
from tool_selector.core.models import ServerProfile, ToolEnrichment, ToolRecord

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore
    from tool_selector.config.settings import Settings

ServerState = Literal["ok", "stale", "failed", "disabled", "pending", "catalog"]


class WhoAmI(BaseModel):
    actor: str
    key_id: str | None
    scopes: list[Scope]
    needs: dict[str, list[str]] = Field(description="each scope -> the roles whose keys carry it")


class ServerOverview(BaseModel):
    name: str
    description: str = Field(
        default="", description="its first 160 characters (all of it: GET /servers/{name})"
    )
    configured: bool = Field(description="in the operator's server configuration (servers.json)")
    enabled: bool | None = Field(description="configured servers only")
    origin: Literal["operator", "import"] | None = Field(
        default=None,
        description="configured servers only; import: never started until the operator adopts it",
    )
    launch: str = Field(
        default="",
        description="configured servers only: what starting it runs, or its url; env and header values, "
        "url credentials and query values as *** for every key below admin",
    )
    transport: Literal["stdio", "http"] | None = None
    status: ServerState
    error: str = ""
    tool_count: int = 0
    held: int = Field(default=0, description="tools held for approval")
    creation_method: str | None = None
    last_attempt_at: datetime | None = None
    last_success_at: datetime | None = None
    updated_at: datetime | None = None


class ServersOverview(BaseModel):
    servers: list[ServerOverview]
    counts: dict[str, int] = Field(description="servers per status")
    last_sync_at: datetime | None
    last_sync_ok: bool | None


class Approval(BaseModel):
    state: ApprovalState
    pinned_hash: str | None = Field(description="the hash of the approved definition")
    pinned_by: str | None = None
    pinned_how: str | None = None
    definition_hash: str
    quarantine: list[str] = Field(description="ids of the tool's pending quarantine entries")


class ToolDetail(BaseModel):
    tool: ToolRecord
    definition: dict[str, Any] = Field(description="the original definition, as an agent is handed it")
    enrichment: ToolEnrichment | None
    enrichment_state: EnrichmentState
    profile: ServerProfile | None
    approval: Approval


def whoami(principal: Principal) -> WhoAmI:
    return WhoAmI(
        actor=principal.actor,
        key_id=principal.key_id,
        scopes=[s for s in SCOPES if s in principal.scopes],
        needs={s: roles_with(s) for s in SCOPES},
    )


def _status(config: ServerConfig | None, discovery_state: str | None) -> ServerState:
    if config is None:
        return "catalog"
    if not config.runnable:
        return "disabled"
    if discovery_state in ("ok", "stale", "failed"):
        return discovery_state  # type: ignore[return-value]
    return "pending"


def servers_overview(settings: Settings, store: CatalogStore, *, reveal: bool = False) -> ServersOverview:
    """Every configured and catalog server with its status; launch lines with their secret values
    hidden unless ``reveal`` (an admin key, which must repeat the whole line to adopt an entry)."""
    configs = load_servers(settings.servers_path).mcpServers
    discovery = store.get_discovery()
    records = {s.name: s for s in browse_servers(store, description_chars=160)}
    rows = []
    for name in sorted(set(records) | set(configs)):
        config, record, found = configs.get(name), records.get(name), discovery.get(name)
        status = _status(config, found.state if found else None)
        rows.append(
            ServerOverview(
                name=name,
                description=record.description if record else "",
                configured=config is not None,
                enabled=None if config is None else config.enabled,
                origin=None if config is None else config.origin,
                launch="" if config is None else config.launch_line(reveal=reveal),
                transport=None if config is None else config.transport,
                status=status,
                error=found.error if found and status in ("failed", "stale") else "",
                tool_count=record.tool_count if record else 0,
                held=record.held if record else 0,
                creation_method=record.creation_method if record else None,
                last_attempt_at=found.last_attempt_at if found else None,
                last_success_at=found.last_success_at if found else None,
                updated_at=datetime.fromisoformat(record.updated_at) if record else None,
            )
        )
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    synced_at = store.get_meta("last_sync_at")
    summary = last_sync(store)
    return ServersOverview(
        servers=rows,
        counts=counts,
        last_sync_at=None if synced_at is None else datetime.fromisoformat(synced_at),
        last_sync_ok=None if summary is None else summary.ok,
    )


def server_overview(
    settings: Settings, store: CatalogStore, name: str, *, reveal: bool = False
) -> ServerOverview:
    for row in servers_overview(settings, store, reveal=reveal).servers:
        if row.name == name:
            return row
    get_server_config(load_servers(settings.servers_path), name)  # NotFoundError, closest names
    raise AssertionError("unreachable: a configured server is in the overview")


def switch_server(
    container: Container, name: str, enabled: bool, *, principal: Principal, confirm_launch: str | None
) -> ServerOverview:
    """Switch a configured server on or off (audited); its overview entry after. An imported entry is
    switched on only with the admin scope and its launch line repeated (services/write/servers.py)."""
    set_enabled(
        container, name, enabled, principal=principal, at_machine=False, confirm_launch=confirm_launch
    )
    return server_overview(container.settings, container.store, name, reveal=sees_secrets(principal))


def sees_secrets(principal: Principal) -> bool:
    """Whether this key reads the values of the servers' env, headers and url credentials: the admin
    scope only (every other key reads names and ``***``)."""
    return "admin" in principal.scopes


def tool_detail(store: CatalogStore, tool_id: str) -> ToolDetail:
    tool = registry.require_tool(store, tool_id)
    enrichment = store.get_enrichment(tool.id)
    state: EnrichmentState = (
        "missing"
        if enrichment is None
        else "current"
        if enrichment.tool_hash == tool.content_hash
        else "stale"
    )
    pin = store.pins(tool.server).get(tool.name)
    pending = [e.id for e in store.quarantine_entries(server=tool.server) if e.tool_id == tool.id]
    definition_hash = tool.definition_hash()
    held = tool.id in store.held_tool_ids(tool.server)
    return ToolDetail(
        tool=tool,
        definition=tool.definition(),
        enrichment=enrichment,
        enrichment_state=state,
        profile=store.get_profile(tool.server),
        approval=Approval(
            state="held" if held else "approved",
            pinned_hash=pin.pin_hash if pin else None,
            pinned_by=pin.approved_by if pin else None,
            pinned_how=pin.how if pin else None,
            definition_hash=definition_hash,
            quarantine=pending,
        ),
    )
