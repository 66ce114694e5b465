"""The REST API application of one worker process of ``tool-selector api --workers N``.

uvicorn starts each worker as a fresh process and builds its application from an import string, so
the settings are read again here, from the same environment and TOML file the command was started
with (the command takes no setting on its command line). Each worker is a reader of the data folder
with its own embedder, index snapshot and answer cache, and a writer only while it holds the writer lock.
"""

from __future__ import annotations

from fastapi import FastAPI

from routes.api import build_app
from tool_selector.config.settings import load_settings
from tool_selector.core.logs import configure_logging


def worker_app() -> FastAPI:
    """uvicorn's application factory (``routes.api_workers:worker_app``)."""
    settings = load_settings()
    configure_logging(settings.log_level)
    return build_app(settings)
