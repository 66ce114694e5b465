"""The ``tool-selector`` command line: parse, make one service call, render. Errors via routes/errors.

``base`` holds the typer app, its groups and the helpers every command shares; each command module
imports from ``base`` only and registers its commands on import. They are imported here, once, in the
order ``tool-selector --help`` lists them. Groups from outside the product (the lab's ``lab``) join
through the entry point group ``tool_selector.cli``: the product never imports them.
"""

from __future__ import annotations

# isort: off
from routes.cli import resolve, sync, gateway, api, catalog, servers, keys, quarantine, scan  # noqa: F401  (registration)

# isort: on
from routes.cli.base import add_plugins, app

add_plugins(app)

__all__ = ["app", "main"]


def main() -> None:
    app()
