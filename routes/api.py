"""The REST API (``tool-selector api``): parse, make one service call, render.

Scopes: read (resolve, search, status, jobs), write (create), edit (update, delete, re-profile,
sync), import (batch import), approve (quarantined tools), admin (audit). ``/health`` and the docs
need no key. The key is checked, and the body capped, before the body is read (routes/api_guard.py):
``api.max_body_bytes``, and ``api.max_import_bytes`` for ``POST /api/v1/catalog/import``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from routes import api_console, api_memory, api_quarantine
from routes.api_app import ERROR_RESPONSES, install_error_handlers, lifespan_for, need, ops
from routes.api_guard import KeyThenBodyLimit
from routes.ui import mount_console
from routes.ui.apidocs import mount_api_docs
from services.access.keys import Principal
from services.api.operations import EnrichmentStats, Health, Operations, ServerStatus
from services.root.container import Container
from services.write import catalog, registry
from tool_selector.catalog.admin import AuditRecord, JobRecord
from tool_selector.config.settings import Settings
from tool_selector.core.choices import SearchMode
from tool_selector.core.models import (
    CreationMethod,
    Decision,
    MatchType,
    Resolution,
    ServerRecord,
    ServerSpec,
    ToolRecord,
    ToolSpec,
)
from tool_selector.core.names import RULE
from tool_selector.trust.limits import CappedDescription, CappedMetadata
from tool_selector.trust.shown import model_for_agent

logger = logging.getLogger(__name__)

Ops = Annotated[Operations, Depends(ops)]
Reader = Annotated[Principal, Depends(need("read"))]
Writer = Annotated[Principal, Depends(need("write"))]
Editor = Annotated[Principal, Depends(need("edit"))]
Importer = Annotated[Principal, Depends(need("import"))]
Admin = Annotated[Principal, Depends(need("admin"))]

v1 = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)
# Resolves that miss the answer cache run in at most this many threads (the api.resolve_threads
# setting, applied by build_app); their query embeddings share model calls through the query batcher
# (measured with `tool-selector lab bench-api`, docs/measurements.md "REST API").


class ResolveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1, description="what the agent wants to do (at most `max_query_chars` characters)"
    )
    mode: SearchMode = "hybrid"
    limit: int = Field(default=10, ge=1, le=50, description="ranked tools and servers to consider")
    explain: bool = Field(default=False, description="also return the ranked candidates")


class ResolveResponse(Decision):
    resolution: Resolution | None = None


class ToolHit(BaseModel):
    id: str
    server: str
    name: str
    score: float
    match_type: MatchType
    description: str


class SearchResponse(BaseModel):
    query: str
    tools: list[ToolHit]


class ServerCreate(ServerSpec):
    """A server to register, held to the caps of tool_selector/trust/limits.py (as a PATCH is)."""

    description: CappedDescription = ""
    metadata: CappedMetadata = Field(default_factory=dict)
    matching_mode: registry.MatchingMode = "auto"


class ToolCreate(ToolSpec):
    """A tool to register, held to the caps of tool_selector/trust/limits.py (as a PATCH is); its JSON
    values keep ToolSpec's depth and size limits (tool_selector/core/json_limits.py)."""

    description: CappedDescription = ""
    matching_mode: registry.MatchingMode = "auto"
    match_scope: registry.MatchScope = "server"


class ToolDeleted(BaseModel):
    deleted: str
    tool: ToolRecord


class JobAccepted(BaseModel):
    job: JobRecord
    poll: str


@v1.post("/resolve", tags=["search"])
async def resolve(body: ResolveRequest, o: Ops, _: Reader) -> ResolveResponse:
    """The tiered decision: activated, multiple_matches, weak_matches or not_found."""
    answer = o.cached_answer(body.query, body.mode, body.limit)
    if answer is None:
        answer = await anyio.to_thread.run_sync(
            o.resolve, body.query, body.mode, body.limit, limiter=o.resolving
        )
    resolution, decision = answer
    response = ResolveResponse(**dict(decision), resolution=resolution if body.explain else None)
    return model_for_agent(response)  # agents read it: every text stripped of invisible characters


@v1.get("/tools/search", tags=["search"])
def search_tools(
    o: Ops,
    _: Reader,
    q: Annotated[str, Query(min_length=1, description="the search text (at most `max_query_chars`)")],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    mode: SearchMode = "hybrid",
) -> SearchResponse:
    """Ranked tools for a text (no tiers)."""
    hits = o.search_tools(q, mode, limit)
    tools = {t.id: t for t in (o.tool(h.id) for h in hits)}
    response = SearchResponse(
        query=q,
        tools=[ToolHit(**h.model_dump(), description=tools[h.id].description) for h in hits],
    )
    return model_for_agent(response)  # like /resolve: what an agent may read, cleaned


