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
    # some libraries set their own loggers to DEBUG on import; keep them at the configured level
    for name in ("bm25s",):
        logging.getLogger(name).setLevel(level.upper())
    # The MCP client logs an upstream server's bad output or crash as an ERROR with a traceback;
    # discovery and the gateway already report those failures in their own words.
    if logging.getLogger().level > logging.DEBUG:
        logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)
