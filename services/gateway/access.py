"""Who may run upstream tools through the gateway: a caller whose API key carries the ``call`` scope.

Over streamable HTTP every request carries a key (``routes/gateway_auth.py``), and its scopes reach the
service in ``Caller.scopes``. A key without ``call`` (a viewer's) may resolve and query the catalog, but
not start, stop or call a power: ``activate_power``, ``deactivate_power``, ``call_tool`` and every
``power__tool`` are refused, and ``resolve_intent`` answers without starting anything. Over stdio
``Caller.scopes`` is None: the local operator who started the process may do everything.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tool_selector.core.errors import ForbiddenError

CALL = "call"
_WHO = (
    "Tell the user that running tools needs an API key with the 'call' scope (role editor or admin: "
    "`tool-selector keys create NAME --role editor`), made by the gateway's operator; until then, "
    "resolve_intent and catalog_query still answer."
)


def may_call(scopes: Collection[str] | None) -> bool:
    """Whether a caller with these scopes (None: the local operator over stdio) may run upstream tools."""
    return scopes is None or CALL in scopes


def require_call(scopes: Collection[str] | None, action: str) -> None:
    """A ForbiddenError, worded for a model, unless the caller may run upstream tools."""
    if may_call(scopes):
        return
    held = ", ".join(sorted(scopes or ())) or "none"
    raise ForbiddenError(
        f"This API key lacks the 'call' scope (it has: {held}), so it cannot {action}.",
        hint=_WHO,
        scope=CALL,
    )


def lacks_call(answer: dict[str, Any], power: str, confidence: float) -> None:
    """``resolve_intent``'s answer when the match is sure but the key may not start the power."""
    answer["ready"] = False
    answer["message"] = (
        f"'{power}' is the right power ({confidence:.0%} sure), but it was not started: this API key "
        f"lacks the 'call' scope, which starting a power and calling its tools need. {_WHO}"
    )
