"""Who may run upstream tools through the gateway: a caller whose API key carries the ``call`` scope.

Over streamable HTTP every request carries a key (``routes/gateway_auth.py``), and its scopes reach the
service in ``Caller.scopes``. A key without ``call`` (a viewer's) may resolve and query the catalog, but
not start, stop or call a power: ``activate_power``, ``deactivate_power``, ``call_tool`` and every
``power__tool`` are refused, and ``resolve_intent`` answers without starting anything. Over stdio
``Caller.scopes`` is None: the local operator who started the process may do everything.
"""

from __future__ import annotations

from collections.abc import Collection

from tool_selector.core.errors import ForbiddenError
from tool_selector.route import messages

CALL = "call"


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
        hint=messages.NEEDS_CALL,
        scope=CALL,
    )
