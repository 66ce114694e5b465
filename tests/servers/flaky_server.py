"""A stdio MCP server for the gateway's lifecycle tests: ``python flaky_server.py``; ``build_server``
gives the same server to serve another way (the fast gateway tests serve it over streamable HTTP).

Tools: ``echo`` (answers its text), ``whoami`` (answers its pid), ``crash`` (the process exits at
once, mid-call, as a crashing server does) and ``hang`` (never answers). Descriptions are about
weather stations so that resolve_intent can find it in a small catalog.
"""

from __future__ import annotations

import os

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="echo",
        description="Echo a weather station reading back unchanged.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    types.Tool(
        name="whoami", description="The weather station's process id.", input_schema={"type": "object"}
    ),
    types.Tool(
        name="crash", description="Restart the weather station abruptly.", input_schema={"type": "object"}
    ),
    types.Tool(
        name="hang", description="Wait for the weather station forever.", input_schema={"type": "object"}
    ),
]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build_server(*, in_process: bool = False) -> Server:
    """The weather station; ``in_process`` leaves out ``crash``, which would end the process serving
    it (tests serve it over streamable HTTP from a thread of the test run)."""

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t for t in TOOLS if not (in_process and t.name == "crash")])

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "echo":
            return _text(str(args.get("text", "")))
        if params.name == "whoami":
            return _text(str(os.getpid()))
        if params.name == "crash" and not in_process:
            os._exit(3)
        if params.name == "hang":
            await anyio.sleep_forever()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="no such tool")], is_error=True
        )

    return Server("weather-station", on_list_tools=list_tools, on_call_tool=call_tool)


def main() -> None:
    server = build_server()

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
