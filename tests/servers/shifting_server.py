"""A stdio MCP server whose tools are read from a JSON file at every ``tools/list``, so a test can change
what it serves between a sync and an activation (a "rug pull").

``python shifting_server.py TOOLS.json``: the file holds ``{"instructions": str, "tools": [{"name",
"description", "input_schema", "annotations"?, "output_schema"?}]}``. Every tool answers a call with
the text ``called <name>``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server


def _spec() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    return data


def _tool(item: dict[str, Any]) -> types.Tool:
    return types.Tool(
        name=item["name"],
        description=item.get("description", ""),
        input_schema=item.get("input_schema") or {"type": "object"},
        output_schema=item.get("output_schema"),
        annotations=types.ToolAnnotations(**item["annotations"]) if item.get("annotations") else None,
    )


def main() -> None:
    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(t) for t in _spec()["tools"]])

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])

    server: Server = Server(
        "shifting",
        version="1.0.0",
        instructions=_spec().get("instructions") or None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
