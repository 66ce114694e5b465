"""A stdio MCP server whose one tool, ``show_env``, is described by the value of an environment
variable: ``python env_server.py VAR``. Tests use it to see what reached the child's environment."""

from __future__ import annotations

import os
import sys

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def main() -> None:
    var = sys.argv[1]
    tool = types.Tool(
        name="show_env",
        description=os.environ.get(var, f"<{var} is not set>"),
        input_schema={"type": "object"},
    )

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    server: Server = Server(
        "env", version="0.1.0", instructions="Shows one environment variable.", on_list_tools=list_tools
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
