"""``tool-selector lab ui-screenshots``: the operator console photographed in a real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from eval.cli.app import lab
from routes.cli.base import cli_settings, mapped_errors


@lab.command("ui-screenshots")
def ui_screenshots_command(
    out_dir: Annotated[Path, typer.Argument(help="Where to write the PNGs (made if missing)")],
    catalog: Annotated[
        Path | None,
        typer.Option(help="The catalog folder to seed the console with (default: examples/demo-catalog)"),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Photograph this existing data folder instead of seeding one (needs --key)"),
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="With --data-dir: an API key of that folder (admin shows every action)")
    ] = None,
) -> None:
    """Write a PNG of each console page (servers, tools, a tool, quarantine with a diff, playground with
    an answer, audit, jobs, evaluation) at 1280x800 and 390x844, and print the first load of /ui and
    the playground's answer times, measured in the browser.

    Seeds a temporary data folder (a catalog import, configured servers that run, fail and are off, a
    sync, a held tool, an eval report), starts `tool-selector api` on a free loopback port and drives
    the system's Chromium through Playwright (Debian's chromium package; the dev extra installs
    Playwright). Exits 1 when a page showed an error or logged one to the console."""
    from eval.console.demo import DEMO_CATALOG
    from eval.console.screenshots import ui_screenshots

    with mapped_errors():
        shots = ui_screenshots(
            cli_settings(),
            out_dir,
            catalog=catalog or DEMO_CATALOG,
            data_dir=data_dir,
            key=key,
            on_file=lambda path: typer.echo(str(path)),
            on_step=lambda text: typer.echo(f"ui-screenshots: {text}", err=True),
        )
    timings = shots.timings()
    typer.echo(
        f"first load of /ui (navigation start -> servers table shown, fresh context): "
        f"{timings['first_load_median_ms']} ms median of {timings['first_load_ms']}"
        f" (load event: {timings['load_event_ms']} ms)"
    )
    typer.echo(f"  its API calls (start, end in ms): {json.dumps(timings['first_load_calls_ms'])}")
    typer.echo(
        f"playground (click -> tier shown): {timings['playground_median_ms']} ms median; "
        + json.dumps({r: [ms, timings["tiers"][r]] for r, ms in timings["playground_ms"].items()})
        + f" (after a warm-up of {timings['playground_warm_up_ms']} ms)"
    )
    for problem in shots.problems:
        typer.echo(f"problem: {problem}", err=True)
    if shots.problems:
        raise typer.Exit(1)
