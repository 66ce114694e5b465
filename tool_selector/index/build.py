"""Stage 3, index: catalog store -> tool and server documents -> vectors -> search backend.

One document per cleared tool, and one per server (its "power" document: the server's own words, its
cleared tools' names, first sentences and action-entity pairs, and its profile's domain and keywords),
searched apart from the tools with their own field boosts.

Incremental: a document whose text hash the backend already holds is not re-embedded or rewritten;
tools and servers gone from the catalog leave the index. Vectors are cached in the catalog store by
text hash.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from tool_selector.catalog.store import CatalogStore
from tool_selector.core.arguments import parameter_kinds
from tool_selector.core.hashing import profile_hash, sha256_of
from tool_selector.core.models import (
    ServerProfile,
    ServerRecord,
    ServerSpec,
    ToolDocument,
    ToolEnrichment,
    ToolRecord,
)
from tool_selector.embedding.embedders import Embedder
from tool_selector.index.sources import Catalog, read_catalog
from tool_selector.index.written import indexed_ids, upsert_documents
from tool_selector.search.backend import SearchBackend
from tool_selector.search.text import split_identifiers
from tool_selector.trust.shown import own_description

logger = logging.getLogger(__name__)

DOCUMENT_VERSION = "doc-v2"
# what an index holds: 2 = tool and server documents (1 = tool documents only); 3 = a server's
# instructions no longer stand in for its description (issue 42). Part of the index mark's key
# (services/root/container.py), so an index of an older layout is never taken for current.
INDEX_LAYOUT = 3
SERVER_DOCUMENT_VERSION = "server-doc-v1"
MAX_FIELD_CHARS = 4000
MAX_SENTENCE_CHARS = 200  # one tool's first sentence in its server's document
# a server's vector text, of which the first part is its description, then its tool names: 400
# characters (about 100 word pieces) ranked servers as well as 1,000 at alpha 0.5 on msc_bench_dev and
# livemcpbench (300 lost msc server R@3 0.898 -> 0.887) and costs about 30 % less to embed
MAX_SERVER_VECTOR_CHARS = 400
MAX_VECTOR_DESCRIPTION_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class IndexSummary(BaseModel):
    """What an index run did. ``documents`` ... ``removed`` count tool documents; ``servers_*`` count
    server documents; ``errors`` holds both (a server document's under ``server:<name>``). ``left_out``:
    stored servers and tools whose names break the naming rule (an older version let them in), kept in
    the catalog but not indexed, with what to do (tool_selector/index/sources.py)."""

    documents: int = 0
    embedded: int = 0
    vectors_from_cache: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    servers_indexed: int = 0
    servers_embedded: int = 0
    servers_written: int = 0
    servers_unchanged: int = 0
    servers_removed: int = 0
    errors: dict[str, str] = {}
    left_out: dict[str, str] = {}
    seconds: float = 0.0


def _parameter_names(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    return [split_identifiers(str(k)) for k in props]


def _server_text(server: ServerRecord) -> str:
    """The server's own description (else the operator's steering: never its instructions, which
    discovery stands in for a missing description) and its summary."""
    summary, steering = server.metadata.get("summary"), server.metadata.get("steering")
    own = own_description(server.description, server.metadata)
    parts = [own or (steering.strip() if isinstance(steering, str) else "")]
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


def tool_vector_text(
    name: str,
    server: str,
    description: str,
    *,
    parameters: Sequence[str] = (),
    actions: Sequence[str] = (),
) -> str:
    """What the vector of a tool stands for: its name, its server's name and its own description. The
    relevance model was trained on exactly this text (eval/relevance/data.py). ``parameters`` (its
    parameter names) and ``actions`` (enrichment's action-entity pairs) are the longer texts measured
    by ``tool-selector lab tool-text`` and not shipped (docs/measurements.md)."""
    text = f"{split_identifiers(name)} ({server}): {description}"
    if parameters:
        text += f" Parameters: {', '.join(parameters)}."
    if actions:
        text += f" Does: {'; '.join(actions)}."
    return text[:MAX_FIELD_CHARS]


def embedding_text(tool: ToolRecord, server: ServerRecord) -> str:
    """A stored tool's vector text (:func:`tool_vector_text`)."""
    return tool_vector_text(tool.name, server.name, tool.description)


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
        # the kinds of argument its parameters take (a url, a path, a time zone...), read from the schema
        # (names, types, formats); matched against a request's arguments, never keyword-searched
        "argument_kinds": sorted(parameter_kinds(tool.input_schema)),
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


def first_sentence(text: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    """The text's first sentence, whitespace collapsed, cut at a word."""
    flat = " ".join(text[: limit * 4].split())
    first = _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0]
    return first


def capped(items: Iterable[str], limit: int = MAX_FIELD_CHARS) -> list[str]:
    """The distinct non-empty items, in order, while their text stays within ``limit`` characters."""
    out: list[str] = []
    seen: set[str] = set()
    size = 0
    for item in items:
        key = item.strip().lower()
        if not key or key in seen:
            continue
        size += len(item) + 3  # " . " between items, as field_text joins them
        if size > limit:
            break
        seen.add(key)
        out.append(item.strip())
    return out


def current_profile(
    server: ServerRecord, tools: Sequence[ToolRecord], profile: ServerProfile | None
) -> ServerProfile | None:
    """The profile when it was made from exactly this server and these (cleared) tools, else None: a
    profile made before a tool was held may carry that tool's words."""
    if profile is None:
        return None
    made_from = profile_hash(server.name, server.description, (t.content_hash for t in tools))
    return profile if profile.profile_hash == made_from else None


def server_embedding_text(server: ServerRecord, tools: Sequence[ToolRecord]) -> str:
    """What a server document's vector stands for: the server's name, the start of its description and
    its tools' names."""
    head = split_identifiers(server.name)
    description = _server_text(server)[:MAX_VECTOR_DESCRIPTION_CHARS].strip()
    text = f"{head}: {description}" if description else head
    if tools:
        text += " Tools: " + ", ".join(split_identifiers(t.name) for t in tools)
    return text[:MAX_SERVER_VECTOR_CHARS]


def build_server_document(
    server: ServerRecord,
    tools: Sequence[ToolRecord],
    enrichments: Sequence[ToolEnrichment | None] = (),
    profile: ServerProfile | None = None,
) -> ToolDocument:
    """A server's search document from its record and its cleared ``tools`` (with their enrichments,
    in the same order; one made from another version of its tool is left out) and its profile (used
    only when made from these very tools). Every field is capped, so a server of 300 tools stays
    bounded."""
    actions = (
        pair
        for tool, enrichment in zip(tools, enrichments, strict=False)
        if enrichment is not None and enrichment.tool_hash == tool.content_hash
        for pair in enrichment.action_entities
    )
    fresh = current_profile(server, tools, profile)
    fields: dict[str, str | list[str]] = {
        "server_name": split_identifiers(server.name),
        "server_description": _server_text(server),
        "tags": capped(_tags(server)),
        "tool_names": capped(split_identifiers(t.name) for t in tools),
        "tool_descriptions": capped(first_sentence(t.description) for t in tools),
        "actions": capped(actions),
        "domain": "" if fresh is None else fresh.domain[:MAX_FIELD_CHARS],
        "keywords": [] if fresh is None else capped([*fresh.semantic_keywords, *fresh.primary_capabilities]),
    }
    text = server_embedding_text(server, tools)
    return ToolDocument(
        id=server.name,
        server=server.name,
        name=server.name,
        fields=fields,
        text_hash=sha256_of([SERVER_DOCUMENT_VERSION, fields, text]),
        kind="server",
    )


def build_documents(
    store: CatalogStore, servers: Collection[str] | None = None
) -> tuple[list[ToolDocument], dict[str, str]]:
    """Every cleared tool's document (held tools stay out of the index), or those of ``servers`` only,
    and the text each one's vector is made from (by document id)."""
    return _tool_documents(read_catalog(store, servers))


def build_server_documents(
    store: CatalogStore, servers: Collection[str] | None = None
) -> tuple[list[ToolDocument], dict[str, str]]:
    """One document per server (or per one of ``servers``), made from the server record and its cleared
    tools only (a held tool's text never reaches the index), and the text each one's vector is made
    from (by server name)."""
    return _server_documents(read_catalog(store, servers))


def _tool_documents(catalog: Catalog) -> tuple[list[ToolDocument], dict[str, str]]:
    docs: list[ToolDocument] = []
    texts: dict[str, str] = {}
    for tool in catalog.tools:
        server = catalog.servers[tool.server]
        doc = build_document(tool, server, catalog.enrichments.get(tool.id))
        docs.append(doc)
        texts[doc.id] = embedding_text(tool, server)
    return docs, texts


def _server_documents(catalog: Catalog) -> tuple[list[ToolDocument], dict[str, str]]:
    by_server: dict[str, list[ToolRecord]] = defaultdict(list)
    for tool in catalog.tools:
        by_server[tool.server].append(tool)
    docs: list[ToolDocument] = []
    texts: dict[str, str] = {}
    for name, server in catalog.servers.items():
        tools = by_server.get(name, [])
        enrichments = [catalog.enrichments.get(t.id) for t in tools]
        doc = build_server_document(server, tools, enrichments, catalog.profiles.get(name))
        docs.append(doc)
        texts[doc.id] = server_embedding_text(server, tools)
    return docs, texts


def index_catalog(
    store: CatalogStore,
    backend: SearchBackend,
    embedder: Embedder,
    *,
    rebuild: bool = False,
    servers_changed: Collection[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Bring the backend in line with the catalog store, tool and server documents alike; only changed
    documents are embedded and written. ``servers_changed`` (the servers a write touched) limits the
    work to their documents: the rest of the index is taken as current."""
    started = time.perf_counter()
    scope = None if rebuild or servers_changed is None else set(servers_changed)
    catalog = read_catalog(store, scope)
    tools, tool_texts = _tool_documents(catalog)
    servers, server_texts = _server_documents(catalog)
    summary = IndexSummary(documents=len(tools), servers_indexed=len(servers), left_out=catalog.left_out)
    # only the documents of the servers in scope are compared
    indexed = {} if rebuild else indexed_ids(backend, scope)
    indexed_servers = {} if rebuild else indexed_ids(backend, scope, "servers")
    changed = [d for d in tools if indexed.get(d.id) != d.text_hash]
    changed_servers = [d for d in servers if indexed_servers.get(d.id) != d.text_hash]
    if scope is not None:  # the documents outside the changed servers are there and unchanged
        summary.documents += backend.count() - len(indexed)
        summary.servers_indexed += backend.count(target="servers") - len(indexed_servers)
    summary.unchanged = summary.documents - len(changed)
    summary.servers_unchanged = summary.servers_indexed - len(changed_servers)
    keys = [sha256_of([embedder.model_id, tool_texts[d.id]]) for d in changed]
    server_keys = [sha256_of([embedder.model_id, server_texts[d.id]]) for d in changed_servers]
    texts = {
        **dict(zip(keys, (tool_texts[d.id] for d in changed), strict=True)),
        **dict(zip(server_keys, (server_texts[d.id] for d in changed_servers), strict=True)),
    }
    cached = store.get_vectors(embedder.model_id, texts)
    summary.vectors_from_cache = sum(1 for k in keys if k in cached)
    fresh = _embed(embedder, {k: t for k, t in texts.items() if k not in cached}, progress)
    if fresh:
        store.put_vectors(embedder.model_id, fresh)
    summary.embedded = len(set(keys) & fresh.keys())
    summary.servers_embedded = len(set(server_keys) & fresh.keys() - set(keys))
    vectors = {**cached, **fresh}
    if changed or changed_servers:
        summary.errors, server_errors = upsert_documents(
            backend,
            _with_vectors(changed, keys, vectors),
            _with_vectors(changed_servers, server_keys, vectors),
        )
        summary.written = len(changed) - len(summary.errors)
        summary.servers_written = len(changed_servers) - len(server_errors)
        summary.errors.update({f"server:{name}": error for name, error in server_errors.items()})
    current = {d.id for d in tools}
    gone = [i for i in (backend.ids() if rebuild else indexed) if i not in current]
    if gone:
        summary.removed = backend.delete(gone)
    current_servers = {d.id for d in servers}
    indexed_servers = backend.ids(target="servers") if rebuild else indexed_servers
    gone_servers = [i for i in indexed_servers if i not in current_servers]
    if gone_servers:
        summary.servers_removed = backend.delete(gone_servers, target="servers")
    summary.seconds = round(time.perf_counter() - started, 3)
    logger.info("indexed: %s", summary.model_dump())
    warn_left_out(summary.left_out)
    return summary


def warn_left_out(left_out: dict[str, str]) -> None:
    if left_out:
        names = ", ".join(map(repr, list(left_out)[:10]))
        logger.warning("left out of the index, their names break the naming rule: %s (see left_out)", names)


def _embed(
    embedder: Embedder, texts: dict[str, str], progress: Callable[[int, int], None] | None
) -> dict[str, np.ndarray]:
    """The vectors of ``texts`` (by vector key), embedded in batches of 256."""
    keys = list(texts)
    fresh: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), 256):
        chunk = keys[start : start + 256]
        for key, vector in zip(chunk, embedder.embed_documents([texts[k] for k in chunk]), strict=True):
            fresh[key] = vector
        if progress is not None:
            progress(min(start + 256, len(keys)), len(keys))
    return fresh


def _with_vectors(
    docs: Sequence[ToolDocument], keys: Sequence[str], vectors: dict[str, np.ndarray]
) -> list[ToolDocument]:
    return [d.model_copy(update={"vector": vectors[k].tolist()}) for d, k in zip(docs, keys, strict=True)]


def cached_tool_vectors(store: CatalogStore, model_id: str) -> dict[str, np.ndarray]:
    """Each tool's vector as the index holds it, read from the store's vector cache (tools whose text
    was never embedded are left out)."""
    _, texts = build_documents(store)
    keys = {tool_id: sha256_of([model_id, text]) for tool_id, text in texts.items()}
    cached = store.get_vectors(model_id, keys.values())
    return {tool_id: cached[key] for tool_id, key in keys.items() if key in cached}
