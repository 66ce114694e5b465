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
from tool_selector.errors import InvalidInputError, ToolSelectorError
from tool_selector.logging_setup import configure_logging
from tool_selector.settings import Settings, load_settings

logger = logging.getLogger(__name__)

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find the right MCP server and tool.")
catalog_app = typer.Typer(no_args_is_help=True, help="The catalog of servers and tools.")
index_app = typer.Typer(no_args_is_help=True, help="The search index.")
app.add_typer(catalog_app, name="catalog")
servers_app = typer.Typer(
    no_args_is_help=True, help="The MCP servers tool-selector discovers (mcpServers format)."
)
app.add_typer(index_app, name="index")
app.add_typer(servers_app, name="servers")

T = TypeVar("T")
SYNC_PARTIAL_EXIT = 20


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
    from services.shared.auth import cli_principal
    from services.shared.container import Container
    from services.write.catalog import import_catalog_dir

    with _errors(), Container(_settings()) as container:
        _echo_json(
            import_catalog_dir(container, folder, prune=prune, actor=cli_principal().actor).model_dump()
        )


@catalog_app.command("list")
def catalog_list() -> None:
    """List the servers in the catalog with their tool counts."""
    from services.shared.container import Container

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
    from services.shared.container import Container
    from services.shared.indexing import build_index

    with _errors(), Container(_settings()) as container:
        _echo_json(build_index(container, rebuild=rebuild, progress=_progress("embedding")).model_dump())


@index_app.command("rebuild")
def index_rebuild(
    backend: Annotated[
        str | None, typer.Option(help="embedded or weaviate; default: the configured backend")
    ] = None,
) -> None:
    """Empty a backend and fill it again from the catalog store (e.g. `--backend weaviate`, and back)."""
    from services.shared.container import Container
    from services.shared.indexing import rebuild_index

    with _errors():
        if backend not in (None, "embedded", "weaviate"):
            raise InvalidInputError(
                f"Unknown backend {backend!r}.", hint="Use --backend embedded or weaviate."
            )
        settings = load_settings(backend=backend) if backend else _settings()
        configure_logging(settings.log_level)
        with Container(settings) as container:
            summary = rebuild_index(container, progress=_progress("embedding"))
            _echo_json({"backend": settings.backend, "target": _target(settings), **summary.model_dump()})


def _target(settings: Settings) -> str:
    if settings.backend == "embedded":
        return str(settings.index_dir)
    return f"{settings.weaviate_url} collection {settings.weaviate_collection}"


@app.command()
def resolve(
    query: Annotated[str, typer.Argument(help="What the agent wants to do")],
    mode: Annotated[str, typer.Option(help="hybrid, keyword or semantic")] = "hybrid",
    explain: Annotated[bool, typer.Option(help="Also print the ranked candidates and the evidence")] = False,
) -> None:
    """Resolve a query and print the tiered decision as JSON."""
    from services.shared.container import Container
    from services.shared.resolving import ResolveService

    with _errors(), Container(_settings()) as container:
        resolution, decision = ResolveService(container).resolve_and_route(query, mode=mode)  # type: ignore[arg-type]
        out = decision.model_dump(mode="json", exclude_none=True)
        if explain:
            out["resolution"] = resolution.model_dump(mode="json")
        _echo_json(out)


