"""Configs of real MCP servers for the tests: the scripts of tests/servers run with this interpreter.
Tests get them through the ``server_script`` fixture, which marks them slow (each start is a process
that imports the mcp SDK, about a second)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tests.support.paths import SERVERS
from tool_selector.config.servers import ServerConfig

ServerScript = Callable[..., ServerConfig]


def script_config(name: str, *args: str, **options: object) -> ServerConfig:
    """A config that runs tests/servers/<name> with ``args``; ``options`` are further config fields."""
    return ServerConfig.model_validate(
        {"command": sys.executable, "args": [str(SERVERS / name), *args], **options}
    )
