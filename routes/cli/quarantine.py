"""``quarantine list | show | approve | reject``: tool definitions held until a person approves them."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli.base import cli_settings, echo_json, mapped_errors, quarantine_app


@quarantine_app.command("list")
def quarantine_list(
    everything: Annotated[
        bool, typer.Option("--all", help="Also approved, rejected and settled entries, newest first")
    ] = False,
    server: Annotated[str | None, typer.Option(help="Only this server's tools")] = None,
) -> None:
    """List the held tools (one JSON object each: id, tool, kind, reasons, found by and when)."""
    from services.root.container import Container
    from services.write.quarantine import list_entries

    with mapped_errors(), Container(cli_settings()) as container:
        entries = list_entries(container.store, everything=everything, server=server)
        echo_json([e.model_dump(mode="json", exclude={"old_definition", "new_definition"}) for e in entries])


@quarantine_app.command("show")
def quarantine_show(
    entry: Annotated[str, typer.Argument(help="The entry id (q-...) from `quarantine list`")],
) -> None:
    """Show one held definition: a diff of the approved and the held one, invisible characters escaped."""
    from services.root.container import Container
    from services.write.quarantine import show_entry

    with mapped_errors(), Container(cli_settings()) as container:
        detail = show_entry(container.store, entry)
        typer.echo(detail.diff or "(no approved definition to compare with: the whole definition is new)")
        echo_json(detail.model_dump(mode="json"))


@quarantine_app.command("approve")
def quarantine_approve(
    entry: Annotated[str, typer.Argument(help="The entry id (q-...)")],
    note: Annotated[str, typer.Option(help="Why, for the audit log")] = "",
) -> None:
    """Approve the held definition: it is pinned, indexed and callable again. Audited."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.quarantine import approve_entry

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(
            approve_entry(container, entry, actor=cli_principal().actor, note=note).model_dump(mode="json")
        )


@quarantine_app.command("reject")
def quarantine_reject(
    entry: Annotated[str, typer.Argument(help="The entry id (q-...)")],
    note: Annotated[str, typer.Option(help="Why, for the audit log")] = "",
) -> None:
    """Reject the held definition: the tool stays held while its server serves it. Audited."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.quarantine import reject_entry

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(
            reject_entry(container, entry, actor=cli_principal().actor, note=note).model_dump(mode="json")
        )
