"""The ``tool-selector`` command line: parse, make one service call, render. Errors via routes/errors.

``base`` holds the typer app, its groups and the helpers every command shares; each command module
imports from ``base`` only and registers its commands on import. ``full_app()`` imports them all, once,
in the order ``tool-selector --help`` lists them (``from routes.cli import app`` gives it). Groups from
outside the product (the lab's ``lab``) join through the entry point group ``tool_selector.cli``: the
product never imports them.

``main()`` (the console script) registers only the module of the command it runs when it knows it
(``COMMANDS``): ``tool-selector serve`` is started by an MCP client for every session, and importing
every command's services first cost a third of its start. Anything else (``--help``, a mistyped
command) gets the whole app, with typer's listing and suggestions.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

# the command modules in the order `tool-selector --help` lists their commands
MODULES = ("resolve", "sync", "gateway", "api", "catalog", "servers", "keys", "quarantine", "memory", "scan")
# a top-level command or group -> the module that registers it ("lab": the plugins' entry points);
# tests/routes/cli/test_cli_lazy.py checks it against the whole app
COMMANDS: dict[str, str] = {
    "resolve": "resolve",
    "sync": "sync",
    "serve": "gateway",
    "stats": "gateway",
    "tokens": "gateway",
    "api": "api",
    "scan": "scan",
    "catalog": "catalog",
    "index": "catalog",
    "servers": "servers",
    "keys": "keys",
    "quarantine": "quarantine",
    "memory": "memory",
    "init": "sync",
    "lab": "",
}

_plugins_added = False


def _register(module: str) -> typer.Typer:
    from routes.cli import base

    global _plugins_added
    if module:
        importlib.import_module(f"routes.cli.{module}")
    elif not _plugins_added:
        base.add_plugins(base.app)
        _plugins_added = True
    return base.app


def full_app() -> typer.Typer:
    """The app with every command and plugin group registered."""
    for module in (*MODULES, ""):
        app = _register(module)
    return app


def __getattr__(name: str) -> Any:  # `from routes.cli import app`: the whole app
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    if sys.argv[1:] == ["--version"]:  # what the root's eager --version prints, without the commands
        from tool_selector import installed_version

        print(f"tool-selector {installed_version()}")
        return
    if command in COMMANDS and "--help" not in sys.argv[1:2]:
        _register(COMMANDS[command])()
    else:
        full_app()()
