"""``resolve``, and the commands that measure or fit it: ``eval``, ``calibrate``, ``train-ranker``, ``bench``
and ``bench-sync``."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli.base import app, cli_settings, echo_json, mapped_errors
from tool_selector.core.models import SearchMode

DATASETS_HELP = (
    "Dataset folders (servers.json, tools.json, queries.jsonl) or small-catalog roots (a folder of "
    "k<servers>-<n>/ dataset folders, as shared/benchmarks/make_subcatalogs.py writes them)"
)


@app.command()
def resolve(
    query: Annotated[str, typer.Argument(help="What the agent wants to do")],
    mode: Annotated[SearchMode, typer.Option(help="hybrid, keyword or semantic")] = "hybrid",
    explain: Annotated[bool, typer.Option(help="Also print the ranked candidates and the evidence")] = False,
) -> None:
    """Resolve a query and print the tiered decision as JSON."""
    from services.resolve.resolving import ResolveService
    from services.shared.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        resolution, decision = ResolveService(container).resolve_and_route(query, mode=mode)
        out = decision.model_dump(mode="json", exclude_none=True)
        if explain:
            out["resolution"] = resolution.model_dump(mode="json")
        echo_json(out)
