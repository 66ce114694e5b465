"""REST routes the operator console (routes/ui) reads, usable by any client: who the key is, servers
with their status, switching a configured server on or off, browsing tools, one tool with its
enrichment and approval, the list of jobs, and the eval reports.

Scopes as elsewhere: read for the reads, edit to switch a server (as for a sync), except that switching on
an entry that arrived in a catalog import needs admin and its launch line repeated; ``whoami`` needs any
valid key.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from routes.api_app import ERROR_RESPONSES, need, ops
from services.access.keys import Principal
from services.api import console, reports
from services.api.operations import Operations
from tool_selector.catalog.admin import JobRecord, JobState
from tool_selector.catalog.browse import BrowseState, ToolRow

Ops = Annotated[Operations, Depends(ops)]
Reader = Annotated[Principal, Depends(need("read"))]
Editor = Annotated[Principal, Depends(need("edit"))]
AnyKey = Annotated[Principal, Depends(need(None))]

router = APIRouter(prefix="/api/v1", responses=ERROR_RESPONSES)


class Switch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(description="true: the next sync discovers the server; false: it removes its tools")
    confirm_launch: str | None = Field(
        default=None,
        max_length=20_000,
        description="to switch on an imported entry (origin import; admin scope only): its launch line, "
        "exactly as the overview shows it",
    )


class ToolPage(BaseModel):
    total: int = Field(description="tools matching the filters")
    tools: list[ToolRow]


class JobPage(BaseModel):
    total: int = Field(description="jobs matching the filters")
    jobs: list[JobRecord]


@router.get("/whoami", tags=["admin"])
def whoami(who: AnyKey) -> console.WhoAmI:
    """The caller's key: its actor name and scopes, and which roles carry each scope."""
    return console.whoami(who)


@router.get("/overview/servers", tags=["registration"], response_model=console.ServersOverview)
def servers_overview(o: Ops, who: Reader) -> Response:
    """Configured and catalog-only servers with their status (ok, stale, failed with its error,
    disabled, pending, catalog), tool counts, held tools and the last sync. Launch lines show env and
    header values, url credentials and query values as *** to every key below admin."""
    reveal = console.sees_secrets(who)
    overview = console.servers_overview(
        o.container.settings, o.container.store, reveal=reveal
    )  # serialised once: the first page waits
    return Response(overview.model_dump_json(), media_type="application/json")


@router.put("/config/servers/{name:path}/enabled", tags=["registration"])
def switch_server(name: str, body: Switch, o: Ops, who: Editor) -> console.ServerOverview:
    """Switch a configured server on or off (servers.json); the next sync acts on it."""
    return o.write(
        "server switch",
        lambda: console.switch_server(
            o.container, name, body.enabled, principal=who, confirm_launch=body.confirm_launch
        ),
        who,
    )


@router.get("/tools", tags=["registration"])
def list_tools(
    o: Ops,
    _: Reader,
    q: Annotated[
        str | None, Query(max_length=300, description="text in a name, description or server")
    ] = None,
    server: Annotated[str | None, Query(max_length=300)] = None,
    state: Annotated[BrowseState | None, Query(description="an enrichment state, or held")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> ToolPage:
    """The catalog's tools by server and name, one page at a time (for search by meaning: /tools/search)."""
    total, rows = o.browse_tools(text=q, server=server, state=state, limit=limit, offset=offset)
    return ToolPage(total=total, tools=rows)


@router.get("/enrichment/tool/{tool_id:path}", tags=["enrichment"])
def tool_detail(tool_id: str, o: Ops, _: Reader) -> console.ToolDetail:
    """One tool: its original definition, its enrichment (and whether it is current), its server's
    profile, and its approval state (pinned hash, pending quarantine entries)."""
    return console.tool_detail(o.container.store, tool_id)


@router.get("/jobs", tags=["jobs"])
def list_jobs(
    o: Ops,
    _: Reader,
    kind: Annotated[str | None, Query(max_length=50, description="sync or import")] = None,
    state: JobState | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> JobPage:
    """Jobs newest first; a running job of this process shows its progress."""
    total, jobs = o.list_jobs(kind=kind, state=state, limit=limit, offset=offset)
    return JobPage(total=total, jobs=[o.jobs.with_progress(job) for job in jobs])


@router.get("/eval/reports", tags=["evaluation"])
def eval_reports(o: Ops, _: Reader) -> list[reports.ReportListing]:
    """The reports of `tool-selector lab eval --report` in the reports folder (api.reports_dir), newest
    first."""
    return reports.list_reports(o.container.settings.reports_path)


@router.get("/eval/reports/{name}", tags=["evaluation"])
def eval_report(name: str, o: Ops, _: Reader) -> reports.Report:
    """One report: its Markdown, settings and every figure per group."""
    return reports.get_report(o.container.settings.reports_path, name)


@router.get(
    "/eval/reports/{name}/diagram",
    tags=["evaluation"],
    response_class=FileResponse,
    responses={200: {"content": {"image/png": {}}, "description": "the reliability diagram"}},
)
def eval_report_diagram(name: str, o: Ops, _: Reader) -> FileResponse:
    """The report's reliability diagram (PNG)."""
    return FileResponse(
        reports.report_diagram(o.container.settings.reports_path, name), media_type="image/png"
    )
