"""What each gateway session has read and has in its tool list, so that an answer never repeats what the
agent already holds.

Per MCP session (a stdio process has one; over HTTP each ``Mcp-Session-Id``, and each key's stateless
requests): the tool lines it read (``seen``), the proxied tools in its ``tools/list`` (``listed``: the tools
its requests matched or it called, not every tool of a power), the powers whose steering it read, its
last request (its words, for the arguments of a later ``activate_power``; the tools it named per power,
best first), and the values its successful calls passed to each power's parameters (``used``: a value it
always passed the same, such as a repository's path, fills that parameter of a later next call).
Kept in memory for at most ``MAX_SESSIONS`` sessions, the least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_SESSIONS = 1_000
MAX_USED = 64  # parameters remembered per power and session
MAX_USED_CHARS = 500  # a longer value is never reused
VARIED = object()  # the session passed this parameter different values: none is reused


@dataclass
class SessionView:
    seen: set[str] = field(default_factory=set)  # "power::tool" whose line the session read
    listed: dict[tuple[str, str], None] = field(default_factory=dict)  # in its tools/list, oldest use first
    steering: set[str] = field(default_factory=set)  # powers whose steering it read
    words: str = ""  # its last request, as the arguments are read from it
    named: dict[str, list[str]] = field(default_factory=dict)  # power -> tools its last request named
    used: dict[str, dict[str, object]] = field(
        default_factory=dict
    )  # power -> parameter -> value (or VARIED)

    def list_tools(self, tools: Collection[tuple[str, str]], limit: int, active: Collection[str]) -> bool:
        """``tools`` (power, tool) listed as the most recently used; past ``limit`` the least recently used
        leave (still callable while their power runs); tools of a power not ``active`` leave. Whether the
        list changed."""
        before = set(self.listed)
        kept = (k for k in self.listed if k not in tools and k[0] in active)
        self.listed = {k: None for k in [*kept, *tools]}
        self.listed = dict(list(self.listed.items())[-limit:])
        return before != set(self.listed)

    def passed(self, power: str, arguments: Mapping[str, Any]) -> None:
        """A successful call's arguments: each plain value (text, number, boolean) is kept for its power
        and parameter; a parameter passed two different values is marked VARIED (never reused)."""
        kept = self.used.setdefault(power, {})
        for name, value in arguments.items():
            if not isinstance(value, str | int | float | bool) or len(str(value)) > MAX_USED_CHARS:
                continue
            if name in kept:
                kept[name] = value if kept[name] == value else VARIED
            elif len(kept) < MAX_USED:
                kept[name] = value

    def earlier(self) -> dict[str, dict[str, Any]]:
        """Per power, the values the session always passed the same (a copy)."""
        return {p: {k: v for k, v in kept.items() if v is not VARIED} for p, kept in self.used.items()}


class SessionViews:
    """The views of the sessions, thread-safe (resolves run in worker threads)."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self._views: OrderedDict[str, SessionView] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, session: str) -> SessionView:
        with self._lock:
            view = self._views.get(session)
            if view is None:
                view = self._views[session] = SessionView()
                while len(self._views) > self._limit:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(session)
            return view

    def listed(self, session: str) -> set[tuple[str, str]]:
        with self._lock:
            view = self._views.get(session)
            return set(view.listed) if view is not None else set()
