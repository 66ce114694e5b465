"""Use case: import a batch of servers and tools (catalog JSON, CSV or an mcpServers config), all or
nothing, with the same near-duplicate matching as single registration (services/write/registry.py).

Per item the outcome is ``created``, ``updated`` (same id, new content), ``matched`` (same content,
or a near-duplicate in ``auto`` mode), or ``skipped`` (``match_only`` without a match; an mcpServers
entry already configured differently). Any error rolls the whole batch back: the catalog, the index
and the server configuration stay exactly as they were.

Servers from an mcpServers config go into the operator's server configuration switched off and marked
as imported (``enabled: false``, ``origin: import``, under the ``trust.imported`` policy whatever the
batch says): a command reaching us through a catalog import is never run until the operator adopts it
on the machine with ``tool-selector servers enable NAME`` (services/write/servers.py).
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from services.root.container import Container
from services.write.policy import origin_mode
from services.write.registry import (
    BatchMatches,
    DuplicateFinder,
    MatchingMode,
    MatchScope,
    configured_names,
    held_text_entry,
    pending_text,
    refresh,
)
from services.write.writing import writes
from tool_selector.catalog.server_pins import ServerText
from tool_selector.catalog_files.batch import ImportBatch
from tool_selector.config.servers import ServersFile, load_servers, save_servers
from tool_selector.core.errors import CatalogFileError, NotFoundError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec

if TYPE_CHECKING:
    from tool_selector.catalog.store import CatalogStore
    from tool_selector.config.settings import Settings

logger = logging.getLogger(__name__)

Outcome = Literal["created", "updated", "matched", "skipped"]


class ImportItem(BaseModel):
    kind: Literal["server", "tool", "config"]
    id: str
    outcome: Outcome
    matched_to: str | None = None
    similarity: float | None = None
    reason: str = ""


class ImportCounts(BaseModel):
    created: int = 0
    updated: int = 0
    matched: int = 0
    skipped: int = 0
    errors: int = 0


class ImportResult(BaseModel):
    format: str
    matching_mode: MatchingMode
    counts: ImportCounts = Field(default_factory=ImportCounts)
    items: list[ImportItem] = Field(default_factory=list)
    errors: list[dict[str, object]] = Field(default_factory=list)
    note: str = ""


def _count(result: ImportResult, item: ImportItem) -> None:
    result.items.append(item)
    setattr(result.counts, item.outcome, getattr(result.counts, item.outcome) + 1)


OWNED = (
    "configured on this machine: its tools and description come from discovery and its keywords and "
    "steering from the operator's configuration, so an import does not change them"
)


def _server(
    container: Container, spec: ServerSpec, actor: str, result: ImportResult, owned: set[str]
) -> None:
    store = container.store
    trust = origin_mode(container.settings, "imported")
    try:
        existing = store.get_server(spec.name)
    except NotFoundError:
        if spec.name in owned:  # configured, not discovered yet: the sync will fill it
            _count(result, ImportItem(kind="server", id=spec.name, outcome="skipped", reason=OWNED))
            return
        container.writer.create_server(spec, method=CreationMethod.IMPORTED, actor=actor, trust=trust)
        _count(result, _held(store, "created", spec.name))
        return
    # ``owned``: the configured names, read once per batch; a discovered server joins them
    if existing.creation_method == CreationMethod.DISCOVERED or spec.name in owned:
        owned.add(spec.name)
        _count(result, ImportItem(kind="server", id=spec.name, outcome="skipped", reason=OWNED))
        return
    if (existing.description, existing.metadata) == (spec.description, spec.metadata):
        _count(result, ImportItem(kind="server", id=spec.name, outcome="matched"))
        return
    waiting = pending_text(store, spec.name, ServerText.of(spec.description, spec.metadata).digest())
    if waiting is not None:  # this very text waits for approval already
        reason = f"its description and metadata wait for approval ({waiting})"
        _count(result, ImportItem(kind="server", id=spec.name, outcome="matched", reason=reason))
        return
    container.writer.update_server(
        spec.name,
        description=spec.description,
        metadata=spec.metadata,
        actor=actor,
        trust=trust,
        found_by="import",
    )
    _count(result, _held(store, "updated", spec.name))


def _held(store: CatalogStore, outcome: Outcome, name: str) -> ImportItem:
    entry = held_text_entry(store, name)
    reason = "" if entry is None else f"its description and metadata wait for approval ({entry})"
    return ImportItem(kind="server", id=name, outcome=outcome, reason=reason)


def _tool(
    container: Container,
    spec: ToolSpec,
    mode: MatchingMode,
    matches: BatchMatches | None,
    index: int,
    actor: str,
    result: ImportResult,
    owned: set[str],
) -> None:
    """One tool of the batch (skipped on a server ``owned`` by the operator's configuration); ``matches``
    (None in force_create) decides near-duplicates, and sees the tools this batch has written so far
    through its finder's ``writing``."""
    store = container.store
    if spec.server in owned:
        _count(result, ImportItem(kind="tool", id=spec.id, outcome="skipped", reason=OWNED))
        return
    finder = matches.finder if matches is not None else None
    try:
        existing = store.get_tool(spec.id)
    except NotFoundError:
        existing = None
    if existing is not None:
        if existing.definition_hash() == spec.definition_hash():
            _count(result, ImportItem(kind="tool", id=spec.id, outcome="matched", matched_to=spec.id))
            return
        with _writing(finder, spec):
            container.writer.update_tool(
                spec.id,
                description=spec.description,
                input_schema=spec.input_schema,
                annotations=spec.annotations,
                output_schema=spec.output_schema,
                actor=actor,
                trust=origin_mode(container.settings, "imported"),
                found_by="import",
            )
        _count(result, ImportItem(kind="tool", id=spec.id, outcome="updated"))
        return
    if matches is not None:
        match = matches.best(index)
        if match is not None:
            item = ImportItem(
                kind="tool",
                id=spec.id,
                outcome="matched",
                matched_to=match.tool_id,
                similarity=match.similarity,
            )
            _count(result, item)
            return
        if mode == "match_only":
            _count(result, ImportItem(kind="tool", id=spec.id, outcome="skipped", reason="no match"))
            return
    with _writing(finder, spec):
        container.writer.create_tool(
            spec,
            method=CreationMethod.IMPORTED,
            actor=actor,
            trust=origin_mode(container.settings, "imported"),
        )
    _count(result, ImportItem(kind="tool", id=spec.id, outcome="created"))


def _writing(finder: DuplicateFinder | None, spec: ToolSpec) -> AbstractContextManager[None]:
    return nullcontext() if finder is None else finder.writing(spec.server, spec.id)


def _configs(settings: Settings, batch: ImportBatch, result: ImportResult) -> ServersFile | None:
    """Add mcpServers entries to the configuration, switched off; returns the file to save, if any."""
    servers = load_servers(settings.servers_path)
    changed = False
    for name, config in batch.server_configs.items():
        # never run as it is: switched off, waiting for the operator to adopt it (config/servers.py)
        pending = config.model_copy(
            update={"enabled": False, "origin": "import", "trust": settings.trust.imported}
        )
        existing = servers.mcpServers.get(name)
        if existing is not None:
            same = existing.model_copy(update={"enabled": False}) == pending
            reason = "" if same else "already configured differently; the configured entry was kept"
            _count(
                result,
                ImportItem(kind="config", id=name, outcome="matched" if same else "skipped", reason=reason),
            )
            continue
        servers.mcpServers[name] = pending
        changed = True
        _count(result, ImportItem(kind="config", id=name, outcome="created", reason="added switched off"))
    return servers if changed else None


@writes("batch import")
def import_batch(
    container: Container,
    batch: ImportBatch,
    *,
    mode: MatchingMode = "auto",
    scope: MatchScope = "server",
    actor: str,
) -> ImportResult:
    """Apply a parsed batch in one transaction; raises (and stores nothing) on the first failure."""
    result = ImportResult(format=batch.format, matching_mode=mode)
    if batch.server_configs:
        servers_file = _configs(container.settings, batch, result)
        if servers_file is not None:
            save_servers(container.settings.servers_path, servers_file)
            added = [i.id for i in result.items if i.kind == "config" and i.outcome == "created"]
            container.writer.record(
                actor,
                "config.import",
                "servers.json",
                after_hash=sha256_of(servers_file.model_dump(mode="json")),
                added_switched_off=added,
            )
        result.note = (
            "Servers from an mcpServers config are added switched off; enable each with "
            "`tool-selector servers enable NAME`, then run `tool-selector sync`."
        )
        return result
    matches = None
    if mode != "force_create":  # embed, read and multiply outside the transaction (see match_batch)
        matches = DuplicateFinder(container).match_batch(batch.tools, scope)
    writer = container.writer
    owned = configured_names(container.settings)
    with writer.batch():
        for server in batch.servers:
            _server(container, server, actor, result, owned)
        for index, tool in enumerate(batch.tools):
            try:
                _tool(container, tool, mode, matches, index, actor, result, owned)
            except NotFoundError as exc:
                raise CatalogFileError(
                    f"Tool {tool.id!r} (item {index}) names server {tool.server!r}, which is neither in this "
                    "batch nor in the catalog.",
                    hint="Add the server to the batch; nothing was stored.",
                    problems=[{"item": index, "field": "server", "message": str(exc)}],
                ) from exc
        writer.record(
            actor,
            "catalog.import",
            f"batch:{batch.format}",
            after_hash=container.store.catalog_hash(),
            **result.counts.model_dump(),
        )
    refresh(container, servers={s.name for s in batch.servers} | {t.server for t in batch.tools})
    return result
