"""Stage 3, index: catalog store -> tool documents -> vectors -> search backend.

Incremental: a document whose text hash the backend already holds is not re-embedded or rewritten;
tools gone from the catalog leave the index. Vectors are cached in the catalog store by text hash.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from tool_selector.catalog.store import CatalogStore
from tool_selector.embedding import Embedder
from tool_selector.hashing import sha256_of
from tool_selector.models import ServerRecord, ServerSpec, ToolDocument, ToolEnrichment, ToolRecord
from tool_selector.search.backend import SearchBackend
from tool_selector.search.text import split_identifiers

logger = logging.getLogger(__name__)

DOCUMENT_VERSION = "doc-v2"
MAX_FIELD_CHARS = 4000


class IndexSummary(BaseModel):
    documents: int = 0
    embedded: int = 0
    vectors_from_cache: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    errors: dict[str, str] = {}
    seconds: float = 0.0


def _parameter_names(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    return [split_identifiers(str(k)) for k in props]


def _server_text(server: ServerRecord) -> str:
    summary = server.metadata.get("summary")
    parts = [server.description]
    if isinstance(summary, str) and summary and summary != server.description:
        parts.append(summary)
    return " ".join(p for p in parts if p)[:MAX_FIELD_CHARS]


def server_tags(server: ServerSpec) -> list[str]:
    """A server's categories, tags and configured keywords, as given in its metadata."""
    tags: list[str] = []
    for key in ("categories", "category", "tags", "keywords"):
        value = server.metadata.get(key)
        if isinstance(value, str):
            tags.append(value)
        elif isinstance(value, list):
            tags.extend(str(v) for v in value if isinstance(v, str | int))
    return tags


def _tags(server: ServerRecord) -> list[str]:
    return [split_identifiers(t) for t in server_tags(server)]


def embedding_text(tool: ToolRecord, server: ServerRecord) -> str:
    """What the vector of a tool stands for: its name, its server's name and its own description."""
    return f"{split_identifiers(tool.name)} ({server.name}): {tool.description}"[:MAX_FIELD_CHARS]


def enrichment_fields(enrichment: ToolEnrichment) -> dict[str, str | list[str]]:
    """The searchable fields stage 2 adds to a tool's document."""
    return {
        "action_entities": list(enrichment.action_entities),
        "enhanced_description": enrichment.enhanced_description,
        "semantic_keywords": list(enrichment.semantic_keywords),
        "use_cases": list(enrichment.use_cases),
        "server_domain": enrichment.server_domain,
    }


def build_document(
    tool: ToolRecord, server: ServerRecord, enrichment: ToolEnrichment | None = None
) -> ToolDocument:
    """A tool's search document. The enrichment is used only when it was made from this very tool
    (same content hash); a stale one is left out until the next sync replaces it."""
    fields: dict[str, str | list[str]] = {
        "name": split_identifiers(tool.name),
        "description": tool.description[:MAX_FIELD_CHARS],
        "server_name": split_identifiers(server.name),
        "server_description": _server_text(server),
        "parameter_names": _parameter_names(tool.input_schema),
        "tags": _tags(server),
    }
    if enrichment is not None and enrichment.tool_hash == tool.content_hash:
        fields.update(enrichment_fields(enrichment))
    text = embedding_text(tool, server)
    return ToolDocument(
        id=tool.id,
        server=tool.server,
        name=tool.name,
        fields=fields,
        text_hash=sha256_of([DOCUMENT_VERSION, fields, text]),
    )


def build_documents(store: CatalogStore) -> tuple[list[ToolDocument], dict[str, str]]:
    """Every cleared tool's document (held tools stay out of the index), and the text each one's vector
    is made from (by document id)."""
    servers = {s.name: s for s in store.list_servers()}
    enrichments = store.get_enrichments()
    docs: list[ToolDocument] = []
    texts: dict[str, str] = {}
    for tool in store.list_tools(cleared_only=True):
        server = servers[tool.server]
        doc = build_document(tool, server, enrichments.get(tool.id))
        docs.append(doc)
        texts[doc.id] = embedding_text(tool, server)
    return docs, texts


def index_catalog(
    store: CatalogStore,
    backend: SearchBackend,
    embedder: Embedder,
    *,
    rebuild: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Bring the backend in line with the catalog store; only changed documents are embedded."""
    started = time.perf_counter()
    docs, texts = build_documents(store)
    summary = IndexSummary(documents=len(docs))
    indexed = {} if rebuild else backend.ids()
    changed = [d for d in docs if indexed.get(d.id) != d.text_hash]
    summary.unchanged = len(docs) - len(changed)
    vector_keys = {d.id: sha256_of([embedder.model_id, texts[d.id]]) for d in changed}
    cached = store.get_vectors(embedder.model_id, vector_keys.values())
    summary.vectors_from_cache = sum(1 for k in vector_keys.values() if k in cached)
    missing = [d for d in changed if vector_keys[d.id] not in cached]
    fresh: dict[str, np.ndarray] = {}
    for start in range(0, len(missing), 256):
        chunk = missing[start : start + 256]
        vectors = embedder.embed_documents([texts[d.id] for d in chunk])
        for doc, vector in zip(chunk, vectors, strict=True):
            fresh[vector_keys[doc.id]] = vector
        if progress is not None:
            progress(min(start + 256, len(missing)), len(missing))
    if fresh:
        store.put_vectors(embedder.model_id, fresh)
    summary.embedded = len(fresh)
    vectors_by_key = {**cached, **fresh}
    ready: Sequence[ToolDocument] = [
        d.model_copy(update={"vector": vectors_by_key[vector_keys[d.id]].tolist()}) for d in changed
    ]
    if ready:
        result = backend.upsert(ready)
        summary.written, summary.errors = result.written, result.errors
    current = {d.id for d in docs}
    gone = [i for i in (backend.ids() if rebuild else indexed) if i not in current]
    if gone:
        summary.removed = backend.delete(gone)
    summary.seconds = round(time.perf_counter() - started, 3)
    logger.info("indexed: %s", summary.model_dump())
    return summary


def cached_tool_vectors(store: CatalogStore, model_id: str) -> dict[str, np.ndarray]:
    """Each tool's vector as the index holds it, read from the store's vector cache (tools whose text
    was never embedded are left out)."""
    _, texts = build_documents(store)
    keys = {tool_id: sha256_of([model_id, text]) for tool_id, text in texts.items()}
    cached = store.get_vectors(model_id, keys.values())
    return {tool_id: cached[key] for tool_id, key in keys.items() if key in cached}