@v1.get("/servers", tags=["registration"])
def list_servers(o: Ops, _: Reader) -> list[ServerRecord]:
    return catalog.list_servers(o.container.store)


@v1.get("/servers/{name:path}", tags=["registration"])
def get_server(name: str, o: Ops, _: Reader) -> ServerRecord:
    return o.require_server(name)


@v1.post("/servers", tags=["registration"], status_code=201, responses={200: {"description": "matched"}})
def create_server(body: ServerCreate, response: Response, o: Ops, who: Writer) -> registry.ServerOutcome:
    """Register a server (no tools yet). In ``auto`` mode an existing server of that name is returned."""
    spec = ServerSpec(name=body.name, description=body.description, metadata=body.metadata)
    outcome = o.write(
        "server registration",
        lambda: registry.register_server(
            o.container, spec, mode=body.matching_mode, method=CreationMethod.MANUAL_API, actor=who.actor
        ),
        who,
    )
    if outcome.outcome == "matched":
        response.status_code = 200
    return outcome


@v1.patch("/servers/{name:path}", tags=["registration"])
def patch_server(name: str, body: registry.ServerPatch, o: Ops, who: Editor) -> registry.ServerWritten:
    return o.write(
        "server update", lambda: registry.patch_server(o.container, name, body, actor=who.actor), who
    )


@v1.delete("/servers/{name:path}", tags=["registration"])
def delete_server(
    name: str,
    o: Ops,
    who: Editor,
    cascade: Annotated[
        bool, Query(description="also delete the server's tools (required if it has any)")
    ] = False,
) -> registry.ServerDeleted:
    """Delete a server. If it has tools, ``cascade=true`` is required and they are deleted too (409
    otherwise, listing them)."""
    return o.write(
        "server deletion",
        lambda: registry.delete_server(o.container, name, cascade=cascade, actor=who.actor),
        who,
    )


@v1.get("/tools/{tool_id:path}", tags=["registration"])
def get_tool(tool_id: str, o: Ops, _: Reader) -> ToolRecord:
    return o.require_tool(tool_id)


@v1.post("/tools", tags=["registration"], status_code=201, responses={200: {"description": "matched"}})
def create_tool(body: ToolCreate, response: Response, o: Ops, who: Writer) -> registry.ToolOutcome:
    """Register a tool of a registered server; see ``matching_mode`` for near-duplicates."""
    spec = ToolSpec(**body.model_dump(include=set(ToolSpec.model_fields)))
    outcome = o.write(
        "tool registration",
        lambda: registry.register_tool(
            o.container,
            spec,
            mode=body.matching_mode,
            scope=body.match_scope,
            method=CreationMethod.MANUAL_API,
            actor=who.actor,
        ),
        who,
    )
    if outcome.outcome == "matched":
        response.status_code = 200
    return outcome


@v1.patch("/tools/{tool_id:path}", tags=["registration"])
def patch_tool(tool_id: str, body: registry.ToolPatch, o: Ops, who: Editor) -> ToolRecord:
    return o.write(
        "tool update", lambda: registry.patch_tool(o.container, tool_id, body, actor=who.actor), who
    )


@v1.delete("/tools/{tool_id:path}", tags=["registration"])
def delete_tool(tool_id: str, o: Ops, who: Editor) -> ToolDeleted:
    removed = o.write(
        "tool deletion", lambda: registry.delete_tool(o.container, tool_id, actor=who.actor), who
    )
    return ToolDeleted(deleted=tool_id, tool=removed)


_NAME = {"type": "string", "minLength": 1, "maxLength": 300, "description": RULE}
_CATALOG_BODY = {
    "type": "object",
    "description": "The benchmark format: servers (other keys are kept as metadata) and their tools.",
    "required": ["servers"],
    "properties": {
        "servers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": _NAME, "description": {"type": "string"}},
            },
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["server", "name"],
                "properties": {
                    "server": _NAME,
                    "name": _NAME,
                    "description": {"type": "string"},
                    "input_schema": {"type": "object"},
                },
            },
        },
    },
}
_MCP_SERVERS_BODY = {
    "type": "object",
    "description": "A Claude Desktop / Cursor config; its servers are added switched off.",
    "required": ["mcpServers"],
    "properties": {"mcpServers": {"type": "object", "additionalProperties": {"type": "object"}}},
}
_IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"oneOf": [_CATALOG_BODY, _MCP_SERVERS_BODY]}},
            "text/csv": {"schema": {"type": "string", "description": "server,server_description,tool,..."}},
        },
    }
}


