"""``sync``: discover the configured servers, then profile, enrich and index what changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from routes.cli.base import (
    PARTIAL_EXIT,
    EnricherChoice,
    JsonOrText,
    app,
    cli_settings,
    echo_json,
    mapped_errors,
    phase_progress,
    wants_json,
)

if TYPE_CHECKING:
    from services.write.sync import SyncSummary


@app.command()
def sync(
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: TOOL_SELECTOR_ENRICHER)"),
    ] = None,
    as_json: JsonOrText = None,
) -> None:
    """Discover the configured servers, then profile, enrich and index what changed.

    Prints a summary (JSON into a pipe or with --json). Exit 0 when everything worked, 20 when some
    server or enrichment failed (the rest was synced; see "failed"), 14 when another sync is running."""
    from services.shared.container import Container
    from services.write.sync import run_sync

    with mapped_errors(), Container(cli_settings()) as container:
        summary = run_sync(container, progress=phase_progress(), enricher=enricher)
        if wants_json(as_json):
            echo_json(summary.model_dump())
        else:
            typer.echo(summary_text(summary))
        if not summary.ok:
            raise typer.Exit(PARTIAL_EXIT)


def summary_text(summary: SyncSummary) -> str:
    """A sync's summary for a person: servers, tools, what waits for the operator, and time."""
    lines = [
        f"synced {summary.servers_seen} of {summary.servers_configured} servers ({summary.servers_changed} "
        f"changed, {summary.servers_failed} failed, {summary.servers_removed} removed) in "
        f"{summary.seconds.get('total', 0.0):.1f} s",
        f"tools: {summary.tools_added} added, {summary.tools_changed} changed, "
        f"{summary.tools_removed} removed, {summary.tools_unchanged} unchanged; enricher {summary.enricher}, "
        f"{summary.documents_embedded} documents embedded",
    ]
    lines += [f"failed: {server}: {why}" for server, why in summary.failed.items()]
    held = len(summary.tools_held) + len(summary.servers_held)
    if held:
        lines.append(f"held for approval: {held} (tool-selector quarantine list)")
    if summary.waiting:
        waiting = ", ".join(summary.waiting)
        lines.append(f"waiting to be adopted: {waiting} (tool-selector servers enable NAME)")
    return "\n".join(lines)
