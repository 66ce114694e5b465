"""``memory list | show | forget | clear``: what the gateway remembers of the choices agents confirmed."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli.base import JsonOrText, cli_settings, echo_json, mapped_errors, memory_app, wants_json


@memory_app.command("list")
def memory_list(
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many, latest first")] = None,
    as_json: JsonOrText = None,
) -> None:
    """List the remembered choices, the latest confirmed first: id, whose (local, or key:ID), power, tool,
    times confirmed and refuted, when (and the request's words only when memory.keep_text is on); a
    damaged row is marked with what is wrong and its repair."""
    from services.root.container import Container
    from services.write.memory import list_choices

    with mapped_errors(), Container(cli_settings()) as container:
        found = list_choices(container.store, limit=limit)
    if wants_json(as_json):
        echo_json([c.model_dump() for c in found])
        return
    if not found:
        typer.echo("Nothing remembered yet: the gateway remembers a choice after an agent's call served it.")
        return
    typer.echo(f"{'id':>6}  {'whose':<16} {'power':<24} {'tool':<24} {'conf':>4} {'ref':>3}  confirmed at")
    for c in found:
        typer.echo(
            f"{c.id:>6}  {c.principal[:16]:<16} {c.power[:24]:<24} {c.tool[:24]:<24} {c.confirmed:>4} "
            f"{c.refuted:>3}  {c.confirmed_at[:32]}"
            + (f"  DAMAGED ({c.damaged}; repair: {c.repair})" if c.damaged else "")
        )


@memory_app.command("show")
def memory_show(choice: Annotated[int, typer.Argument(help="The id from `memory list`")]) -> None:
    """Show one remembered choice (JSON); for a damaged one, what is wrong and how to repair it."""
    from services.root.container import Container
    from services.write.memory import show_choice

    with mapped_errors(), Container(cli_settings()) as container:
        shown = show_choice(container.store, choice)
    echo_json(shown.model_dump())
    if shown.damaged:
        typer.echo(
            f"Choice {shown.id} is damaged: {shown.damaged}. The gateway does not use it; remove it with "
            f"`{shown.repair}`.",
            err=True,
        )


@memory_app.command("forget")
def memory_forget(choice: Annotated[int, typer.Argument(help="The id from `memory list`")]) -> None:
    """Forget one remembered choice (audited)."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.memory import forget_choice

    with mapped_errors(), Container(cli_settings()) as container:
        gone = forget_choice(container.store, container.writer, choice, actor=cli_principal().actor)
    echo_json({"forgotten": gone.id, "power": gone.power, "tool": gone.tool})


@memory_app.command("clear")
def memory_clear(
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation")] = False,
) -> None:
    """Forget every remembered choice (audited). A running gateway stops using them at its next request."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.memory import clear_choices

    if not yes and not typer.confirm("Forget every remembered choice?"):
        raise typer.Exit(1)
    with mapped_errors(), Container(cli_settings()) as container:
        gone = clear_choices(container.writer, actor=cli_principal().actor)
    echo_json({"forgotten": gone})
