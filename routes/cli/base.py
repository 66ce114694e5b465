"""What every command module of the ``tool-selector`` command line shares: the typer app and its groups,
the settings of a command, JSON output, the error translation (the one table in routes/errors.py),
progress printers, and the choice types that typer checks itself.

Command modules import from here only, never from one another; ``routes/cli/__init__.py`` imports
them once, which registers their commands on these apps.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from routes.errors import mapping_for
from tool_selector.core.choices import Backend, Enricher
from tool_selector.core.errors import ToolSelectorError

if TYPE_CHECKING:
    from tool_selector.config.settings import Settings

PARTIAL_EXIT = 20  # the work was done in part: the JSON printed says what failed

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find the right MCP server and tool.")
catalog_app = typer.Typer(no_args_is_help=True, help="The catalog of servers and tools.")
index_app = typer.Typer(no_args_is_help=True, help="The search index.")
servers_app = typer.Typer(
    no_args_is_help=True, help="The MCP servers tool-selector discovers (mcpServers format)."
)
keys_app = typer.Typer(no_args_is_help=True, help="API keys for the REST API and the HTTP gateway.")
quarantine_app = typer.Typer(
    no_args_is_help=True, help="Tool definitions held until approved: changed, never approved, or poisoned."
)
app.add_typer(catalog_app, name="catalog")
app.add_typer(index_app, name="index")
app.add_typer(servers_app, name="servers")
app.add_typer(keys_app, name="keys")
memory_app = typer.Typer(
    no_args_is_help=True,
    help="Choices agents confirmed, which the gateway remembers (in catalog.db; never sent anywhere).",
)
app.add_typer(quarantine_app, name="quarantine")
app.add_typer(memory_app, name="memory")


def _print_version(value: bool) -> None:
    if value:
        from tool_selector import installed_version

        typer.echo(f"tool-selector {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Find the right MCP server and tool."""


PLUGIN_GROUP = "tool_selector.cli"  # entry points of command groups installed beside the product


def add_plugins(root: typer.Typer) -> None:
    """Add the command groups installed beside the product (entry points of ``PLUGIN_GROUP``: the lab),
    each under its name. A group that cannot be loaded stays listed, and running it says why."""
    from importlib.metadata import entry_points

    for point in entry_points(group=PLUGIN_GROUP):
        try:
            group = point.load()
        except Exception as exc:  # a half-installed plugin must not take the product's commands down
            group = _unavailable(point.name, f"{type(exc).__name__}: {exc}")
        root.add_typer(group, name=point.name)


def _unavailable(name: str, why: str) -> typer.Typer:
    group = typer.Typer(help=f"(not available here: {why})")

    @group.callback(invoke_without_command=True)
    def refuse() -> None:
        typer.echo(
            f"tool-selector {name}: this command group could not be loaded ({why}). Install it with the "
            "project's set-up (bash scripts/setup.sh), or `pip install -e .` in the repository.",
            err=True,
        )
        raise typer.Exit(2)

    return group


# the settings' own choices (tool_selector/core/choices.py), which typer validates and lists on a wrong value
BackendChoice = Backend
EnricherChoice = Enricher


def cli_settings(**overrides: Any) -> Settings:
    """The settings of one command (environment, config file, ``overrides``), with logging set up."""
    from tool_selector.config.settings import load_settings
    from tool_selector.core.logs import configure_logging

    settings = load_settings(**overrides)
    configure_logging(settings.log_level)
    return settings


# the choice every command a person reads offers: JSON for machines, a short summary for people
JsonOrText = Annotated[
    bool | None,
    typer.Option(
        "--json/--text",
        help="JSON (for machines) or a short summary (for people); default: the summary on a terminal, JSON "
        "into a pipe or file",
    ),
]


def wants_json(as_json: bool | None) -> bool:
    """``--json`` / ``--text`` as given, else JSON unless standard output is a terminal."""
    return not sys.stdout.isatty() if as_json is None else as_json


def echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


@contextmanager
def mapped_errors() -> Iterator[None]:
    """Turn a ToolSelectorError into its message on stderr and the exit code of routes/errors.py."""
    try:
        yield
    except ToolSelectorError as exc:
        mapping = mapping_for(exc)
        typer.echo(f"error [{mapping.code}]: {exc}", err=True)
        raise typer.Exit(mapping.exit_code) from exc


def progress(label: str) -> Callable[[int, int], None] | None:
    """A ``label: done/total`` counter on a terminal's stderr; None (no output) elsewhere."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        _redraw(f"{label}: {done}/{total}", finished=done >= total)

    return show


def phase_progress() -> Callable[[str, int, int], None] | None:
    """A bar per phase of a sync (discover, enrich, embed) on a terminal's stderr; None elsewhere."""
    if not sys.stderr.isatty():
        return None

    def show(phase: str, done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        _redraw(f"{phase:>8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", finished=done >= total)

    return show


def _redraw(line: str, *, finished: bool) -> None:
    """Overwrite the progress line on stderr; end it once the work is done."""
    sys.stderr.write(f"\r{line}\n" if finished else f"\r{line}")
    sys.stderr.flush()
