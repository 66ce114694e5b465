"""The ids the embedded backend holds, all of them or a few servers' only (what a write compares).

A tool document's id is ``<server>::<name>``; finding one server's among 100k ids would mean reading
them all at every write. ``ServerIds`` keeps, by server, every tool id it has seen in a part's rows: a
part's rows only grow until the next full generation (a write appends its documents, replaced and
deleted rows stay, dead), so after a write only the appended rows are read. The ids kept may include
dead ones; each answer is checked against the part's live ids, so it is exact.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

from tool_selector.core.models import ToolDocument
from tool_selector.search.backend import Target
from tool_selector.search.embedded.state import Part, State


class ServerIds:
    """Tool ids by server, for the rows of the part last asked about; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read = 0  # how many rows were read, of the part last asked about
        self._last: ToolDocument | None = None  # the last of them (not their list: a part's is large)
        self._by_server: dict[str, set[str]] = {}

    def of(self, part: Part, servers: Collection[str]) -> dict[str, str]:
        """The live tool ids of ``servers`` in ``part``, with their text hashes."""
        with self._lock:
            self._catch_up(part)
            found = (i for s in set(servers) for i in self._by_server.get(s, ()))
            return {i: part.docs[part.pos[i]].text_hash for i in found if i in part.pos}

    def _catch_up(self, part: Part) -> None:
        docs, read = part.docs, self._read
        # the rows read are this part's first rows: a part's rows are its parent's, then more, and a
        # compacted part's are a subsequence of them (the same documents), so its row ``read - 1``
        # holds the same document only when no row before it was dropped
        if read and (len(docs) < read or docs[read - 1] is not self._last):
            self._by_server, read = {}, 0
        for doc in docs[read:]:
            # the document's own server, not one read off its id: an older version's id may read two ways
            self._by_server.setdefault(doc.server, set()).add(doc.id)
        self._read, self._last = len(docs), docs[-1] if docs else None


class EmbeddedIds:
    """``ids`` of the embedded backend (mixed into ``EmbeddedBackend``)."""

    _server_ids: ServerIds | None = None

    def _usable(self) -> State:
        raise NotImplementedError

    def ids(self, *, target: Target = "tools") -> dict[str, str]:
        part = self._usable().part(target)
        return {doc_id: part.docs[row].text_hash for doc_id, row in part.pos.items()}

    def ids_of_servers(self, servers: Collection[str], *, target: Target = "tools") -> dict[str, str]:
        """``ids`` of the documents of ``servers`` only, at the cost of their documents (after a
        write, of its documents too)."""
        part = self._usable().part(target)
        if target == "servers":  # a server document's id is the server's name
            return {s: part.docs[part.pos[s]].text_hash for s in set(servers) if s in part.pos}
        if self._server_ids is None:
            self._server_ids = ServerIds()
        return self._server_ids.of(part, servers)
