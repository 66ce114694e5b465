"""The gateway's tool list as an MCP client reads it: its own five tools (name, description, schema and
hints), then every active power's tools under ``power__tool`` names (``proxied_listing``).

Kept apart from the MCP server (``routes/gateway.py``) because token accounting counts them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp import types

from services.gateway.hints import GATEWAY_HINTS
from services.gateway.powers import Power
from tool_selector.trust.limits import cut
from tool_selector.trust.text import clean_json

HINTS_META_KEY = "io.github.tool-selector/hints"
INSTRUCTIONS = (
    "tool-selector finds the right tool among every MCP server the operator configured. Call "
    "resolve_intent(query) with what the user wants to do; when it answers 'activated' the power's "
    "tools are ready: call them by their call_as name or through call_tool(power, tool, arguments)."
)

_OBJECT: dict[str, Any] = {"type": "object"}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_TOOL_TEXT: dict[str, tuple[str, dict[str, Any]]] = {
    "resolve_intent": (
        "Find the configured power (MCP server) and tools for what the user wants to do. Answers with "
        "status activated (the power is started and its tools are listed, ready to call), "
        "multiple_matches (pick one, then activate_power), weak_matches (ask the user to clarify) or "
        "not_found (no configured power can do it). Use it first for every new kind of request.",
        _schema({"query": {"type": "string", "description": "the request in plain words"}}, ["query"]),
    ),
    "activate_power": (
        "Start a configured power by its exact name and list its tools (original descriptions and "
        "schemas) with the operator's guidance for it. Its tools are then callable.",
        _schema({"name": {"type": "string", "description": "a power name from resolve_intent"}}, ["name"]),
    ),
    "deactivate_power": (
        "Stop an active power; its tools disappear. Powers also stop by themselves when idle.",
        _schema({"name": {"type": "string"}}, ["name"]),
    ),
    "call_tool": (
        "Call a tool of a power: call_tool(power, tool, arguments). Starts the power if needed. Works "
        "in every client, including ones that do not refresh their tool list.",
        _schema(
            {
                "power": {"type": "string", "description": "the power's name"},
                "tool": {"type": "string", "description": "the tool's name as the power lists it"},
                "arguments": {"type": "object", "description": "the tool's arguments"},
            },
            ["power", "tool"],
        ),
    ),
    "catalog_query": (
        "Ask the catalog before acting. query_type servers (filters domain, keyword), tools (server, "
        "action, entity, name_pattern), check_tool (server, action, entity: does it have such a tool?) "
        "or profile (server).",
        _schema(
            {
                "query_type": {"type": "string", "enum": ["servers", "tools", "check_tool", "profile"]},
                "filters": {"type": "object", "description": 'e.g. {"server": "git", "action": "commit"}'},
            },
            ["query_type"],
        ),
    ),
}


def gateway_tools() -> list[types.Tool]:
    tools = []
    for name, (description, schema) in _TOOL_TEXT.items():
        hints = GATEWAY_HINTS[name]
        before = f" Before: {', '.join(hints.prerequisites)}." if hints.prerequisites else ""
        tools.append(
            types.Tool(
                name=name,
                description=f"{description}{before} Next: {', '.join(hints.next_actions)}.",
                input_schema=schema,
                _meta={HINTS_META_KEY: hints.as_json()},
            )
        )
    return tools


# a proxied tool's fields in tools/list: the pinned ones (trust/definition.py), never title, _meta, icons
SHOWN_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")


def proxied_listing(proxied: Mapping[str, tuple[Power, types.Tool]]) -> list[types.Tool]:
    """The active powers' tools as ``tools/list`` shows them: under their namespaced names, only the
    approved fields (``SHOWN_FIELDS``: a power's tools are built from them, services/write/quarantine.py),
    the description prefixed with the power's name and cut to the cap, and every text stripped of
    invisible characters."""
    listed = []
    for name, (power, tool) in proxied.items():
        dumped = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        data = {k: v for k, v in dumped.items() if k in SHOWN_FIELDS}
        data |= {"name": name, "description": cut(f"[{power.name}] {tool.description or ''}")}
        listed.append(types.Tool.model_validate(clean_json(data)))
    return listed
