"""The catalog's tool names, indexed for the shadowing check (shadowing.py) and changed a server at a time.

``CatalogNames`` holds what ``ScanContext`` asks of the (server, tool name) pairs: each server's names
(as given and lowercased), the servers of each compound name, the compound names by their words, how
many servers serve each lowercased name, and the servers by their lowercased names (a description that
speaks of "the git server" names one). ``set_server`` replaces one server's names in place at the
cost of what changed, so a catalog of 100k tools need not be read again after each write
(tool_selector/catalog/pins.py keeps one up to date from the catalog's change log).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

_NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")
EMPTY: frozenset[str] = frozenset()


def split_name(name: str) -> list[str]:
    return [p for p in re.split(r"[_\-\s]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]


def compound(name: str) -> bool:
    """``send_email``, ``queryDatabase``: a name specific enough to mean a tool when a text says it."""
    return _NAME_TOKEN.fullmatch(name) is not None


def words_of(name: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in split_name(name))


class CatalogNames:
    """The (server, tool name) pairs of a catalog, indexed; see the module docstring. A server without
    names is not held at all, as if it had never been given."""

    def __init__(self) -> None:
        self.names_of: dict[str, frozenset[str]] = {}  # server -> its tool names
        self.lower_of: dict[str, frozenset[str]] = {}  # server -> its tool names, lowercased
        self.servers_of: dict[str, set[str]] = {}  # compound name -> the servers that serve it
        self.by_words: dict[tuple[str, ...], set[str]] = {}  # lowercased words -> compound names
        self.lower_count: dict[str, int] = {}  # lowercased name -> how many servers serve it
        self.servers_lower: dict[str, set[str]] = {}  # lowercased server name -> the servers called so

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> CatalogNames:
        grouped: dict[str, set[str]] = defaultdict(set)
        for server, name in pairs:
            grouped[server].add(name)
        names = cls()
        for server, own in grouped.items():
            names.set_server(server, frozenset(own))
        return names

    def set_server(self, server: str, names: frozenset[str]) -> None:
        """``server`` now serves exactly ``names`` (none: it is forgotten)."""
        old = self.names_of.get(server, EMPTY)
        if names == old:
            return
        for name in old - names:
            if compound(name):
                self._drop_compound(name, server)
        for name in names - old:
            if compound(name):
                servers = self.servers_of.get(name)
                if servers is None:
                    self.servers_of[name] = {server}
                    self.by_words.setdefault(words_of(name), set()).add(name)
                else:
                    servers.add(server)
        old_lower = self.lower_of.get(server, EMPTY)
        new_lower = frozenset(n.lower() for n in names)
        for lower in old_lower - new_lower:
            left = self.lower_count[lower] - 1
            if left:
                self.lower_count[lower] = left
            else:
                del self.lower_count[lower]
        for lower in new_lower - old_lower:
            self.lower_count[lower] = self.lower_count.get(lower, 0) + 1
        if names and not old:
            self.servers_lower.setdefault(server.lower(), set()).add(server)
        elif old and not names:
            called = self.servers_lower[server.lower()]
            called.discard(server)
            if not called:
                del self.servers_lower[server.lower()]
        if names:
            self.names_of[server], self.lower_of[server] = names, new_lower
        else:
            self.names_of.pop(server, None)
            self.lower_of.pop(server, None)

    def _drop_compound(self, name: str, server: str) -> None:
        servers = self.servers_of[name]
        servers.discard(server)
        if servers:
            return
        del self.servers_of[name]
        key = words_of(name)
        same_words = self.by_words[key]
        same_words.discard(name)
        if not same_words:
            del self.by_words[key]

    def pairs(self) -> set[tuple[str, str]]:
        return {(server, name) for server, names in self.names_of.items() for name in names}
