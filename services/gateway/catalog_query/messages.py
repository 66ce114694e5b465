"""What each ``catalog_query`` answer tells the agent to do next (a model reads these texts)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from services.gateway.catalog_query.filters import MAX_LIMIT
from tool_selector.core.errors import NotFoundError


def q(value: str) -> str:
    """A value quoted as JSON, for the call examples in messages."""
    return json.dumps(value, ensure_ascii=False)


def _more(total: int, returned: int, narrow: str) -> str:
    if total <= returned:
        return ""
    return f"Showing {returned} of {total}; narrow with {narrow} or raise limit (at most {MAX_LIMIT}). "


def servers_message(total: int, returned: int, known: int) -> str:
    if total == 0:
        return (
            "No server matches these filters. Try one word of the keyword or domain, or a synonym; "
            f'catalog_query("servers", {{}}) lists all {known} servers.'
        )
    return _more(total, returned, "keyword or domain") + (
        'Call catalog_query("tools", {"server": NAME}) to see a server\'s tools, '
        "or activate_power(NAME) to use it."
    )


def tools_message(total: int, returned: int, server: str | None) -> str:
    if total == 0 and server is not None:
        return (
            f"{server} has no tool matching these filters. Try a synonym or drop a filter; "
            f'catalog_query("tools", {{"server": {q(server)}}}) lists all its tools.'
        )
    if total == 0:
        return (
            "No tool in the catalog matches these filters. Try a synonym or drop a filter, "
            'or search servers with catalog_query("servers", {"keyword": ...}).'
        )
    return _more(total, returned, "server, action, entity or name_pattern") + (
        "To use a tool, call activate_power(SERVER) and then the tool by name; input_properties are "
        "its arguments."
    )


def has_tool_message(server: str, tools: list[str]) -> str:
    named = " or ".join(map(repr, tools[:3]))
    return f"Call activate_power({q(server)}) and then {server}'s tool {named}."


def no_tool_message(
    server: str, what: str, f: Mapping[str, Any], elsewhere: list[dict[str, Any]], maybe: str | None
) -> str:
    text = f"{server} has no tool to {what}."
    if maybe is not None:
        text = (
            f"{server} has no tool named for '{what}', but its tool {maybe!r} may do it (its description "
            f"mentions it): read that description, then call activate_power({q(server)}) and the tool."
        )
    if elsewhere:
        others = ", ".join(f"{o['server']!r} (tool {o['tool']!r})" for o in elsewhere)
        return (
            f"{text} These servers have one: {others}. Call activate_power with one of them and then "
            "its tool, or ask the user which to use."
        )
    if maybe is not None:
        return text
    keyword = (f.get("entity") or f["action"]).strip()
    return (
        f'{text} No other server in the catalog has one either; try catalog_query("servers", '
        f'{{"keyword": {q(keyword)}}}), or tell the user it cannot be done with the configured tools.'
    )


def profile_message(server: str, has_profile: bool, profile_current: bool) -> str:
    if not has_profile:
        return (
            f"{server} has no profile yet; what is known is its description and tools. "
            "Ask the operator to run `tool-selector sync` to profile it, or call "
            f'catalog_query("tools", {{"server": {q(server)}}}) to read its tools.'
        )
    message = (
        f'Call activate_power({q(server)}) to use it, or catalog_query("tools", '
        f'{{"server": {q(server)}}}) for its tools\' descriptions and arguments.'
    )
    if not profile_current:
        message = f"{server}'s profile is older than its tools (run `tool-selector sync`). " + message
    return message


def unknown_server(name: str, closest: list[str]) -> NotFoundError:
    """The error for a server name not in the catalog, with the closest names and how to search."""
    listed = f" Closest names: {', '.join(map(repr, closest))}." if closest else ""
    return NotFoundError(
        f"No server named {name!r} in the catalog.{listed}",
        hint=(
            "Use one of these exact names, or search with "
            f'catalog_query("servers", {{"keyword": {q(name.split(maxsplit=1)[0])}}}).'
        ),
        server=name,
        closest=closest,
    )
