"""The REST API's commands: ``api`` (serve it) and ``bench-api`` (load it)."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli.base import app, cli_settings, mapped_errors

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
    from services.root.container import Container
    from services.write.catalog import catalog_counts

    with mapped_errors():
        settings = cli_settings()
        with Container(settings) as container:
            # refuse an empty, damaged or foreign catalog here, saying what to do
            catalog_counts(container.store)
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
