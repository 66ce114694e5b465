"""The gateway as an agent's MCP client sees it: start ``tool-selector serve`` over stdio, resolve,
activate the time server, call its get_current_time and print each answer, its tools by name only
(used by demo.sh)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import anyio
from mcp import StdioServerParameters, types
from mcp.client.client import Client

CLI = Path(sys.executable).parent / "tool-selector"


def _brief(value: object) -> object:
    """An answer without its tools' schemas: a tool is shown by its name (the agent gets it all)."""
    if isinstance(value, dict):
        return {k: _brief(v) for k, v in value.items() if k not in ("input_schema", "output_schema")}
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "name" in v for v in value):
            return [v["name"] for v in value]
        return [_brief(v) for v in value]
    return value


def _show(label: str, result: types.CallToolResult) -> None:
    body = " ".join(c.text for c in result.content if isinstance(c, types.TextContent))
    with contextlib.suppress(json.JSONDecodeError):  # errors are plain text
        body = json.dumps(_brief(json.loads(body)), indent=1, ensure_ascii=False)[:1200]
    print(f"== {label}{' (error)' if result.is_error else ''}\n{body}", file=sys.stderr)


async def main() -> None:
    params = StdioServerParameters(command=str(CLI), args=["serve"], env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        print(f"== gateway tools: {', '.join(names)}", file=sys.stderr)
        _show(
            "resolve_intent: convert 9am New York time to Tokyo time",
            await client.call_tool("resolve_intent", {"query": "convert 9am New York time to Tokyo time"}),
        )
        _show("activate_power: time", await client.call_tool("activate_power", {"name": "time"}))
        _show(
            "time__get_current_time(Asia/Tokyo)",
            await client.call_tool("time__get_current_time", {"timezone": "Asia/Tokyo"}),
        )
        _show(
            "call_tool(git, git_status)",
            await client.call_tool(
                "call_tool", {"power": "git", "tool": "git_status", "arguments": {"repo_path": os.getcwd()}}
            ),
        )


if __name__ == "__main__":
    anyio.run(main)
