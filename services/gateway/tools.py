"""The gateway's tool list as an MCP client reads it: its own five tools (name, description, schema and
hints), then every active power's tools under ``power__tool`` names (``proxied_listing``).

Kept apart from the MCP server (``routes/gateway.py``) because token accounting counts them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp import types

from services.gateway.hints import GATEWAY_HINTS
from tool_selector.trust.limits import cut
from tool_selector.trust.text import clean_json

if TYPE_CHECKING:
    from services.gateway.powers import Power

HINTS_META_KEY = "io.github.tool-selector/hints"
INSTRUCTIONS = (
    "tool-selector finds the right tool among every MCP server the operator configured. Call "
    "resolve_intent(query, request) with the capability needed and the user's words; when it answers "
    "'activated', make the call its `next` names (call_tool, or the tool's listed power__tool name)."
)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_TOOL_TEXT: dict[str, tuple[str, dict[str, Any]]] = {
    "resolve_intent": (
        "Find the power (MCP server) and tool for a task, and start it. Answers activated (call the tool in "
        "next), multiple_matches (pick one with activate_power), weak_matches (ask the user) or not_found "
        "(nothing configured does it). Call it for each new kind of task.",
        _schema(
            {
                "query": {
                    "type": "string",
                    "description": (
                        "the capability needed, action and object, in your words: e.g. 'convert a time "
                        "between time zones', 'list open pull requests in a GitHub repo'"
                    ),
                },
                "request": {
                    "type": "string",
                    "description": "the user's own words, from which the call's arguments are taken",
                },
            },
            ["query"],
        ),
    ),
    "activate_power": (
        "Start a configured power by its exact name; its tools become callable (listed, or through "
        "call_tool).",
        _schema({"name": {"type": "string", "description": "a power name from resolve_intent"}}, ["name"]),
    ),
    "deactivate_power": (
        "Stop an active power. Powers also stop by themselves when idle.",
        _schema({"name": {"type": "string"}}, ["name"]),
    ),
    "call_tool": (
        "Call any tool of a power (started if needed); works in every client.",
        _schema(
            {
                "power": {"type": "string"},
                "tool": {"type": "string", "description": "the tool's name as the power lists it"},
                "arguments": {"type": "object"},
            },
            ["power", "tool"],
        ),
    ),
    "catalog_query": (
        "Ask the catalog: query_type servers (filters domain, keyword), tools (server, action, entity, "
        "name_pattern), check_tool (server, action, entity) or profile (server).",
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
    """The five tools; their hints (what comes before, what usually comes next, what to do on each error)
    ride in ``_meta``, which clients keep to themselves: the model reads the next calls in each answer's
    ``next`` instead of in every tool description of every request."""
    return [
        types.Tool(
            name=name,
            description=description,
            input_schema=schema,
            _meta={HINTS_META_KEY: GATEWAY_HINTS[name].as_json()},
        )
        for name, (description, schema) in _TOOL_TEXT.items()
    ]


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
