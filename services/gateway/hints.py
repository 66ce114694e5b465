"""Tool hints, the "text adventure" pattern: each gateway tool says what should come before it, what
usually comes next, and what to do on each error; answers suggest the next moves.

Hints never block. ``activate_power`` before any ``resolve_intent`` in a session still activates,
and its answer carries ``PREREQUISITE_SUGGESTED`` with ``can_proceed: true`` (once per session).
Whether the agent follows a hint is judged by its next call: a call the hint suggested counts as
followed, any other call as ignored. ``HintTracker`` keeps these counts per session and hands them
to a sink (the catalog store) so that ``tool-selector stats`` can show them, with the session's errors
(each failed proxied call also counted for its power).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tool_selector.core.models import GatewaySessionStats, HintCounts

logger = logging.getLogger(__name__)

PREREQUISITE_SUGGESTED = "PREREQUISITE_SUGGESTED"
SUGGESTED_NEXT_ACTIONS = "suggested_next_actions"


@dataclass(frozen=True)
class ToolHints:
    prerequisites: tuple[str, ...]
    next_actions: tuple[str, ...]
    error_hints: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        return {
            "prerequisites": list(self.prerequisites),
            "next_actions": list(self.next_actions),
            "error_hints": dict(self.error_hints),
        }


_COMMON_ERRORS = {
    "invalid_input": "Fix the argument the error names and call again.",
    "index_missing": "The catalog is not indexed yet; tell the user to run `tool-selector sync`.",
}

GATEWAY_HINTS: dict[str, ToolHints] = {
    "resolve_intent": ToolHints(
        prerequisites=(),
        next_actions=("activate_power", "call_tool", "catalog_query"),
        error_hints=_COMMON_ERRORS,
    ),
    "activate_power": ToolHints(
        prerequisites=("resolve_intent",),
        next_actions=("call_tool", "deactivate_power"),
        error_hints={
            "not_found": "Use one of the closest names the error lists, or call resolve_intent.",
            "upstream": "The server failed to start; retry once, then pick another power or tell the user.",
        },
    ),
    "deactivate_power": ToolHints(
        prerequisites=("activate_power",),
        next_actions=("resolve_intent",),
        error_hints={"not_found": "Use a configured power name; list them with catalog_query servers."},
    ),
    "call_tool": ToolHints(
        prerequisites=("resolve_intent",),
        next_actions=("call_tool", "resolve_intent"),
        error_hints={
            "not_found": "Use a tool name from the power's tool list (activate_power shows it).",
            "upstream": "The power failed; retry once, call activate_power again if it crashed.",
            "tool_error": "The tool itself refused: fix the arguments as its message says and retry.",
        },
    ),
    "catalog_query": ToolHints(
        prerequisites=(),
        next_actions=("activate_power", "resolve_intent"),
        error_hints=_COMMON_ERRORS | {"not_found": "Use a server name from catalog_query servers."},
    ),
}


@dataclass(frozen=True)
class Suggestion:
    """One suggested next call: shown to the agent as ``{"tool", "arguments", "why"}``. ``accepts``
    lists every call name that counts as following it (a proxied tool's namespaced name counts as
    following a ``call_tool`` of that tool)."""

    tool: str
    why: str
    arguments: dict[str, Any] = field(default_factory=dict)
    accepts: frozenset[str] = frozenset()

    def as_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "why": self.why}

    def accepted(self) -> frozenset[str]:
        return self.accepts | {self.tool}


@dataclass
class _Pending:
    kind: str
    accepts: frozenset[str]


@dataclass
class _Session:
    stats: GatewaySessionStats
    pending: list[_Pending] = field(default_factory=list)
    resolved: bool = False
    prerequisite_shown: bool = False


Sink = Callable[[GatewaySessionStats], None]


class HintTracker:
    """Per-session hint bookkeeping. Call ``on_call`` when a request arrives and ``offer`` with the
    suggestions an answer carries, then ``flush`` once per call to hand the counts to ``sink``
    (errors there are logged, never raised)."""

    def __init__(self, sink: Sink | None = None) -> None:
        self._sessions: dict[str, _Session] = {}
        self._sink = sink

    def _get(self, session_id: str, transport: str, client: str) -> _Session:
        found = self._sessions.get(session_id)
        if found is None:
            now = datetime.now(UTC)
            stats = GatewaySessionStats(
                session_id=session_id, transport=transport, client=client, started_at=now, last_seen_at=now
            )
            found = self._sessions[session_id] = _Session(stats)
        elif client and not found.stats.client:
            found.stats.client = client
        return found

    def on_call(self, session_id: str, name: str, *, transport: str = "stdio", client: str = "") -> None:
        """Judge the hints pending from the previous answer against this call, and count the call."""
        session = self._get(session_id, transport, client)
        for pending in session.pending:
            counts = session.stats.hints.setdefault(pending.kind, HintCounts())
            if name in pending.accepts:
                counts.followed += 1
            else:
                counts.ignored += 1
        session.pending = []
        session.stats.calls[name] = session.stats.calls.get(name, 0) + 1
        session.stats.last_seen_at = datetime.now(UTC)
        if name == "resolve_intent":
            session.resolved = True

    def prerequisite(self, session_id: str, name: str) -> dict[str, Any] | None:
        """The PREREQUISITE_SUGGESTED hint for ``name`` if this session skipped its prerequisite (shown
        once per session), else None."""
        session = self._sessions.get(session_id)
        hints = GATEWAY_HINTS.get(name)
        if session is None or hints is None or "resolve_intent" not in hints.prerequisites:
            return None
        if session.resolved or session.prerequisite_shown:  # shown once, and never after a resolve
            return None
        session.prerequisite_shown = True
        session.pending.append(_Pending(PREREQUISITE_SUGGESTED, frozenset({"resolve_intent"})))
        session.stats.hints.setdefault(PREREQUISITE_SUGGESTED, HintCounts()).shown += 1
        return {
            "code": PREREQUISITE_SUGGESTED,
            "can_proceed": True,
            "suggested": "resolve_intent",
            "message": (
                f"{name} went ahead. Next time call resolve_intent(query) first: it finds the right "
                "power for the request and often activates it in the same call."
            ),
        }

    def offer(self, session_id: str, suggestions: list[Suggestion]) -> list[dict[str, Any]]:
        """Record the suggestions an answer carries; returns them as the answer shows them."""
        if (session := self._sessions.get(session_id)) is not None and suggestions:
            accepts = frozenset().union(*(s.accepted() for s in suggestions))
            session.pending.append(_Pending(SUGGESTED_NEXT_ACTIONS, accepts))
            session.stats.hints.setdefault(SUGGESTED_NEXT_ACTIONS, HintCounts()).shown += 1
        return [s.as_json() for s in suggestions]

    def on_error(self, session_id: str, power: str | None = None) -> None:
        """Count a failed call; ``power``: a proxied call of that power failed (its error or the world's)."""
        if (session := self._sessions.get(session_id)) is not None:
            session.stats.errors += 1
            if power:
                session.stats.upstream_errors[power] = session.stats.upstream_errors.get(power, 0) + 1

    def flush(self, session_id: str) -> None:
        """Hand the session's counts to the sink: once per call, after its answer is made."""
        if (session := self._sessions.get(session_id)) is None or self._sink is None:
            return
        try:
            self._sink(session.stats)
        except Exception:  # statistics must never fail an agent's call
            logger.warning("could not record gateway session stats", exc_info=True)
