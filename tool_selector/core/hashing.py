"""Content hashes: sha256 over canonical JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no insignificant whitespace and UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_of(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def tool_hash(name: str, description: str, input_schema: dict[str, Any]) -> str:
    """A tool's content hash: name + description + input schema."""
    return sha256_of({"name": name, "description": description, "input_schema": input_schema})


def profile_hash(server_name: str, server_description: str, tool_hashes: Iterable[str]) -> str:
    """What a server profile is made from: the server's name and description and its (cleared) tools'
    sorted content hashes. A stored profile with another hash describes other tools."""
    return sha256_of([server_name, server_description, sorted(tool_hashes)])


def server_hash(tool_hashes: Iterable[str]) -> str:
    """A server's content hash over its sorted tool hashes."""
    return sha256_of(sorted(tool_hashes))
