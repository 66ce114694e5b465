"""Use cases: deterministic registration of servers and tools, with near-duplicate matching.

``matching_mode``:
- ``auto`` (default): when a near-duplicate tool exists, return it instead of creating one. A
  near-duplicate has cosine similarity >= 0.85 with the new tool, or 0.75-0.85 and the same name
  (names compared without case and separators: ``get_file`` = ``getFile`` = ``get-file``).
- ``force_create``: create unless the exact id exists (409).
- ``match_only``: return the match, or NotFoundError (404); never create.

Similarity is the embedder's cosine between "<name words>: <description>" texts; the server's name is
left out so that the same tool under two servers compares equal. By default the candidates are the
tools of the same server; ``match_scope="catalog"`` compares against every tool.

Every mutation refreshes enrichment (incremental) and the index before it returns, so a resolve made
after the response sees the change.
"""

from __future__ import annotations

import logging
import re
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from services.shared.container import Container
from services.shared.indexing import refresh_index
from services.shared.policy import origin_mode
from services.write.enriching import enrich_catalog
from tool_selector.errors import NotFoundError
from tool_selector.hashing import sha256_of
from tool_selector.indexing import IndexSummary
from tool_selector.models import CreationMethod, ServerRecord, ServerSpec, ToolRecord, ToolSpec
from tool_selector.search.text import split_identifiers
from tool_selector.trust.limits import CappedDescription, CappedMetadata, CappedSchema

logger = logging.getLogger(__name__)

MatchingMode = Literal["auto", "force_create", "match_only"]
MatchScope = Literal["server", "catalog"]
SIMILAR = 0.85
SIMILAR_WITH_SAME_NAME = 0.75
DEDUP_TEXT_VERSION = "dedup-v1"


class ToolMatch(BaseModel):
    tool_id: str
    similarity: float
    rule: Literal["same_id", "similar", "similar_same_name"]


class ToolOutcome(BaseModel):
    outcome: Literal["created", "matched"]
    tool: ToolRecord
    match: ToolMatch | None = None
    held: bool = Field(
        default=False,
        description="true when the definition waits for approval (trust.registered = approve, or the "
        "scanner quarantined it): it is stored but not searchable until `quarantine approve`",
    )


class ServerOutcome(BaseModel):
    outcome: Literal["created", "matched"]
    server: ServerRecord


class ServerDeleted(BaseModel):
    deleted: str
    tools_deleted: list[str]
    note: str


class ToolPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: CappedDescription | None = None
    input_schema: CappedSchema | None = None
    annotations: CappedSchema | None = None


class ServerPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: CappedDescription | None = None
    metadata: CappedMetadata | None = None


def same_name(a: str, b: str) -> bool:
    def key(name: str) -> str:
        return re.sub(r"[^a-z0-9]", "", split_identifiers(name).lower())

    return key(a) == key(b)


def dedup_text(name: str, description: str) -> str:
    return f"{split_identifiers(name)}: {description}"[:4000]


class DuplicateFinder:
    """Cosine similarity of a tool against stored tools; vectors cached in the catalog store."""

    def __init__(self, container: Container) -> None:
        self.container = container
        self._memo: dict[str, np.ndarray] = {}  # this finder's vectors: a batch reads each one once

    def _vectors(self, texts: list[str]) -> np.ndarray:
        embedder, store = self.container.embedder, self.container.store
        keys = [sha256_of([embedder.model_id, DEDUP_TEXT_VERSION, t]) for t in texts]
        unknown = [k for k in dict.fromkeys(keys) if k not in self._memo]
        if unknown:
            self._memo.update(store.get_vectors(embedder.model_id, unknown))
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._memo}.items())
        if missing:
            fresh = embedder.embed_documents([t for _, t in missing])
            new = {k: v for (k, _), v in zip(missing, fresh, strict=True)}
            store.put_vectors(embedder.model_id, new)
            self._memo.update(new)
        return np.stack([self._memo[k] for k in keys]) if keys else np.zeros((0, embedder.dim), np.float32)

    def warm(self, specs: list[ToolSpec], scope: MatchScope) -> None:
        """Embed a batch's tools and their candidates in a few large calls, before a transaction, so
        that matching inside it finds every vector cached and never holds the database while embedding."""
        store = self.container.store
        servers = {s.server for s in specs}
        stored = [t for t in store.list_tools() if scope == "catalog" or t.server in servers]
        texts = [dedup_text(t.name, t.description) for t in [*stored, *specs]]
        for start in range(0, len(texts), 256):
            self._vectors(texts[start : start + 256])

    def _ranked(self, spec: ToolSpec, scope: MatchScope) -> list[tuple[float, ToolRecord]]:
        """Stored candidates with their similarity to ``spec``, most similar first."""
        candidates = self.container.store.list_tools(None if scope == "catalog" else spec.server)
        if not candidates:
            return []
        matrix = self._vectors([dedup_text(t.name, t.description) for t in candidates])
        sims = matrix @ self._vectors([dedup_text(spec.name, spec.description)])[0]
        return sorted(((float(s), t) for s, t in zip(sims, candidates, strict=True)), key=lambda p: -p[0])

    def best(self, spec: ToolSpec, scope: MatchScope) -> ToolMatch | None:
        for sim, other in self._ranked(spec, scope):
            if sim >= SIMILAR:
                return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar")
            if sim < SIMILAR_WITH_SAME_NAME:
                break
            if same_name(other.name, spec.name):
                return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar_same_name")
        return None

    def closest(self, spec: ToolSpec, scope: MatchScope) -> tuple[str, float] | None:
        """The most similar stored tool whatever its score (for the error of match_only)."""
        ranked = self._ranked(spec, scope)
        return (ranked[0][1].id, round(ranked[0][0], 4)) if ranked else None


