"""TEMPORARY stand-in (not committed): the args engineer's module replaces it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Filled:
    arguments: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)


def fill_arguments(text: str, input_schema: dict[str, Any], *, now: datetime | None = None) -> Filled:
    required = [r for r in input_schema.get("required") or [] if isinstance(r, str)]
    return Filled(missing=required)
