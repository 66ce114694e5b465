"""Which powers this gateway can run: the enabled servers of the operator's configuration.

The catalog may hold more: servers registered over the REST API or imported, never configured here (or
configured but switched off). They are found by resolve_intent like any other, but an agent must not be
told to start them: their entries carry ``"runnable": false``, no activate_power is suggested for them,
and an "activated" decision on one starts nothing and says what the user or operator can do.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

ADD_IT = (
    "Tell the user; the operator can add it to this gateway's servers configuration "
    "(`tool-selector servers add NAME ...`, or `servers enable NAME` if it is there but switched off)."
)


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


def catalog_only(answer: dict[str, Any], power: str, confidence: float) -> None:
    """Turn an "activated" answer on a power this gateway cannot run into what is true (in place):
    the match stands, nothing was started, and its tools are not callable here."""
    answer.pop("tools", None)
    answer.update(
        ready=False,
        runnable=False,
        message=(
            f"'{power}' fits this request ({confidence:.0%} sure), but it is only in the catalog: it is not "
            f"configured on this gateway, so it cannot be started or called here. {ADD_IT}"
        ),
    )


def not_runnable_note(names: list[str]) -> str:
    """A sentence for a list of matches some of which cannot run here."""
    listed = ", ".join(f"'{n}'" for n in names)
    return (
        f" {listed} {'is' if len(names) == 1 else 'are'} only in the catalog (runnable: false), not "
        "configured on this gateway: do not activate them; if one of them is what the user needs, say so."
    )
