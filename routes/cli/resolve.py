"""``resolve``, and the commands that measure or fit it: ``eval``, ``calibrate``, ``train-ranker``, ``bench``
and ``bench-sync``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from routes.cli.base import EnricherChoice, app, cli_settings, echo_json, mapped_errors, progress
from tool_selector.core.errors import InvalidInputError
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
    from services.resolve.steps import step_matches
    from services.shared.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        resolution, decision = ResolveService(container).resolve_and_route(query, mode=mode)
        out = decision.model_dump(mode="json", exclude_none=True)
        steps = step_matches(resolution, decision)  # a multi-step request: the best powers per step
        if steps:
            out["parts"] = [s.model_dump(mode="json") for s in steps]
        if explain:
            out["resolution"] = resolution.model_dump(mode="json")
        echo_json(out)


@app.command("eval")
def eval_command(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP)],
    predictions: Annotated[Path, typer.Option(help="Where to write one JSON line per query")],
    report: Annotated[
        Path | None,
        typer.Option(
            help="Also write a Markdown report here, with ECE and a reliability diagram (PNG) beside it"
        ),
    ] = None,
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: the configured enricher)"),
    ] = None,
) -> None:
    """Resolve every query of the datasets and print recall, MRR, tiers, calibration and latency: all
    together, per dataset and per catalog size.

    Each catalog is enriched as the nightly sync would; its queries never are."""
    from eval.quality.harness import run_eval
    from eval.quality.report import format_console

    with mapped_errors():
        result, _ = run_eval(
            cli_settings(),
            datasets,
            predictions,
            report_path=report,
            progress=progress("queries"),
            enricher=enricher,
        )
        typer.echo(format_console(result))


@app.command()
def calibrate(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP + "; each weighs the same in the fit")],
    out: Annotated[Path, typer.Option(help="Where to write the calibration JSON")],
    holdout: Annotated[
        list[Path] | None,
        typer.Option(help="Datasets never fitted on, scored with the result (repeat the option)"),
    ] = None,
    version: Annotated[str, typer.Option(help="Version name stored in the file")] = "confidence-v2",
    folds: Annotated[int, typer.Option(min=2, help="Cross-validation folds, grouped by catalog")] = 5,
    jobs: Annotated[int, typer.Option(min=1, help="Worker processes resolving the catalogs' queries")] = 1,
) -> None:
    """Fit the confidence (P(top power right), P(a right power in the top three)) on labelled queries
    of many catalogs, some of them unanswerable; report cross-validated and hold-out figures."""
    from eval.fitting.calibrate import calibrate as fit_calibration
    from eval.fitting.calibrate_file import write_calibration
    from services.shared.container import enricher_kind

    def labelled_progress(label: str, done: int, total: int) -> None:
        show = progress(label)  # a counter on a terminal, nothing elsewhere
        if show is not None:
            show(done, total)

    with mapped_errors():
        settings = cli_settings()
        held = list(holdout or [])
        calibration, fitted, held_out = fit_calibration(
            settings,
            datasets,
            version=version,
            holdout=held,
            progress=labelled_progress,
            folds=folds,
            jobs=jobs,
        )
        provenance = {
            "command": "tool-selector calibrate "
            + " ".join(str(d) for d in datasets)
            + "".join(f" --holdout {h}" for h in held)
            + f" --out {out} --version {version} --folds {folds}",
            "retrieval": {
                "enricher": enricher_kind(settings, None),
                "alpha": settings.alpha,
                "fusion": settings.fusion,
                "field_boosts": settings.field_boosts,
                "candidates": settings.candidates,
                "embedding": settings.embedding_model,
            },
        }
        evidence = write_calibration(calibration, fitted, held_out, out, provenance)
        echo_json({"calibration": str(out), "evidence": str(evidence), **calibration.provenance})


@app.command("train-ranker")
def train_ranker_command(
    datasets: Annotated[list[Path], typer.Argument(help=DATASETS_HELP + "; each weighs the same in the fit")],
    out: Annotated[Path, typer.Option(help="Where to write the ranker JSON")],
    version: Annotated[str, typer.Option(help="Version name stored in the file")] = "ranker-v1",
    folds: Annotated[int, typer.Option(min=2, help="Held-back folds, grouped by gold server")] = 5,
    rounds: Annotated[int, typer.Option(min=10, help="Boosting rounds")] = 300,
    max_queries: Annotated[
        int | None,
        typer.Option(min=1, help="At most this many answerable queries per dataset folder (a fixed sample)"),
    ] = None,
) -> None:
    """Fit the learned ranker (LightGBM lambdarank over the fused search's first candidates) on labelled
    queries; print the held-back folds' tool recall beside the fused order's, and write the model."""
    from eval.fitting.train_ranker import train_ranker

    def labelled_progress(label: str, done: int, total: int) -> None:
        show = progress(label)
        if show is not None:
            show(done, total)

    with mapped_errors():
        command = (
            "tool-selector train-ranker "
            + " ".join(str(d) for d in datasets)
            + f" --out {out} --version {version} --folds {folds} --rounds {rounds}"
            + (f" --max-queries {max_queries}" if max_queries else "")
        )
        model = train_ranker(
            cli_settings(),
            datasets,
            out=out,
            version=version,
            folds=folds,
            rounds=rounds,
            max_queries=max_queries,
            progress=labelled_progress,
            command=command,
        )
        echo_json({"ranker": str(out), "trees": len(model.ensemble.trees), **model.figures})


@app.command()
def bench(
    dataset: Annotated[
        Path, typer.Argument(help="A benchmark folder: its catalog is indexed, its queries timed")
    ],
    queries: Annotated[int, typer.Option(help="How many queries to time")] = 300,
    build: Annotated[bool, typer.Option(help="Also time an index build from scratch")] = True,
) -> None:
    """Print resolve latency (warm, in-process), index build time and peak memory."""
    from eval.bench.resolve import bench as run_bench

    with mapped_errors():
        echo_json(run_bench(cli_settings(), dataset, queries=queries, build=build))


@app.command("bench-sync")
def bench_sync_command(
    servers: Annotated[Path | None, typer.Option(help="A server configuration to discover live")] = None,
    catalog: Annotated[Path | None, typer.Option(help="Or a catalog folder imported from file")] = None,
    enricher: Annotated[EnricherChoice, typer.Option(help="offline, claude or none")] = "offline",
) -> None:
    """Print the time of a first and a no-change `tool-selector sync` in a fresh data folder."""
    from eval.bench.sync import bench_sync

    with mapped_errors():
        if (servers is None) == (catalog is None):
            raise InvalidInputError(
                "Give --servers FILE or --catalog DIR.",
                hint="For example --servers examples/demo-servers.json.",
            )
        echo_json(bench_sync(cli_settings(), servers_file=servers, catalog=catalog, enricher=enricher))
