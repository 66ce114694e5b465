"""Use cases: deterministic registration of servers and tools, with near-duplicate matching.

``matching_mode``:
- ``auto`` (default): when a near-duplicate tool exists, return it instead of creating one. A
  near-duplicate has cosine similarity >= 0.85 with the new tool, or 0.75-0.85 and the same name
  (names compared without case and separators: ``get_file`` = ``getFile`` = ``get-file``).
- ``force_create``: create unless the exact id exists (409).
- ``match_only``: return the match, or NotFoundError (404); never create.

Similarity is the embedder's cosine between "<name words>: <description>" texts; the server's name is
left out so that the same tool under two servers compares equal. By default the candidates are the
tools of the same server; ``match_scope="catalog"`` compares against every tool.

Every mutation refreshes enrichment (incremental) and the index before it returns, so a resolve made
after the response sees the change.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.root.container import Container
from services.write.duplicates import (
    SIMILAR,
    SIMILAR_WITH_SAME_NAME,
    BatchMatches,
    DuplicateFinder,
    ToolMatch,
    dedup_text,
    find_match,
)
from services.write.enriching import enrich_catalog
from services.write.indexing import refresh_index
from services.write.policy import origin_mode
from services.write.writing import writes
from tool_selector.core.choices import MatchingMode, MatchScope
from tool_selector.core.errors import CatalogFileError, ConflictError, InvalidInputError, NotFoundError
from tool_selector.core.json_limits import MAX_JSON_DEPTH, Annotations, InputSchema, withheld_fields
from tool_selector.core.models import CreationMethod, ServerRecord, ServerSpec, ToolRecord, ToolSpec
from tool_selector.core.names import TakenNames, copy_problem, name_problem, tool_copied, tool_copy_problem
from tool_selector.index.build import IndexSummary
from tool_selector.trust.limits import CappedDescription, CappedMetadata

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore
    from tool_selector.config.settings import Settings

logger = logging.getLogger(__name__)

__all__ = [  # matching lives in duplicates.py; its names are used through this module too
    "SIMILAR",
    "SIMILAR_WITH_SAME_NAME",
    "BatchMatches",
    "DuplicateFinder",
    "MatchScope",
    "MatchingMode",
    "ToolMatch",
    "dedup_text",
    "find_match",
]


class ToolOutcome(BaseModel):
    outcome: Literal["created", "matched"]
    tool: ToolRecord
    match: ToolMatch | None = None
    held: bool = Field(
        default=False,
        description="true when the definition waits for approval (trust.registered = approve, or the "
        "scanner quarantined it): it is stored but not searchable until `quarantine approve`",
    )


class ServerOutcome(BaseModel):
    outcome: Literal["created", "matched"]
    server: ServerRecord
    held: str | None = Field(
        default=None,
        description="the quarantine entry holding the description and metadata this request gave, when "
        "they wait for approval (trust.registered = approve, or the scanner quarantined them): the server "
        "is stored without them until `quarantine approve`",
    )


class ServerWritten(ServerRecord):
    """A server as stored after a change, and the entry holding what waits for approval, if any."""

    held: str | None = Field(
        default=None,
        description="the quarantine entry holding the description and metadata this request gave, when "
        "they wait for approval: the server keeps its approved text until `quarantine approve`",
    )


class ServerDeleted(BaseModel):
    deleted: str
    tools_deleted: list[str]
    note: str


class ToolPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: CappedDescription | None = None
    input_schema: InputSchema | None = None
    annotations: Annotations | None = None


class ServerPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: CappedDescription | None = None
    metadata: CappedMetadata | None = None


@writes("index refresh")
def refresh(
    container: Container, *, force: frozenset[str] = frozenset(), servers: Collection[str] | None = None
) -> IndexSummary:
    """Enrich what changed (the configured enricher, incremental) and bring the index up to date.
    ``servers``: the servers the write changed, so that enrichment looks at them only (the index
    finds what changed in the catalog's change log either way)."""
    enrich_catalog(container, container.enrichers(), force=force, servers=servers)
    return refresh_index(container)


# -- servers -----------------------------------------------------------------------------------------


@writes("server registration")
def register_server(
    container: Container, spec: ServerSpec, *, mode: MatchingMode, method: CreationMethod, actor: str
) -> ServerOutcome:
    store = container.store
    try:
        existing = store.get_server(spec.name)
    except NotFoundError:
        existing = None
    if existing is not None and mode != "force_create":
        return ServerOutcome(outcome="matched", server=existing)
    if existing is None and mode == "match_only":
        raise NotFoundError(
            f"No server named {spec.name!r}; matching_mode match_only never creates one.",
            hint="Use matching_mode auto to create it.",
        )
    copied = (
        TakenNames(taken_server_names(container.settings, container.store)).copied_by(spec.name)
        if existing is None
        else None
    )
    if copied is not None:
        problem = copy_problem(spec.name, copied)
        raise InvalidInputError(
            f"{problem[0].upper()}{problem[1:]}.",
            hint=f"Add the tools to {copied!r}, or name this server so that it differs in more than case "
            "and look-alike characters.",
            name=spec.name,
            existing=copied,
        )
    trust = origin_mode(container.settings, "registered")
    created = container.writer.create_server(spec, method=method, actor=actor, trust=trust)  # 409: exists
    refresh(container, servers={spec.name})  # the index is built from servers too: keep it current
    return ServerOutcome(outcome="created", server=created, held=held_text_entry(container.store, spec.name))


def require_server_named(store: CatalogStore, name: str) -> ServerRecord:
    try:
        return store.get_server(name)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No server named {name!r} in the catalog.",
            hint="Register it first (POST /api/v1/servers); `tool-selector catalog list` shows the names.",
            name=name,
        ) from exc


