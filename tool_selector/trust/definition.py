"""A tool definition's parts, what changed between two of them, and a readable diff."""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

FIELDS = ("name", "description", "input_schema", "output_schema", "annotations")


def entry_id(tool_id: str, definition_hash: str) -> str:
    """The quarantine id of one definition of one tool (the same change is never held twice)."""
    return "q-" + hashlib.sha256(f"{tool_id}\0{definition_hash}".encode()).hexdigest()[:10]


def changed_fields(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    if old is None:
        return list(FIELDS)
    return [f for f in FIELDS if old.get(f) != new.get(f)]


def same_but_name(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return all(old.get(f) == new.get(f) for f in FIELDS if f != "name")


def _lines(definition: dict[str, Any] | None) -> list[str]:
    if definition is None:
        return []
    return json.dumps(definition, indent=2, sort_keys=True, ensure_ascii=False).splitlines(keepends=True)


def definition_diff(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    """A unified diff of the two definitions as indented JSON; invisible characters are shown escaped by
    the JSON (``ensure_ascii`` is off, so callers that print it should escape them: see ``escaped``)."""
    diff = difflib.unified_diff(_lines(old), _lines(new), fromfile="approved", tofile="held", n=3)
    return "".join(diff)


def escaped(text: str) -> str:
    """``text`` with every character a person cannot see written as ``\\u....``."""
    from tool_selector.trust.text import invisible_chars

    for char in invisible_chars(text):
        if char not in "\n\t":
            text = text.replace(char, f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return text
