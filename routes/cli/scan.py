"""The scanner's commands: ``scan`` (read tool definitions as an attacker wrote them) and ``bench-scan``.

Exit codes of ``scan``: 0 when nothing is quarantined (flagged items are printed, but pass), 21
(``QUARANTINE_EXIT``) when at least one item is, and the error table's code (3, ``catalog_file``) when
PATH is missing or not in a format it reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from routes.cli.base import app, cli_settings, mapped_errors

QUARANTINE_EXIT = 21


@app.command()
def scan(
    path: Annotated[
        Path,
        typer.Argument(help="A catalog folder (servers.json + tools.json) or a JSON-lines file of tools"),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help='One JSON line per item: {"id", "verdict", "reasons"}')
    ] = False,
    rules_only: Annotated[
        bool,
        typer.Option(
            "--rules-only",
            help="Read with the rules alone, without the learned check of what each text asks the model "
            "to do (faster; what `trust.intent` false does at sync)",
        ),
    ] = False,
) -> None:
    """Scan tool definitions for poisoning: hidden characters, orders to the model, secrets, shadowing,
    and, with the learned check, what each text asks the model to do.

    Reads a catalog folder (its servers' descriptions too; ids are `server::tool`, or the server's
    name) or a JSON-lines file with one tool a line (`{"id", "server", "tool_name", "description",
    "input_schema"}`; ids are the items' own). Verdicts: clean, flagged (one weak signal, shown but
    let through) or quarantine (held at sync and registration). Without --json, one line per item
    that is not clean, and a count on stderr. Exit code 0 when nothing is quarantined, 21 when
    something is, 3 when PATH cannot be read as either format."""
    from services.write.scanning import scan_path

    with mapped_errors():
        settings = cli_settings()
        intent = None
        if not rules_only and settings.trust.intent:
            from tool_selector.embedding.intent import intent_check

            intent = intent_check(threads=settings.embedding.threads)
        report = scan_path(path, limit_bytes=settings.max_file_bytes, intent=intent)
    for item in report.items:
        if as_json:
            typer.echo(json.dumps({"id": item.id, "verdict": item.verdict, "reasons": item.reasons}))
        elif item.verdict != "clean":
            typer.echo(f"{item.verdict:<10}  {item.id}: {'; '.join(item.reasons)}")
    tools = sum(1 for i in report.items if i.kind == "tool")
    servers = len(report.items) - tools
    scanned = f"{tools} tools" + (f" and {servers} server descriptions" if servers else "")
    counts = ", ".join(f"{report.count(v)} {v}" for v in ("clean", "flagged", "quarantine"))
    typer.echo(f"scanned {scanned} of {report.source}: {counts}", err=True)
    if report.count("quarantine"):
        raise typer.Exit(QUARANTINE_EXIT)
