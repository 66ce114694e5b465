"""``tool-selector lab bench-scale``: index build, memory, disk, latency, recall and registration cost from
~2k to 100k tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from eval.cli.app import lab
from routes.cli.base import cli_settings, mapped_errors
from tool_selector.core.errors import InvalidInputError

_SIZES_HINT = "Give tool counts separated by commas, for example --sizes 2000,10000,30000,100000."


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidInputError(f"--sizes {text!r} is not a list of numbers.", hint=_SIZES_HINT) from None
    if not sizes or min(sizes) < 1:
        raise InvalidInputError(
            f"--sizes {text!r} must name at least one size of 1 or more.", hint=_SIZES_HINT
        )
    return sizes


@lab.command("bench-scale")
def bench_scale_command(
    sizes: Annotated[
        str, typer.Option(help="Catalog sizes in tools, separated by commas")
    ] = "2000,10000,30000,100000",
    queries: Annotated[
        int | None,
        typer.Option(min=1, help="Resolve this many msc_bench_dev queries, spread evenly (default: all 622)"),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where to write scale.json and scale.png")] = Path("bench-scale"),
    timeout_s: Annotated[
        float | None,
        typer.Option(min=1, help="Cut a size off after this many seconds and report it as not finished"),
    ] = None,
    benchmarks: Annotated[
        Path, typer.Option(help="The shared benchmarks folder (msc_bench_dev, livemcpbench, metatool)")
    ] = Path("../shared/benchmarks"),
    registrations: Annotated[
        int, typer.Option(min=0, help="Tool registrations timed per size (median; 0: none)")
    ] = 3,
    embed_copies: Annotated[
        bool,
        typer.Option(
            help="Embed every distractor copy too (default: a copy reuses its original's vectors, the "
            "build time of embedding them all is estimated from the measured rate)"
        ),
    ] = False,
) -> None:
    """Measure catalogs of ~2k to 100k tools: build time, memory, disk, latency, recall, registration cost.

    Each catalog is msc_bench_dev's, plus the other benchmarks' tools as distractors and, where more are
    needed, distractor copies under new server names; each size runs in a fresh child process. Prints
    one JSON line per size as it finishes (index build time from scratch, tools/s, peak RSS, disk size,
    resolve p50/p95/p99 warm, msc L1-4 tool R@5 and server R@3, the cost of one tool registration),
    then a table; writes scale.json and scale.png."""
    from eval.bench.scale import bench_scale
    from eval.bench.scale_report import format_table

    with mapped_errors():
        rows = bench_scale(
            cli_settings(),
            benchmarks,
            _parse_sizes(sizes),
            out=out,
            queries=queries,
            timeout_s=timeout_s,
            registrations=registrations,
            reuse_copy_vectors=not embed_copies,
            on_start=lambda catalog: typer.echo(
                f"bench-scale {catalog.requested:,}: {catalog.describe()} Measuring it in a child process.",
                err=True,
            ),
            on_row=lambda row: typer.echo(json.dumps(row, ensure_ascii=False, default=str)),
        )
        typer.echo("")
        typer.echo(format_table(rows))
        typer.echo(f"\nwrote {out / 'scale.json'} and {out / 'scale.png'}")