IMPORT_PATH = "/api/v1/catalog/import"


@v1.post("/catalog/import", tags=["registration"], status_code=202, openapi_extra=_IMPORT_BODY)
async def import_catalog(
    request: Request,
    o: Ops,
    who: Importer,
    matching_mode: registry.MatchingMode = "auto",
    match_scope: registry.MatchScope = "server",
) -> JobAccepted:
    """Import a batch as a job, all or nothing. The body is validated before the job starts (422 lists
    every problem with its line or item); GET the job for the counts."""
    raw = await request.body()
    batch = catalog.read_batch(
        o.container.settings, o.container.store, raw=raw, content_type=request.headers.get("content-type", "")
    )
    job = o.submit_import(batch, mode=matching_mode, scope=match_scope, who=who)
    return JobAccepted(job=job, poll=f"/api/v1/jobs/{job.id}")


@v1.post("/enrichment/server/{name:path}/profile", tags=["enrichment"])
def reprofile(name: str, o: Ops, who: Editor) -> ServerStatus:
    """Force a re-profile of one server (past the cache) and re-enrich its tools, then re-index."""
    return o.reprofile(name, who)


@v1.get("/enrichment/server/{name:path}/status", tags=["enrichment"])
def server_status(name: str, o: Ops, _: Reader) -> ServerStatus:
    return o.server_status(name)


@v1.post("/enrichment/sync", tags=["enrichment"], status_code=202)
def start_sync(o: Ops, who: Editor) -> JobAccepted:
    """Run the incremental sync (discover, profile, enrich, index) as a background job."""
    job = o.submit_sync(who)
    return JobAccepted(job=job, poll=f"/api/v1/jobs/{job.id}")


@v1.get("/enrichment/stats", tags=["enrichment"])
def enrichment_stats(o: Ops, _: Reader) -> EnrichmentStats:
    return o.enrichment_stats()


@v1.get("/jobs/{job_id}", tags=["jobs"])
def get_job(job_id: str, o: Ops, who: Annotated[Principal, Depends(need(None))]) -> JobRecord:
    """A job's state and result. A key with the read scope sees every job; a key without it (an
    import-only key) sees the jobs it started, and gets 403 for any other id, whether a job has it or not."""
    return o.jobs.get_for(job_id, who)


@v1.get("/audit", tags=["admin"])
def audit(
    o: Ops,
    _: Admin,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before_seq: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="page: the smallest seq seen")
    ] = None,
    actor: str | None = None,
    target: str | None = None,
) -> list[AuditRecord]:
    """Every mutation, newest first: who, what, when, and hashes before and after."""
    return o.audit(limit=limit, before_seq=before_seq, actor=actor, target=target)


def build_app(settings: Settings, make_container: Callable[[], Container] | None = None) -> FastAPI:
    app = FastAPI(
        title="tool-selector",
        version="0.1.0",
        description="Find the right MCP server and tool; register and import catalogs. "
        "Every /api/v1 route needs `Authorization: Bearer <key>` (`tool-selector keys create`).",
        lifespan=lifespan_for(make_container or (lambda: Container(settings))),
        docs_url=None,  # served from the package by mount_api_docs: FastAPI's pages load from a CDN
        redoc_url=None,
    )
    install_error_handlers(app)
    api = settings.api
    catalogs = {IMPORT_PATH: (api.max_import_bytes, "api.max_import_bytes")}  # the route taking a catalog
    app.add_middleware(
        KeyThenBodyLimit,
        max_body_bytes=api.max_body_bytes,
        larger=catalogs,
        body_timeout_s=api.body_timeout_s,
    )

    @app.get("/health", tags=["health"])
    def health(request: Request) -> Health:
        """Backend reachable, last sync, stale servers (no key needed)."""
        operations: Operations = request.app.state.ops
        return operations.health()

    app.include_router(api_console.router)  # before v1: /tools is its own route, not /tools/{id}
    app.include_router(v1)
    app.include_router(api_quarantine.router)
    app.include_router(api_memory.router)
    mount_console(app)
    mount_api_docs(app)
    return app