def require_tool(store: CatalogStore, tool_id: str) -> ToolRecord:
    try:
        return store.get_tool(tool_id)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No tool with id {tool_id!r} in the catalog.",
            hint="Tool ids read 'server::tool'; GET /api/v1/tools/search?q=... finds them, "
            "POST /api/v1/tools registers one.",
            tool_id=tool_id,
        ) from exc


@writes("server update")
def patch_server(container: Container, name: str, patch: ServerPatch, *, actor: str) -> ServerWritten:
    """Change a catalog-only server's description or metadata, vetted under ``trust.registered``; a
    configured or discovered server's text is owned by its configuration and discovery (refused)."""
    refuse_owned(container.settings, require_server_named(container.store, name), "PATCH")
    record, changed = container.writer.update_server(
        name,
        description=patch.description,
        metadata=patch.metadata,
        actor=actor,
        trust=origin_mode(container.settings, "registered"),
    )
    if changed:
        refresh(container, servers={name})
    return ServerWritten(**record.model_dump(), held=held_text_entry(container.store, name))


def operator_owned(settings: Settings, store: CatalogStore) -> set[str]:
    """Every server whose text the operator's configuration and discovery own."""
    discovered = {s.name for s in store.list_servers() if s.creation_method == "discovered"}
    return discovered | configured_names(settings)


def held_text_entry(store: CatalogStore, server: str) -> str | None:
    """The pending quarantine entry holding text proposed for ``server``, if any (the newest)."""
    entries = store.quarantine_entries(server=server)
    return next((e.id for e in entries if e.subject == "server"), None)


def pending_text(store: CatalogStore, server: str, digest: str) -> str | None:
    """The pending entry holding exactly the text of hash ``digest`` for ``server``, if any."""
    entries = store.quarantine_entries(server=server)
    return next((e.id for e in entries if e.subject == "server" and e.new_hash == digest), None)


def owned_by_operator(settings: Settings, server: ServerRecord) -> bool:
    """Whether the server's text comes from the operator's configuration and discovery."""
    return server.creation_method == CreationMethod.DISCOVERED or server.name in configured_names(settings)


def refuse_owned(settings: Settings, server: ServerRecord, what: str) -> None:
    if owned_by_operator(settings, server):
        raise ConflictError(
            f"{what} refused: {server.name!r} is configured on this machine, so its tools and description "
            "come from the server itself and its keywords and steering from the operator's configuration.",
            hint="Change its keywords or steering in the server configuration (`tool-selector servers add "
            f"{server.name} --replace ...`, or servers.json) and run `tool-selector sync`.",
            name=server.name,
        )


@writes("server deletion")
def delete_server(container: Container, name: str, *, cascade: bool, actor: str) -> ServerDeleted:
    configured = name in configured_names(container.settings)
    require_server_named(container.store, name)
    tools = container.writer.delete_server(name, cascade=cascade, actor=actor)
    refresh(container, servers={name})
    note = f"Deleted server {name!r} and its {len(tools)} tool(s) from the catalog and the search index."
    if configured:
        note += (
            " It is still in the server configuration, so the next sync discovers it again; "
            "remove it with `tool-selector servers remove` to keep it out."
        )
    return ServerDeleted(deleted=name, tools_deleted=tools, note=note)


