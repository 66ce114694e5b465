"""Fixtures of the gateway tests, in-process and in a process alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gateway_helpers import GatewaySetup, make_setup
from tool_selector.embedding.embedders import MiniLMEmbedder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def gateway_setup(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> GatewaySetup:
    """mcp-server-time and the weather station (tests/servers/flaky_server.py) synced and indexed with
    the real model, then a server that never answers configured: real processes for every power."""
    return make_setup(tmp_path_factory.mktemp("gateway"), session_cache_dir, embedder)
