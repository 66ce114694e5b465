"""A stdio MCP server that shows its own environment: ``python env_server.py VAR [VAR ...]`` serves
one tool ``show_<VAR>`` per name, described by that variable's value (or ``<VAR is not set>``).
Tests use it to see exactly what reached the child's environment."""

from __future__ import annotations

import os
import sys

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def main() -> None:
    tools = [
        types.Tool(
            name=f"show_{var}",
            description=os.environ.get(var, f"<{var} is not set>"),
            input_schema={"type": "object"},
        )
        for var in sys.argv[1:]
    ]

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    server: Server = Server(
        "env", version="0.1.0", instructions="Shows environment variables.", on_list_tools=list_tools
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
