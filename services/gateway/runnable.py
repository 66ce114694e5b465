"""Which powers this gateway can run: the enabled servers of the operator's configuration.

The catalog may hold more: servers registered over the REST API or imported, never configured here (or
configured but switched off). They are found by resolve_intent like any other, but an agent must not be
told to start them: their entries carry ``"runnable": false``, no activate_power is suggested for them,
and an "activated" decision on one starts nothing and says what the user or operator can do.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def mark_runnable(answer: dict[str, Any], runnable: Collection[str]) -> None:
    """Put ``runnable`` on each power a resolve or catalog answer lists (in place)."""
    for key in ("matches", "available_powers"):
        for summary in answer.get(key) or []:
            summary["runnable"] = summary.get("power") in runnable
    if answer.get("query_type") == "servers":
        for item in answer.get("items") or []:
            item["runnable"] = item.get("name") in runnable
    elif answer.get("query_type") == "profile" and "server" in answer:
        answer["runnable"] = answer["server"] in runnable
