"""Stage 2, enrich: a server's tools (with its profile) -> one validated enrichment per tool.

Each tool's enrichment is cached by tool hash + profile hash + enricher + model + prompt version, and
that key's hash is the stored ``enrichment_hash``: a tool whose hash is unchanged is not enriched
again. Action-entity pairs also come from the tool's schema (an ``operation``/``action`` enum of
create/update/delete on a tool about issues gives "create issue", "update issue", "delete issue").
The server profile's keywords are merged into every tool's keywords.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from semantic_enrichment.base import Enricher, EnrichmentDraft
from semantic_enrichment.cache import EnrichmentCache, cache_key
from semantic_enrichment.words import singular
from tool_selector.core.errors import LLMError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import ServerProfile, ServerSpec, ToolEnrichment, ToolSpec
from tool_selector.search.text import split_identifiers

logger = logging.getLogger(__name__)

ACTION_PROPERTIES = frozenset({"operation", "action", "op", "method", "command", "verb", "task", "mode"})
GENERIC_NAME_WORDS = frozenset(
    {
        "manage",
        "handle",
        "crud",
        "tool",
        "tools",
        "api",
        "ops",
        "operation",
        "operations",
        "action",
        "actions",
        "do",
        "run",
        "execute",
        "perform",
        "mcp",
        "server",
        "the",
        "a",
        "an",
        "of",
        "for",
        "in",
        "on",
        "by",
        "with",
    }
)
MAX_ACTION_ENTITIES = 30
MAX_KEYWORDS = 40


def enrichment_key(
    tool: ToolSpec, profile_hash: str, enricher: Enricher, tool_hash: str | None = None
) -> str:
    """The cache key of a tool's enrichment; ``tool_hash`` is ``tool.compute_hash()`` when the caller
    has it already."""
    return cache_key(
        "enrichment",
        tool.compute_hash() if tool_hash is None else tool_hash,
        profile_hash,
        enricher.kind,
        enricher.model,
        enricher.prompt_version,
    )


def enrichment_hash_of(
    tool: ToolSpec, profile_hash: str, enricher: Enricher, tool_hash: str | None = None
) -> str:
    return sha256_of(enrichment_key(tool, profile_hash, enricher, tool_hash))


def tool_entity(tool: ToolSpec) -> str:
    """The thing a tool acts on, from its name: ``manage_issues`` -> ``issue``."""
    words = [w for w in split_identifiers(tool.name).lower().split() if w not in GENERIC_NAME_WORDS]
    return " ".join(singular(w) for w in words[-2:])


def _action_enums(schema: dict[str, Any]) -> Iterable[list[str]]:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return
    for name, spec in props.items():
        key = str(name).lower()
        if not isinstance(spec, dict):
            continue
        if key in ACTION_PROPERTIES or key.endswith(("_action", "_operation", "action", "operation")):
            values = spec.get("enum")
            if values is None and isinstance(spec.get("items"), dict):
                values = spec["items"].get("enum")
            if isinstance(values, list) and 0 < len(values) <= 25:
                yield [str(v) for v in values if isinstance(v, str | int)]


def schema_action_entities(tool: ToolSpec) -> list[str]:
    """Action-entity pairs from an operation/action enum in the tool's input schema."""
    entity = tool_entity(tool)
    pairs: list[str] = []
    for values in _action_enums(tool.input_schema):
        for value in values:
            verb = split_identifiers(value).lower().strip()
            if not verb or len(verb.split()) > 3:
                continue
            pair = verb if not entity or entity in verb else f"{verb} {entity}"
            pairs.append(pair[:80])
    return pairs


