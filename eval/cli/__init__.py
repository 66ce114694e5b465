"""The lab's command line, ``tool-selector lab …`` (an entry point of group ``tool_selector.cli``)."""

from __future__ import annotations

# isort: off
from eval.cli import quality, relevance, bench, scale, console  # noqa: F401  (registration, in --help order)

# isort: on
from eval.cli.app import lab

__all__ = ["lab"]
