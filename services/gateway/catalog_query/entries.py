"""The catalog view's records: each server and tool with its original fields and its text pre-normalised
for matching (``semantic_enrichment.words.normalise``, the forms the enricher writes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from semantic_enrichment.profiling import compute_profile_hash
from semantic_enrichment.words import normalise
from tool_selector.core.models import DiscoveryStatus, ServerProfile, ServerRecord, ToolEnrichment, ToolRecord
from tool_selector.index.build import server_tags
from tool_selector.search.text import split_identifiers

MATCH_DESCRIPTION_CHARS = 1000  # only the start of a description is searched for words


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool as the view keeps it: the original fields plus pre-normalised text for matching."""

    server: str
    name: str
    description: str
    properties: tuple[str, ...]
    required: tuple[str, ...]
    action_entities: tuple[str, ...]
    pairs: tuple[str, ...]  # normalised action_entities
    name_text: str
    description_text: str
    all_text: str  # everything above, for a quick first filter


@dataclass(frozen=True, slots=True)
class ServerEntry:
    record: ServerRecord
    profile: ServerProfile | None
    profile_current: bool
    discovery: DiscoveryStatus | None
    tools: tuple[ToolEntry, ...]
    tags: tuple[str, ...]
    strong_text: str  # name, tags, domain, profile keywords / capabilities / entities
    weak_text: str  # description
    domain_text: str  # the profile's domain and the metadata categories

    @property
    def domain(self) -> str:
        return self.profile.domain if self.profile else ", ".join(t.replace("-", " ") for t in self.tags)

    def keywords(self) -> list[str]:
        extra = self.profile.semantic_keywords if self.profile else []
        return list(dict.fromkeys([*self.tags, *extra]))[:10]


def plain(text: str) -> str:
    """Lowercase, dashes and underscores as spaces, whitespace collapsed (how domains are compared)."""
    return " ".join(text.replace("-", " ").replace("_", " ").lower().split())


def _both(text: str) -> str:
    """The normalised text, and again without splitting camel case ("GitHub" is "git hub" and "github")."""
    split, whole = normalise(text), normalise(text.lower())
    return split if split == whole else f"{split}|{whole}"


def _lowered(text: str) -> str:
    split, whole = split_identifiers(text).lower(), text.lower()
    return split if split == whole else f"{split} | {whole}"


def tool_entry(tool: ToolRecord, enrichment: ToolEnrichment | None) -> ToolEntry:
    props = tool.input_schema.get("properties")
    required = tool.input_schema.get("required")
    pairs = tuple(enrichment.action_entities) if enrichment else ()
    normalised = tuple(normalise(p) for p in pairs)
    name_text = _both(tool.name)
    description_text = _both(tool.description[:MATCH_DESCRIPTION_CHARS])
    return ToolEntry(
        server=tool.server,
        name=tool.name,
        description=tool.description,
        properties=tuple(str(p) for p in props) if isinstance(props, dict) else (),
        required=tuple(str(r) for r in required) if isinstance(required, list) else (),
        action_entities=pairs,
        pairs=normalised,
        name_text=name_text,
        description_text=description_text,
        all_text="|".join((*normalised, name_text, description_text)),
    )


def server_entry(
    record: ServerRecord,
    tools: list[ToolRecord],
    profile: ServerProfile | None,
    discovery: DiscoveryStatus | None,
    enrichments: Mapping[str, ToolEnrichment],
) -> ServerEntry:
    tags = tuple(dict.fromkeys(server_tags(record)))
    strong = [record.name, *tags]
    if profile is not None:
        strong += [profile.domain, *profile.semantic_keywords, *profile.primary_capabilities]
        strong += profile.entity_types
    return ServerEntry(
        record=record,
        profile=profile,
        profile_current=profile is not None and profile.profile_hash == compute_profile_hash(record, tools),
        discovery=discovery,
        tools=tuple(tool_entry(t, enrichments.get(t.id)) for t in tools),
        tags=tags,
        strong_text=" | ".join(_lowered(s) for s in strong),
        weak_text=_lowered(record.description),
        domain_text=" | ".join(plain(d) for d in (profile.domain if profile else "", *tags)),
    )
