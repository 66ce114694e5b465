"""What each gateway session has read and has in its tool list, so that an answer never repeats what the
agent already holds.

Per MCP session (a stdio process has one; over HTTP each ``Mcp-Session-Id``, and each key's stateless
requests): the tool lines it read (``seen``), the proxied tools in its ``tools/list`` (``listed``: the tools
its requests matched or it called, not every tool of a power), the powers whose steering it read, and its
last request (its words, for the arguments of a later ``activate_power``; the tools it named per power,
best first). Kept in memory for at most ``MAX_SESSIONS`` sessions, the least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

MAX_SESSIONS = 1_000


@dataclass
class SessionView:
    seen: set[str] = field(default_factory=set)  # "power::tool" whose line the session read
    listed: set[tuple[str, str]] = field(default_factory=set)  # (power, tool) in its tools/list
    steering: set[str] = field(default_factory=set)  # powers whose steering it read
    words: str = ""  # its last request, as the arguments are read from it
    named: dict[str, list[str]] = field(default_factory=dict)  # power -> tools its last request named


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
