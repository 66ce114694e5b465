"""``resolve``: one query's decision, as a summary or JSON (``--explain`` adds the ranked candidates and the
evidence). The commands that measure or fit it (``eval``, ``calibrate``, ``train-ranker``, ``bench``,
``bench-sync``) are the lab's, under ``tool-selector lab`` (eval/cli)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from routes.cli.base import JsonOrText, app, cli_settings, echo_json, mapped_errors, wants_json
from tool_selector.core.choices import SearchMode

if TYPE_CHECKING:
    from tool_selector.core.models import Decision

SHOWN = 5  # tools or powers a summary lists


@app.command()
def resolve(
    query: Annotated[str, typer.Argument(help="What the agent wants to do")],
    mode: Annotated[SearchMode, typer.Option(help="hybrid, keyword or semantic")] = "hybrid",
    explain: Annotated[bool, typer.Option(help="Also print the ranked candidates and the evidence")] = False,
    as_json: JsonOrText = None,
) -> None:
    """Resolve a query and print the tiered decision: a short summary on a terminal, JSON otherwise."""
    from services.resolve.read_path import ReadPath
    from services.root.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        resolution, decision = ReadPath.fixed(container).decide(query, mode=mode)
        if wants_json(as_json) or explain:
            out = decision.model_dump(mode="json", exclude_none=True)
            if explain:
                out["resolution"] = resolution.model_dump(mode="json")
            echo_json(out)
        else:
            from tool_selector.core.names import tool_of

            best = [tool_of(t) for t in resolution.powers[0].tools] if resolution.powers else []
            typer.echo(summary(decision, best))


def _line(text: str, width: int = 70) -> str:
    first = " ".join(text.split())
    return first if len(first) <= width else first[: width - 3].rstrip() + "..."


def summary(decision: Decision, best: Sequence[str] = ()) -> str:
    """The decision for a person: the tier, the power and how sure, a line per tool (those that match the
    request best first: ``best``, by name) or candidate, and the message (what to do next). ``--json``
    gives everything."""
    head = f"{decision.status} ({decision.confidence:.0%} sure)"
    lines = [f"{head}: {decision.power}" if decision.power else head]
    if decision.tools:
        order = {name: n for n, name in enumerate(best)}
        shown = sorted(decision.tools, key=lambda t: order.get(t.name, len(order)))[:SHOWN]
        width = max(len(t.name) for t in shown)
        lines += [f"  {t.name:{width}}  {_line(t.description)}" for t in shown]
        if len(decision.tools) > SHOWN:
            lines.append(f"  ... {len(decision.tools) - SHOWN} more tools (--json lists them)")
    for rank, match in enumerate((decision.matches or [])[:SHOWN], start=1):
        tools = f" [{', '.join(match.tools[:3])}]" if match.tools else ""
        described = f": {_line(match.description, 50)}" if match.description.strip() else ""
        lines.append(f"  {rank}. {match.power}{described}{tools}")
    if decision.available_powers:
        names = ", ".join(p.power for p in decision.available_powers[:8])
        more = len(decision.available_powers) - 8
        lines.append(f"  configured: {names}" + (f" and {more} more" if more > 0 else ""))
    for step in decision.parts or []:
        lines.append(f"  step: {_line(step.step, 40)} -> {', '.join(step.powers[:2]) or 'nothing fits'}")
    return "\n".join([*lines, decision.message])
