"""The ``tool-selector`` command line: parse, make one service call, render. Errors via routes/errors."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from routes.errors import mapping_for
from tool_selector.errors import ToolSelectorError
from tool_selector.logging_setup import configure_logging
from tool_selector.settings import Settings, load_settings

logger = logging.getLogger(__name__)

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find the right MCP server and tool.")
catalog_app = typer.Typer(no_args_is_help=True, help="The catalog of servers and tools.")
index_app = typer.Typer(no_args_is_help=True, help="The search index.")
app.add_typer(catalog_app, name="catalog")
app.add_typer(index_app, name="index")

T = TypeVar("T")


def _settings() -> Settings:
    settings = load_settings()
    configure_logging(settings.log_level)
    return settings


def _echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _fail(error: ToolSelectorError) -> None:
    mapping = mapping_for(error)
    typer.echo(f"error [{mapping.code}]: {error}", err=True)
    raise typer.Exit(mapping.exit_code)


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except ToolSelectorError as exc:
        _fail(exc)


def _progress(label: str) -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\r{label}: {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


@catalog_app.command("import")
def catalog_import(
    folder: Annotated[Path, typer.Argument(help="A folder with servers.json and tools.json")],
    prune: Annotated[bool, typer.Option(help="Also remove servers that are not in this catalog")] = False,
) -> None:
    """Import a catalog folder (benchmark format) into the catalog database, all or nothing."""
    from services.catalog import import_catalog_dir
    from services.container import Container

    with _errors(), Container(_settings()) as container:
        _echo_json(import_catalog_dir(container, folder, prune=prune).model_dump())


@catalog_app.command("list")
def catalog_list() -> None:
    """List the servers in the catalog with their tool counts."""
    from services.container import Container

    with _errors(), Container(_settings()) as container:
        _echo_json(
            [
                {"name": s.name, "tools": s.tool_count, "creation_method": s.creation_method}
                for s in container.store.list_servers()
            ]
        )


@index_app.command("build")
def index_build(
    rebuild: Annotated[bool, typer.Option(help="Rewrite every document, not only changed ones")] = False,
) -> None:
    """Bring the search index in line with the catalog (only changed tools are embedded)."""
    from services.container import Container
    from services.indexing import build_index

    with _errors(), Container(_settings()) as container:
        _echo_json(build_index(container, rebuild=rebuild, progress=_progress("embedding")).model_dump())


@app.command()
def resolve(
    query: Annotated[str, typer.Argument(help="What the agent wants to do")],
    mode: Annotated[str, typer.Option(help="hybrid, keyword or semantic")] = "hybrid",
    explain: Annotated[bool, typer.Option(help="Also print the ranked candidates and the evidence")] = False,
) -> None:
    """Resolve a query and print the tiered decision as JSON."""
    from services.container import Container
    from services.resolving import ResolveService

    with _errors(), Container(_settings()) as container:
        resolution, decision = ResolveService(container).resolve_and_route(query, mode=mode)  # type: ignore[arg-type]
        out = decision.model_dump(mode="json", exclude_none=True)
        if explain:
            out["resolution"] = resolution.model_dump(mode="json")
        _echo_json(out)


@app.command("eval")
def eval_command(
    dataset: Annotated[Path, typer.Argument(help="A folder with servers.json, tools.json, queries.jsonl")],
    predictions: Annotated[Path, typer.Option(help="Where to write one JSON line per query")],
    report: Annotated[Path | None, typer.Option(help="Also write a Markdown report here")] = None,
    enricher: Annotated[
        str | None, typer.Option(help="auto, offline, claude or none (default: the configured enricher)")
    ] = None,
) -> None:
    """Resolve every query of a benchmark folder and print recall, MRR, tiers and latency.

    The dataset's catalog is enriched as the nightly sync would; its queries never are."""
    from eval.harness import run_eval
    from eval.report import format_console

    with _errors():
        result, _ = run_eval(
            _settings(), dataset, predictions, report_path=report, progress=_progress("queries"), enricher=enricher
        )
        typer.echo(format_console(result))


@app.command()
def calibrate(
    datasets: Annotated[list[Path], typer.Argument(help="Benchmark folders with labelled queries")],
    out: Annotated[Path, typer.Option(help="Where to write the calibration JSON")],
    version: Annotated[str, typer.Option(help="Version name stored in the file")] = "confidence-v1",
    l2: Annotated[float, typer.Option(help="L2 penalty of the logistic fit")] = 1.0,
) -> None:
    """Fit the confidence calibration on labelled queries (some of them unanswerable)."""
    from eval.calibrate import collect_examples, dataset_provenance, fit_calibration, write_calibration

    with _errors():
        settings = _settings()
        examples = []
        for folder in datasets:
            examples.extend(collect_examples(settings, folder, progress=_progress(folder.name)))
        calibration = fit_calibration(examples, version=version, thresholds=settings.thresholds, l2=l2)
        provenance = {
            "command": "tool-selector calibrate "
            + " ".join(str(d) for d in datasets)
            + f" --out {out}"
            + f" --version {version} --l2 {l2}",
            "datasets": dataset_provenance(datasets),
            "retrieval": {
                "alpha": settings.alpha,
                "field_boosts": settings.field_boosts,
                "candidates": settings.candidates,
                "embedding": settings.embedding_model,
            },
        }
        evidence = write_calibration(calibration, examples, out, provenance)
        _echo_json({"calibration": str(out), "evidence": str(evidence), **calibration.provenance})


@app.command()
def bench(
    dataset: Annotated[
        Path, typer.Argument(help="A benchmark folder: its catalog is indexed, its queries timed")
    ],
    queries: Annotated[int, typer.Option(help="How many queries to time")] = 300,
    build: Annotated[bool, typer.Option(help="Also time an index build from scratch")] = True,
) -> None:
    """Print resolve latency (warm, in-process), index build time and peak memory."""
    from eval.bench import bench as run_bench

    with _errors():
        _echo_json(run_bench(_settings(), dataset, queries=queries, build=build))


def main() -> None:
    app()