DATASETS_HELP = (
    "Dataset folders (servers.json, tools.json, queries.jsonl) or small-catalog roots (a folder of "
    "k<servers>-<n>/ dataset folders, as shared/benchmarks/make_subcatalogs.py writes them)"
)


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
        str | None, typer.Option(help="auto, offline, claude or none (default: the configured enricher)")
    ] = None,
) -> None:
    """Resolve every query of the datasets and print recall, MRR, tiers, calibration and latency: all
    together, per dataset and per catalog size.

    Each catalog is enriched as the nightly sync would; its queries never are."""
    from eval.harness import run_eval
    from eval.report import format_console

    with _errors():
        result, _ = run_eval(
            _settings(),
            datasets,
            predictions,
            report_path=report,
            progress=_progress("queries"),
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
    from eval.calibrate import calibrate as fit_calibration
    from eval.calibrate import write_calibration
    from eval.workspace import enricher_kind

    def progress(label: str, done: int, total: int) -> None:
        show = _progress(label)  # a counter on a terminal, nothing elsewhere
        if show is not None:
            show(done, total)

    with _errors():
        settings = _settings()
        held = list(holdout or [])
        calibration, fitted, held_out = fit_calibration(
            settings, datasets, version=version, holdout=held, progress=progress, folds=folds, jobs=jobs
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


@app.command("bench-sync")
def bench_sync_command(
    servers: Annotated[Path | None, typer.Option(help="A server configuration to discover live")] = None,
    catalog: Annotated[Path | None, typer.Option(help="Or a catalog folder imported from file")] = None,
    enricher: Annotated[str, typer.Option(help="offline, claude or none")] = "offline",
) -> None:
    """Print the time of a first and a no-change `tool-selector sync` in a fresh data folder."""
    from eval.bench_sync import bench_sync

    with _errors():
        if (servers is None) == (catalog is None):
            raise InvalidInputError(
                "Give --servers FILE or --catalog DIR.",
                hint="For example --servers examples/demo-servers.json.",
            )
        _echo_json(bench_sync(_settings(), servers_file=servers, catalog=catalog, enricher=enricher))


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{what} {value!r} is not KEY=VALUE.", hint=f"Write {what} as KEY=VALUE.")
        out[key] = val
    return out


@servers_app.command("add")
def servers_add(
    name: Annotated[str, typer.Argument(help="The server's name (how agents and the catalog call it)")],
    command: Annotated[
        list[str] | None, typer.Argument(help="A stdio server's command and arguments")
    ] = None,
    url: Annotated[
        str | None, typer.Option(help="A streamable HTTP server's url (instead of a command)")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE for the server's environment; ${VAR} ok")
    ] = None,
    header: Annotated[list[str] | None, typer.Option(help="KEY=VALUE HTTP header; ${VAR} ok")] = None,
    steering: Annotated[
        str, typer.Option(help="Guidance shown to the agent when it activates the server")
    ] = "",
    keyword: Annotated[list[str] | None, typer.Option(help="An extra search keyword (repeatable)")] = None,
    timeout: Annotated[float | None, typer.Option(help="Discovery timeout for this server, seconds")] = None,
    disabled: Annotated[bool, typer.Option(help="Add it switched off")] = False,
    replace: Annotated[bool, typer.Option(help="Overwrite an entry of the same name")] = False,
) -> None:
    """Add a server to the configuration: `servers add NAME -- CMD ARGS...` or `servers add NAME --url URL`.

    It is discovered, profiled and indexed at the next `tool-selector sync`."""
    from pydantic import ValidationError

    from services.shared.container import Container
    from services.write.servers import add_server
    from tool_selector.servers_config import ServerConfig

    with _errors(), Container(_settings()) as container:
        cmd = list(command or [])
        try:
            config = ServerConfig(
                command=cmd[0] if cmd else None,
                args=cmd[1:],
                url=url,
                env=_pairs(env or [], "--env"),
                headers=_pairs(header or [], "--header"),
                steering=steering,
                keywords=list(keyword or []),
                timeout_s=timeout,
                enabled=not disabled,
            )
        except ValidationError as exc:
            raise InvalidInputError(
                "Invalid server: " + "; ".join(str(e["msg"]) for e in exc.errors()),
                hint="Give a command after the name (after --) or --url.",
            ) from exc
        add_server(container, name, config, replace=replace)
        _echo_json(
            {"added": name, "file": str(container.settings.servers_path), "next": "tool-selector sync"}
        )


@servers_app.command("list")
def servers_list() -> None:
    """List configured servers with their tool counts and the state of their last discovery."""
    from services.shared.container import Container
    from services.write.servers import list_servers

    with _errors(), Container(_settings()) as container:
        _echo_json([row.model_dump() for row in list_servers(container)])


@servers_app.command("remove")
def servers_remove(name: Annotated[str, typer.Argument(help="The configured server's name")]) -> None:
    """Remove a server from the configuration, and its tools from the catalog and the index."""
    from services.shared.auth import cli_principal
    from services.shared.container import Container
    from services.write.servers import remove_server

    with _errors(), Container(_settings()) as container:
        _echo_json(remove_server(container, name, actor=cli_principal().actor).model_dump())


@servers_app.command("import")
def servers_import(
    file: Annotated[
        Path, typer.Argument(help="claude_desktop_config.json, ~/.claude.json, .mcp.json or mcp.json")
    ],
    replace: Annotated[
        bool, typer.Option(help="Overwrite servers already configured under the same name")
    ] = False,
) -> None:
    """Import the servers of a Claude Desktop, Claude Code or Cursor configuration."""
    from services.shared.container import Container
    from services.write.servers import import_servers

    with _errors(), Container(_settings()) as container:
        _echo_json(import_servers(container, file, replace=replace).model_dump())


def _phase_progress() -> Callable[[str, int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(phase: str, done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r{phase:>8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


@app.command()
def sync(
    enricher: Annotated[
        str | None, typer.Option(help="auto, offline, claude or none (default: TOOL_SELECTOR_ENRICHER)")
    ] = None,
) -> None:
    """Discover the configured servers, then profile, enrich and index what changed.

    Prints a JSON summary. Exit 0 when everything worked, 20 when some server or enrichment failed
    (the rest was synced; see "failed"), 13 when another sync is running."""
    from services.shared.container import Container
    from services.write.sync import run_sync

    with _errors(), Container(_settings()) as container:
        summary = run_sync(container, progress=_phase_progress(), enricher=enricher)
        _echo_json(summary.model_dump())
        if not summary.ok:
            raise typer.Exit(SYNC_PARTIAL_EXIT)


from routes import cli_gateway  # noqa: E402,F401  (registers serve, stats, tokens on ``app``)

from routes import cli_api  # noqa: E402,F401  # isort: skip  (registers api, catalog register, ...)
from routes import cli_keys  # noqa: E402,F401  # isort: skip  (registers keys on ``app``)


def main() -> None:
    app()
