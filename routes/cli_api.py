"""The REST API's commands: ``api``, ``catalog register`` (batch import with dedup),
``servers enable|disable`` and ``bench-api`` (registered on the one ``tool-selector`` app)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from routes.cli import _echo_json, _errors, _settings, app, catalog_app, servers_app

logger = logging.getLogger(__name__)


@app.command()
def api(
    host: Annotated[str, typer.Option(help="The address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on")] = 8080,
) -> None:
    """Run the REST API (FastAPI on uvicorn). Docs at http://HOST:PORT/docs.

    Every /api/v1 route needs a key: `tool-selector keys create NAME --role ROLE`."""
    import uvicorn

    from routes.api import build_app

    settings = _settings()
    with _errors():
        application = build_app(settings)
        typer.echo(f"tool-selector API on http://{host}:{port} (docs at /docs)", err=True)
        uvicorn.run(application, host=host, port=port, log_level=settings.log_level.lower(), access_log=False)


@catalog_app.command("register")
def catalog_register(
    path: Annotated[Path, typer.Argument(help="A catalog folder or .json, a .csv, or an mcpServers .json")],
    fmt: Annotated[str, typer.Option("--format", help="auto, catalog, csv or mcpservers")] = "auto",
    matching_mode: Annotated[str, typer.Option(help="auto, force_create or match_only")] = "auto",
    match_scope: Annotated[
        str, typer.Option(help="server or catalog: where near-duplicates are looked for")
    ] = ("server"),
) -> None:
    """Add servers and tools from a file, all or nothing, matching near-duplicates like the REST API.

    Unlike `catalog import` (which mirrors a folder: tools not listed are removed), this only adds,
    updates and matches. Prints the counts and one line per item."""
    from services.shared.auth import cli_principal
    from services.shared.container import Container
    from services.write.importing import import_batch
    from tool_selector.catalog.batch import read_batch_file
    from tool_selector.errors import InvalidInputError

    with _errors(), Container(_settings()) as container:
        if matching_mode not in ("auto", "force_create", "match_only") or match_scope not in (
            "server",
            "catalog",
        ):
            raise InvalidInputError(
                f"Unknown --matching-mode {matching_mode!r} or --match-scope {match_scope!r}.",
                hint="Use --matching-mode auto|force_create|match_only and --match-scope server|catalog.",
            )
        if fmt not in ("auto", "catalog", "csv", "mcpservers"):
            raise InvalidInputError(
                f"Unknown --format {fmt!r}.", hint="Use auto, catalog, csv or mcpservers."
            )
        known = {s.name for s in container.store.list_servers()}
        batch = read_batch_file(path, fmt, known_servers=known)  # type: ignore[arg-type]
        result = import_batch(
            container,
            batch,
            mode=matching_mode,  # type: ignore[arg-type]
            scope=match_scope,  # type: ignore[arg-type]
            actor=cli_principal().actor,
        )
        _echo_json(result.model_dump(mode="json"))


def _set_enabled(name: str, enabled: bool) -> None:
    from services.shared.auth import cli_principal
    from services.shared.container import Container
    from services.write.servers import set_enabled

    with _errors(), Container(_settings()) as container:
        changed = set_enabled(container, name, enabled, actor=cli_principal().actor)
        _echo_json({"server": name, "enabled": enabled, "changed": changed, "next": "tool-selector sync"})


@servers_app.command("enable")
def servers_enable(name: Annotated[str, typer.Argument(help="The configured server's name")]) -> None:
    """Switch a configured server on (servers imported through the API arrive switched off)."""
    _set_enabled(name, True)


@servers_app.command("disable")
def servers_disable(name: Annotated[str, typer.Argument(help="The configured server's name")]) -> None:
    """Switch a configured server off: the next sync removes its tools, the gateway will not start it."""
    _set_enabled(name, False)


@app.command("bench-api")
def bench_api_command(
    catalog: Annotated[Path, typer.Option(help="A catalog folder (servers.json, tools.json)")] = Path(
        "eval/datasets/gateway-demo"
    ),
    queries: Annotated[Path | None, typer.Option(help="queries.jsonl (default: the catalog's own)")] = None,
    clients: Annotated[int, typer.Option(min=1, max=256, help="Concurrent closed-loop clients")] = 16,
    seconds: Annotated[float, typer.Option(min=1, help="How long to load the API")] = 30.0,
) -> None:
    """Start `tool-selector api` on a fresh copy of a catalog and load POST /api/v1/resolve; prints
    requests/s, p50/p95/p99 latency, errors and the server's peak memory."""
    from eval.bench_api import bench_api

    with _errors():
        _echo_json(
            bench_api(
                _settings(),
                catalog=catalog,
                queries_file=queries or catalog / "queries.jsonl",
                clients=clients,
                seconds=seconds,
            )
        )
