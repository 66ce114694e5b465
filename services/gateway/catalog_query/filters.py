"""The filters of each ``catalog_query`` type, checked; an error says what to send instead."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tool_selector.core.errors import InvalidInputError
from tool_selector.core.names import MAX_NAME_CHARS, shown_name

QUERY_TYPES = ("servers", "tools", "check_tool", "profile")
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_FILTER_CHARS = 300

_FILTERS: dict[str, dict[str, type]] = {
    "servers": {"domain": str, "keyword": str, "limit": int},
    "tools": {"server": str, "action": str, "entity": str, "name_pattern": str, "limit": int},
    "check_tool": {"server": str, "action": str, "entity": str},
    "profile": {"server": str},
}
_REQUIRED: dict[str, tuple[str, ...]] = {"check_tool": ("server", "action"), "profile": ("server",)}
EXAMPLES: dict[str, str] = {
    "servers": 'catalog_query("servers", {"keyword": "github", "limit": 5})',
    "tools": 'catalog_query("tools", {"server": "<server name>", "action": "create", "entity": "issue"})',
    "check_tool": 'catalog_query("check_tool", {"server": "<server name>", "action": "delete", '
    '"entity": "branch"})',
    "profile": 'catalog_query("profile", {"server": "<server name>"})',
}


def parse_filters(query_type: str, filters: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The query type and its filters, checked; InvalidInputError says what to send instead."""
    kind = query_type.strip().lower().replace("-", "_") if isinstance(query_type, str) else ""
    if kind not in _FILTERS:
        raise InvalidInputError(
            f"Unknown query_type {shown_name(str(query_type))}. Use one of: {', '.join(QUERY_TYPES)}.",
            hint=f"For example {EXAMPLES['tools']}; {EXAMPLES['servers']}.",
            query_type=str(query_type)[:MAX_NAME_CHARS],
        )
    if filters is None:
        filters = {}
    if not isinstance(filters, Mapping):
        raise InvalidInputError(
            f"filters must be a JSON object, not {type(filters).__name__}.",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    allowed = _FILTERS[kind]
    unknown = sorted(str(k) for k in filters if k not in allowed)
    if unknown:  # echoed cut short: a key may be any length
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise InvalidInputError(
            f"Unknown filter {', '.join(map(shown_name, unknown[:5]))}{more} for query_type {kind!r}. "
            f"Allowed filters: {', '.join(allowed)}.",
            hint=f"Send only those, for example {EXAMPLES[kind]}.",
        )
    parsed = {str(k): _checked(kind, str(k), v, allowed[str(k)]) for k, v in filters.items() if v is not None}
    missing = [k for k in _REQUIRED.get(kind, ()) if k not in parsed]
    if missing:
        raise InvalidInputError(
            f"query_type {kind!r} needs the filter {', '.join(map(repr, missing))}.",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    return kind, parsed


def _checked(kind: str, key: str, value: object, expected: type) -> object:
    if expected is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidInputError(
                f"Filter {key!r} must be a whole number, not {value!r}.",
                hint=f"Send for example {{{json.dumps(key)}: 10}} (at most {MAX_LIMIT}).",
            )
        if value < 1:
            raise InvalidInputError(
                f"Filter {key!r} must be at least 1, not {value}.", hint="Send a number from 1 to 100."
            )
        return min(value, MAX_LIMIT)
    if not isinstance(value, str):
        raise InvalidInputError(
            f"Filter {key!r} must be a string, not {type(value).__name__} ({value!r}).",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    if not value.strip() or len(value) > MAX_FILTER_CHARS:
        raise InvalidInputError(
            f"Filter {key!r} must be a non-empty string of at most {MAX_FILTER_CHARS} characters.",
            hint=f"Leave it out or send a short value, for example {EXAMPLES[kind]}.",
        )
    return value  # kept as sent: a few server names end in a space
