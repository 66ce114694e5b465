"""The REST API's commands: ``api`` (serve it) and ``bench-api`` (load it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from routes.cli.base import app, cli_settings, echo_json, mapped_errors

WORKER_HEALTHCHECK_S = 60  # seconds a worker may take to answer uvicorn's supervisor before a restart


@app.command()
def api(
    host: Annotated[str, typer.Option(help="The address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on")] = 8080,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Worker processes sharing the port (uvicorn workers): each answers reads on its own, and "
            "writes take turns through the data folder's writer lock",
        ),
    ] = 1,
) -> None:
    """Run the REST API (FastAPI on uvicorn). Docs at http://HOST:PORT/docs.

    Every /api/v1 route needs a key: `tool-selector keys create NAME --role ROLE`."""
    import uvicorn

    from routes.api import build_app
    from services.shared.container import Container

    with mapped_errors():
        settings = cli_settings()
        with Container(settings) as container:
            container.store.counts()  # refuse an empty, damaged or foreign catalog here, saying what to do
        shown = f"{workers} worker processes, " if workers > 1 else ""
        typer.echo(f"tool-selector API on http://{host}:{port} ({shown}docs at /docs)", err=True)
        log_level = settings.log_level.lower()
        if workers == 1:
            application = build_app(settings)
            uvicorn.run(application, host=host, port=port, log_level=log_level, access_log=False)
            return
        # Each worker builds its own application from the same environment (routes/api_workers.py).
        # uvicorn restarts a worker that does not answer its supervisor's ping in time; 5 s (its
        # default) is shorter than a worker's start on a busy 2-core machine, which then never ends.
        uvicorn.run(
            "routes.api_workers:worker_app",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            log_level=log_level,
            access_log=False,
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
        )


@app.command("bench-api")
def bench_api_command(
    catalog: Annotated[Path, typer.Option(help="A catalog folder (servers.json, tools.json)")] = Path(
        "eval/datasets/gateway-demo"
    ),
    queries: Annotated[Path | None, typer.Option(help="queries.jsonl (default: the catalog's own)")] = None,
    clients: Annotated[int, typer.Option(min=1, max=256, help="Concurrent closed-loop clients")] = 16,
    seconds: Annotated[float, typer.Option(min=1, help="How long to load the API")] = 30.0,
    workers: Annotated[int, typer.Option(min=1, max=64, help="`tool-selector api --workers N`")] = 1,
) -> None:
    """Start `tool-selector api` on a fresh copy of a catalog and load POST /api/v1/resolve; prints
    requests/s, p50/p95/p99 latency, errors, the server's peak memory (summed over its workers) and
    each worker's CPU seconds under load."""
    from eval.bench.api import bench_api

    with mapped_errors():
        echo_json(
            bench_api(
                cli_settings(),
                catalog=catalog,
                queries_file=queries or catalog / "queries.jsonl",
                clients=clients,
                seconds=seconds,
                workers=workers,
            )
        )
