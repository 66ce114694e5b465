"""What the read path reads of one index, built once per index: the power directory the router shows and
the catalog's words the confidence reads (``IndexSnapshot``); and the check that an index may be served."""

from __future__ import annotations

from collections.abc import Collection

from services.root.container import Container
from tool_selector.catalog.store import CatalogStore
from tool_selector.core.errors import IndexMissingError, NotFoundError
from tool_selector.core.models import ServerRecord, ToolDocument, ToolSummary
from tool_selector.index.build import build_documents
from tool_selector.index.mark import index_is_current, indexed_seq
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.route.tiers import PowerInfo
from tool_selector.search.backend import HeldDocuments, SearchBackend
from tool_selector.trust.limits import cut
from tool_selector.trust.shown import server_purpose


def power_directory(store: CatalogStore, servers: Collection[str] | None = None) -> dict[str, PowerInfo]:
    """Every power (or those of ``servers`` that exist) with its one-line purpose and original tools, as
    the router may show them: descriptions cut to the cap, a server description the scanner quarantines
    withheld, never a server's instructions (tool_selector/trust/shown.py: ``server_purpose``)."""
    tools_by_server: dict[str, list[ToolSummary]] = {}
    records = store.list_servers() if servers is None else _existing(store, servers)
    listed = (
        store.list_tools(cleared_only=True)
        if servers is None
        else [t for r in records for t in store.list_tools(r.name, cleared_only=True)]
    )
    for tool in listed:
        tools_by_server.setdefault(tool.server, []).append(
            ToolSummary(name=tool.name, description=cut(tool.description), input_schema=tool.input_schema)
        )
    directory = {}
    for server in records:
        keywords = server.metadata.get("categories") or server.metadata.get("keywords") or []
        directory[server.name] = PowerInfo(
            name=server.name,
            description=server_purpose(
                server.description, server.metadata, [t.name for t in tools_by_server.get(server.name, [])]
            ),
            keywords=[str(k) for k in keywords] if isinstance(keywords, list) else [str(keywords)],
            tools=tools_by_server.get(server.name, []),
        )
    return directory


def _check_index(container: Container, *, allow_stale: bool) -> None:
    if container.backend.count() == 0:
        raise IndexMissingError(
            "The search index is empty.",
            hint="Run `tool-selector catalog import DIR` and `tool-selector index build` first.",
        )
    if not allow_stale and indexed_seq(container) is not None and not index_is_current(container):
        raise IndexMissingError(
            "The search index is older than the catalog (servers or tools changed since it was built).",
            hint="Run `tool-selector index build` to bring it up to date.",
        )


def check_servable(container: Container) -> None:
    """Refuse, saying what to do, an index that is missing, empty or older than the catalog: what
    ``IndexSnapshot`` checks first, without building it (the gateway checks this before it starts)."""
    _check_index(container, allow_stale=False)


def _existing(store: CatalogStore, names: Collection[str]) -> list[ServerRecord]:
    records = []
    for name in sorted(names):
        try:
            records.append(store.get_server(name))
        except NotFoundError:
            continue
    return records


def _indexed_documents(backend: SearchBackend, store: CatalogStore) -> list[ToolDocument]:
    """The tool documents the index holds: the embedded backend keeps them in memory, so they are not
    built and hashed again from the catalog (at 30k tools that took most of a reload); other backends
    build them from the catalog, as the index was built."""
    return backend.documents() if isinstance(backend, HeldDocuments) else build_documents(store)[0]


class IndexSnapshot:
    """The power directory and the catalog's words (the confidence reads them) of one index, so that a
    decision costs one resolve and no database reads. The read path (services/resolve/read_path.py)
    holds one and builds a new one when the index changes."""

    def __init__(self, container: Container, *, allow_stale: bool = False) -> None:
        """``allow_stale``: serve an index older than the catalog (a write in this process is bringing
        it up to date) instead of refusing."""
        self.container = container
        _check_index(container, allow_stale=allow_stale)
        self.powers = power_directory(container.store)
        self.terms = CatalogTerms.from_documents(_indexed_documents(container.backend, container.store))

    @classmethod
    def updated(
        cls, previous: IndexSnapshot, changed: Collection[str], *, allow_stale: bool
    ) -> IndexSnapshot:
        """``previous`` brought up to date with the servers ``changed`` since it was built (the catalog's
        change log says which): their powers and words are read again, the rest is kept. What a full
        build gives, at the cost of what changed."""
        snapshot = cls.__new__(cls)
        snapshot.container = container = previous.container
        _check_index(container, allow_stale=allow_stale)
        powers = dict(previous.powers)  # a plain copy: filtering it in a comprehension cost ~50 ms at 37k
        for name in changed:
            powers.pop(name, None)
        powers.update(power_directory(container.store, changed))
        snapshot.powers = powers
        removed = [t for s in changed for t in previous.terms.power_members.get(s, ())]
        snapshot.terms = previous.terms.updated(build_documents(container.store, changed)[0], removed)
        return snapshot