def find_match(
    container: Container, spec: ToolSpec, scope: MatchScope, finder: DuplicateFinder | None = None
) -> ToolMatch | None:
    store = container.store
    try:
        store.get_tool(spec.id)
    except NotFoundError:
        return (finder or DuplicateFinder(container)).best(spec, scope)
    return ToolMatch(tool_id=spec.id, similarity=1.0, rule="same_id")


def refresh(container: Container, *, force: frozenset[str] = frozenset()) -> IndexSummary:
    """Enrich what changed (the configured enricher, incremental) and bring the index up to date."""
    enrich_catalog(container, container.enrichers(), force=force)
    return refresh_index(container)


# -- servers -----------------------------------------------------------------------------------------


def register_server(
    container: Container, spec: ServerSpec, *, mode: MatchingMode, method: CreationMethod, actor: str
) -> ServerOutcome:
    store = container.store
    try:
        existing = store.get_server(spec.name)
    except NotFoundError:
        existing = None
    if existing is not None and mode != "force_create":
        return ServerOutcome(outcome="matched", server=existing)
    if existing is None and mode == "match_only":
        raise NotFoundError(
            f"No server named {spec.name!r}; matching_mode match_only never creates one.",
            hint="Use matching_mode auto to create it.",
        )
    created = container.writer.create_server(spec, method=method, actor=actor)  # 409 when it exists
    refresh(container)  # the index is built from servers too: keep it current with the catalog
    return ServerOutcome(outcome="created", server=created)


def require_server_named(container: Container, name: str) -> ServerRecord:
    try:
        return container.store.get_server(name)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No server named {name!r} in the catalog.",
            hint="Register it first (POST /api/v1/servers); `tool-selector catalog list` shows the names.",
            name=name,
        ) from exc


def require_tool(container: Container, tool_id: str) -> ToolRecord:
    try:
        return container.store.get_tool(tool_id)
    except NotFoundError as exc:
        raise NotFoundError(
            f"No tool with id {tool_id!r} in the catalog.",
            hint="Tool ids read 'server::tool'; GET /api/v1/tools/search?q=... finds them, "
            "POST /api/v1/tools registers one.",
            tool_id=tool_id,
        ) from exc


def patch_server(container: Container, name: str, patch: ServerPatch, *, actor: str) -> ServerRecord:
    require_server_named(container, name)
    record, changed = container.writer.update_server(
        name, description=patch.description, metadata=patch.metadata, actor=actor
    )
    if changed:
        refresh(container)
    return record


def delete_server(container: Container, name: str, *, cascade: bool, actor: str) -> ServerDeleted:
    configured = name in _configured(container)
    require_server_named(container, name)
    tools = container.writer.delete_server(name, cascade=cascade, actor=actor)
    refresh(container)
    note = f"Deleted server {name!r} and its {len(tools)} tool(s) from the catalog and the search index."
    if configured:
        note += (
            " It is still in the server configuration, so the next sync discovers it again; "
            "remove it with `tool-selector servers remove` to keep it out."
        )
    return ServerDeleted(deleted=name, tools_deleted=tools, note=note)


def _configured(container: Container) -> set[str]:
    from tool_selector.servers_config import load_servers

    return set(load_servers(container.settings.servers_path).mcpServers)


# -- tools -------------------------------------------------------------------------------------------


def register_tool(
    container: Container,
    spec: ToolSpec,
    *,
    mode: MatchingMode,
    scope: MatchScope = "server",
    method: CreationMethod,
    actor: str,
) -> ToolOutcome:
    store = container.store
    require_server_named(container, spec.server)
    finder = DuplicateFinder(container)
    if mode != "force_create":
        match = find_match(container, spec, scope, finder)
        if match is not None:
            return ToolOutcome(outcome="matched", tool=store.get_tool(match.tool_id), match=match)
        if mode == "match_only":
            closest = finder.closest(spec, scope)
            near = f" The closest is {closest[0]!r} at similarity {closest[1]}." if closest else ""
            raise NotFoundError(
                f"No tool matches {spec.id!r} (similarity >= {SIMILAR}, or >= {SIMILAR_WITH_SAME_NAME} with "
                f"the same name).{near}",
                hint="Use matching_mode auto to create it, or match_scope catalog to look in every server.",
                closest=closest[0] if closest else None,
            )
    trust = origin_mode(container.settings, "registered")
    created = container.writer.create_tool(spec, method=method, actor=actor, trust=trust)
    refresh(container)
    return ToolOutcome(outcome="created", tool=created, held=created.id in container.store.held_tool_ids())


def patch_tool(container: Container, tool_id: str, patch: ToolPatch, *, actor: str) -> ToolRecord:
    require_tool(container, tool_id)
    record, changed = container.writer.update_tool(
        tool_id,
        description=patch.description,
        input_schema=patch.input_schema,
        annotations=patch.annotations,
        actor=actor,
        trust=origin_mode(container.settings, "registered"),
    )
    if changed:
        refresh(container)
    return record


def delete_tool(container: Container, tool_id: str, *, actor: str) -> ToolRecord:
    require_tool(container, tool_id)
    removed = container.writer.delete_tool(tool_id, actor=actor)
    refresh(container)
    return removed