def configured_names(settings: Settings) -> set[str]:
    from tool_selector.config.servers import load_servers

    return set(load_servers(settings.servers_path).mcpServers)


def taken_server_names(settings: Settings, store: CatalogStore, *, catalog: bool = True) -> set[str]:
    """Every server name in use, configured or (``catalog``) catalogued: no new server may copy one up
    to case. An unreadable configuration adds none (a write that needs it says so itself)."""
    try:
        configured = configured_names(settings)
    except CatalogFileError as exc:
        logger.warning("server names are checked against the catalog only: %s", exc.message)
        configured = set()
    return {s.name for s in store.list_servers()} | configured if catalog else configured


# -- tools -------------------------------------------------------------------------------------------


@writes("tool registration")
def register_tool(
    container: Container,
    spec: ToolSpec,
    *,
    mode: MatchingMode,
    scope: MatchScope = "server",
    method: CreationMethod,
    actor: str,
) -> ToolOutcome:
    store = container.store
    refuse_owned(
        container.settings, require_server_named(container.store, spec.server), "A tool registration"
    )
    finder = DuplicateFinder(container)
    if mode != "force_create":
        match = find_match(container, spec, scope, finder)
        if match is not None:
            return ToolOutcome(outcome="matched", tool=store.get_tool(match.tool_id), match=match)
        if mode == "match_only":
            closest = finder.closest(spec, scope)
            near = f" The closest is {closest[0]!r} at similarity {closest[1]}." if closest else ""
            raise NotFoundError(
                f"No tool matches {spec.id!r} (similarity >= {SIMILAR}, or >= {SIMILAR_WITH_SAME_NAME} with "
                f"the same name).{near}",
                hint="Use matching_mode auto to create it, or match_scope catalog to look in every server.",
                closest=closest[0] if closest else None,
            )
    copied = tool_copied(store.tool_names(), spec.server, spec.name)
    if copied is not None:  # get_current_tіme (Cyrillic і) beside get_current_time
        problem = tool_copy_problem(spec.id, copied)
        raise InvalidInputError(
            f"{problem[0].upper()}{problem[1:]}.",
            hint="Name the tool so that it differs in more than case and look-alike characters; nothing "
            "was stored.",
            tool_id=spec.id,
            existing=copied,
        )
    trust = origin_mode(container.settings, "registered")
    created = container.writer.create_tool(spec, method=method, actor=actor, trust=trust)
    refresh(container, servers={spec.server})
    held = created.id in container.store.held_tool_ids(created.server)  # its server's only: not 100k rows
    return ToolOutcome(outcome="created", tool=created, held=held)


@writes("tool update")
def patch_tool(container: Container, tool_id: str, patch: ToolPatch, *, actor: str) -> ToolRecord:
    tool = require_tool(container.store, tool_id)
    refuse_owned(container.settings, container.store.get_server(tool.server), "A tool PATCH")
    problem = name_problem(tool.name, "tool")  # only an older version let such a name in
    if problem is not None:
        raise InvalidInputError(
            f"The tool {tool_id!r} cannot be changed: its name {problem}.",
            hint="Delete it (DELETE /api/v1/tools/{id}) and register it again under a name keeping the rule.",
            tool_id=tool_id,
        )
    given = {"input_schema": patch.input_schema, "annotations": patch.annotations}
    kept = [f for f in withheld_fields(tool.model_dump()) if given.get(f) is None]
    if kept:  # stored before the depth limit: a PATCH keeping it would store the stand-in as the schema
        patchable = "output_schema" not in kept  # a PATCH cannot give an output schema
        raise InvalidInputError(
            f"The tool {tool_id!r} cannot be changed as asked: its stored {', '.join(kept)} is nested deeper "
            f"than {MAX_JSON_DEPTH} levels (stored before that limit).",
            hint=f"Send a new {' and '.join(kept)} within the limit in the same PATCH."
            if patchable
            else "Delete it (DELETE /api/v1/tools/{id}) and register it again within the limit.",
            tool_id=tool_id,
            fields=kept,
        )
    record, changed = container.writer.update_tool(
        tool_id,
        description=patch.description,
        input_schema=patch.input_schema,
        annotations=patch.annotations,
        actor=actor,
        trust=origin_mode(container.settings, "registered"),
    )
    if changed:
        refresh(container, servers={record.server})
    return record


@writes("tool deletion")
def delete_tool(container: Container, tool_id: str, *, actor: str) -> ToolRecord:
    require_tool(container.store, tool_id)
    removed = container.writer.delete_tool(tool_id, actor=actor)
    refresh(container, servers={removed.server})
    return removed
