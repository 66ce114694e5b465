"""The ``tool-selector lab`` group: the lab's commands, apart from the product's.

It reaches the product's command line through the entry point ``tool_selector.cli`` (pyproject.toml):
``routes/cli`` never imports the lab. Each command imports what it needs when it runs.
"""

from __future__ import annotations

import typer

lab = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="The lab, beside the product: evaluate, fit the learned parts, benchmark, photograph the console.",
)