def _dedupe(items: Iterable[str], limit: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        norm = item.strip().lower()
        if norm and norm not in seen:
            seen.add(norm)
            out.append(item.strip())
        if len(out) >= limit:
            break
    return out


def _record(
    tool: ToolSpec,
    draft: EnrichmentDraft,
    profile: ServerProfile,
    enricher: Enricher,
    now: datetime,
    include_server_keywords: bool,
    tool_hash: str,
) -> ToolEnrichment:
    keywords = list(draft.semantic_keywords) + (profile.semantic_keywords if include_server_keywords else [])
    return ToolEnrichment(
        tool_id=tool.id,
        enhanced_description=draft.enhanced_description,
        action_entities=_dedupe([*schema_action_entities(tool), *draft.action_entities], MAX_ACTION_ENTITIES),
        semantic_keywords=_dedupe(keywords, MAX_KEYWORDS),
        use_cases=list(draft.use_cases),
        mcp_server_name=tool.server,
        server_domain=profile.domain,
        tool_hash=tool_hash,
        enrichment_hash=enrichment_hash_of(tool, profile.profile_hash, enricher, tool_hash),
        enricher=enricher.kind,
        model=enricher.model,
        prompt_version=enricher.prompt_version,
        last_updated=now,
    )


class EnrichOutcome(BaseModel):
    enrichments: list[ToolEnrichment] = Field(default_factory=list)
    cache_hits: int = 0
    fallbacks: int = 0
    errors: list[str] = Field(default_factory=list)


def enrich_server_tools(
    server: ServerSpec,
    profile: ServerProfile,
    tools: Sequence[ToolSpec],
    enricher: Enricher,
    cache: EnrichmentCache,
    *,
    now: datetime,
    fallback: Enricher | None = None,
    include_server_keywords: bool = True,
    tool_hashes: Mapping[str, str] | None = None,
) -> EnrichOutcome:
    """Enrich these tools of one server. Cached drafts are reused; the rest go to the enricher in one
    call (it may batch further). Tools the enricher could not do fall back (when a fallback is given)
    and are reported; a failure without a fallback raises LLMError. ``tool_hashes`` (by tool id) are
    the tools' ``compute_hash()`` when the caller has them already."""
    outcome = EnrichOutcome()
    known = tool_hashes or {}
    hashes = {t.name: known.get(t.id) or t.compute_hash() for t in tools}
    keys = {t.name: enrichment_key(t, profile.profile_hash, enricher, hashes[t.name]) for t in tools}
    drafts: dict[str, EnrichmentDraft] = {}
    for tool in tools:
        hit = cache.get(keys[tool.name], EnrichmentDraft)
        if hit is not None:
            drafts[tool.name] = hit
    outcome.cache_hits = len(drafts)
    missing = [t for t in tools if t.name not in drafts]
    fresh: dict[str, EnrichmentDraft] = {}
    if missing:
        try:
            fresh = enricher.enrich(server, profile, missing)
        except LLMError as exc:
            if fallback is None:
                raise
            outcome.errors.append(f"{server.name}: {exc}")
    for tool in missing:
        draft = fresh.get(tool.name)
        if draft is not None:
            try:
                draft = EnrichmentDraft.model_validate(draft.model_dump())
            except ValidationError as exc:
                outcome.errors.append(
                    f"{tool.id}: the enricher's answer did not validate: {exc.error_count()} errors"
                )
                draft = None
        if draft is not None:
            cache.set(keys[tool.name], draft)
            drafts[tool.name] = draft
    by_name = {t.name: t for t in tools}
    for name, draft in drafts.items():
        outcome.enrichments.append(
            _record(by_name[name], draft, profile, enricher, now, include_server_keywords, hashes[name])
        )
    left = [t for t in tools if t.name not in drafts]
    if left and fallback is not None:
        if not outcome.errors:
            outcome.errors.append(f"{server.name}: the enricher returned nothing for {len(left)} tools")
        backup = fallback.enrich(server, profile, left)
        for tool in left:
            if tool.name in backup:
                draft, digest = backup[tool.name], hashes[tool.name]
                outcome.enrichments.append(
                    _record(tool, draft, profile, fallback, now, include_server_keywords, digest)
                )
                outcome.fallbacks += 1
    elif left:
        raise LLMError(
            f"The {enricher.kind} enricher returned no usable enrichment for {len(left)} tools of "
            f"{server.name!r} (e.g. {left[0].name!r}).",
            hint="Retry the sync; set TOOL_SELECTOR_SYNC__ENRICHER=offline to enrich without the API.",
        )
    return outcome
