"""``catalog import | list | register | backup`` and ``index build | rebuild``: the catalog database and
the search index made from it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from routes.cli.base import (
    PARTIAL_EXIT,
    BackendChoice,
    catalog_app,
    cli_settings,
    echo_json,
    index_app,
    mapped_errors,
    progress,
)
from tool_selector.core.choices import BatchFormat, MatchingMode, MatchScope

if TYPE_CHECKING:
    from tool_selector.config.settings import Settings


@catalog_app.command("import")
def catalog_import(
    folder: Annotated[Path, typer.Argument(help="A folder with servers.json and tools.json")],
    prune: Annotated[bool, typer.Option(help="Also remove servers that are not in this catalog")] = False,
    approve: Annotated[
        bool,
        typer.Option(
            help="Approve these definitions now (else trust.imported decides; by default they wait for "
            "`quarantine approve`). What the scanner quarantines is held either way."
        ),
    ] = False,
) -> None:
    """Import a catalog folder (benchmark format) into the catalog database, all or nothing.

    Names keep the naming rule (docs/operator-guide.md): no '::', control or invisible characters, no
    tool name starting with ':', no server or tool looking like one in use (in case, fullwidth forms or
    Cyrillic and Greek look-alikes); a name breaking it refuses the whole folder, naming each item."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.catalog import import_catalog_dir

    with mapped_errors(), Container(cli_settings()) as container:
        summary = import_catalog_dir(
            container, folder, prune=prune, approve=approve, actor=cli_principal().actor
        )
        echo_json(summary.model_dump())
        if summary.held:
            typer.echo(
                f"{len(summary.held)} tool definition(s) wait for approval and stay out of the index: "
                "`tool-selector quarantine list`, then `quarantine approve ID` "
                "(or re-import with --approve).",
                err=True,
            )


@catalog_app.command("list")
def catalog_list() -> None:
    """List the servers in the catalog with their tool counts."""
    from services.root.container import Container
    from services.write.catalog import list_servers

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(
            [
                {"name": s.name, "tools": s.tool_count, "creation_method": s.creation_method}
                for s in list_servers(container.store)
            ]
        )


@catalog_app.command("register")
def catalog_register(
    path: Annotated[Path, typer.Argument(help="A catalog folder or .json, a .csv, or an mcpServers .json")],
    fmt: Annotated[
        Literal["auto", BatchFormat], typer.Option("--format", help="auto, catalog, csv or mcpservers")
    ] = "auto",
    matching_mode: Annotated[MatchingMode, typer.Option(help="auto, force_create or match_only")] = "auto",
    match_scope: Annotated[
        MatchScope, typer.Option(help="server or catalog: where near-duplicates are looked for")
    ] = "server",
) -> None:
    """Add servers and tools from a file, all or nothing, matching near-duplicates like the REST API.

    Unlike `catalog import` (which mirrors a folder: tools not listed are removed), this only adds,
    updates and matches. Names keep the naming rule, as for `catalog import`. Prints the counts and one
    line per item."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.catalog import read_batch
    from services.write.importing import import_batch

    with mapped_errors(), Container(cli_settings()) as container:
        batch = read_batch(container.settings, container.store, path=path, fmt=fmt)
        result = import_batch(
            container, batch, mode=matching_mode, scope=match_scope, actor=cli_principal().actor
        )
        echo_json(result.model_dump(mode="json"))


@catalog_app.command("backup")
def catalog_backup(
    out: Annotated[Path, typer.Argument(help="The file to write (it must not exist yet)")],
) -> None:
    """Copy the catalog database, consistently, while it is in use: servers, tools, keys, pins,
    approvals and audit. Restore by putting the copy in place as catalog.db (see the operator guide)."""
    from services.root.container import Container
    from services.write.catalog import backup_catalog

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(backup_catalog(container.store, out))


@index_app.command("build")
def index_build(
    rebuild: Annotated[bool, typer.Option(help="Rewrite every document, not only changed ones")] = False,
) -> None:
    """Bring the search index in line with the catalog (only changed tools are embedded).

    Exit 20 when some documents could not be written (see "errors"): the index then stays marked
    stale, and the next build writes them. A damaged index is made anew from the catalog, with a warning."""
    from services.root.container import Container
    from services.write.indexing import build_index

    with mapped_errors(), Container(cli_settings()) as container:
        summary = build_index(container, rebuild=rebuild, progress=progress("embedding"))
        echo_json(summary.model_dump())
        if summary.errors:
            raise typer.Exit(PARTIAL_EXIT)


@index_app.command("rebuild")
def index_rebuild(
    backend: Annotated[
        BackendChoice | None, typer.Option(help="embedded or weaviate; default: the configured backend")
    ] = None,
) -> None:
    """Empty a backend and fill it again from the catalog store (e.g. `--backend weaviate`, and back).

    The old index is never read, so this is also the repair of a damaged one (exit 19, `index_damaged`)."""
    from services.root.container import Container
    from services.write.indexing import rebuild_index

    with mapped_errors():
        settings = cli_settings(backend=backend) if backend else cli_settings()
        with Container(settings) as container:
            summary = rebuild_index(container, progress=progress("embedding"))
            echo_json({"backend": settings.backend, "target": _target(settings), **summary.model_dump()})
            if summary.errors:
                raise typer.Exit(PARTIAL_EXIT)


def _target(settings: Settings) -> str:
    if settings.backend == "embedded":
        return str(settings.index_dir)
    return f"{settings.weaviate.url} collection {settings.weaviate.collection}"
