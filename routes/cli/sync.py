"""``sync``: discover the configured servers, then profile, enrich and index what changed."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli.base import (
    PARTIAL_EXIT,
    EnricherChoice,
    app,
    cli_settings,
    echo_json,
    mapped_errors,
    phase_progress,
)


@app.command()
def sync(
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: TOOL_SELECTOR_ENRICHER)"),
    ] = None,
) -> None:
    """Discover the configured servers, then profile, enrich and index what changed.

    Prints a JSON summary. Exit 0 when everything worked, 20 when some server or enrichment failed
    (the rest was synced; see "failed"), 14 when another sync is running."""
    from services.shared.container import Container
    from services.write.sync import run_sync

    with mapped_errors(), Container(cli_settings()) as container:
        summary = run_sync(container, progress=phase_progress(), enricher=enricher)
        echo_json(summary.model_dump())
        if not summary.ok:
            raise typer.Exit(PARTIAL_EXIT)
