"""Logging configuration for entry points only: always to stderr (stdout carries MCP stdio)."""

from __future__ import annotations

import logging
import sys


def configure_logging(level: str = "WARNING") -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
