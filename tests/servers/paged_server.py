"""A stdio MCP server (low-level ``mcp.server`` API) that lists its tools two per page.

``python paged_server.py N`` serves the tools ``tool_0`` .. ``tool_{N-1}``; each page but the last
carries a ``nextCursor``. ``--repeat-cursor`` makes every page return the same cursor, like a buggy
server that would loop a naive client forever. ``--long-name`` adds, first, a tool whose name is
longer than the catalog accepts; ``--duplicate`` adds, last, a second ``tool_0``. ``build_server(argv)``
gives the same server to serve another way (tests/support/memory_connector.py: in memory).
"""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

PAGE = 2


def build_server(argv: list[str]) -> Server:
    """The server that ``python paged_server.py *argv`` runs."""
    count = int(argv[0])
    repeat = "--repeat-cursor" in argv
    tools = [
        types.Tool(
            name=f"tool_{i}",
            description=f"Tool number {i}.",
            input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        )
        for i in range(count)
    ]
    if "--long-name" in argv:
        tools.insert(
            0, types.Tool(name="x" * 301, description="Too long a name.", input_schema={"type": "object"})
        )
        count += 1
    if "--duplicate" in argv:
        tools.append(types.Tool(name="tool_0", description="The impostor.", input_schema={"type": "object"}))
        count += 1

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        next_cursor = None if end >= count else ("2" if repeat else str(end))
        return types.ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)

    return Server("paged", version="1.0.0", on_list_tools=list_tools)


def main() -> None:
    server = build_server(sys.argv[1:])

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
