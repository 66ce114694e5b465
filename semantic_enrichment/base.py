"""The seams of stages 1-2: what a profiler and an enricher produce, and the protocols they follow.

A *draft* is what a profiler or enricher returns (Claude's structured output, or the offline
variant's). Drafts are validated here, with bounded lengths and types, before anything is cached or
stored; ``semantic_enrichment.profiling`` and ``semantic_enrichment.enrichment`` turn them into the
stored ``ServerProfile`` / ``ToolEnrichment`` records.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from tool_selector.core.models import EnricherName, ServerProfile, ServerSpec, ToolSpec

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean(text: str) -> str:
    return " ".join(_CONTROL.sub(" ", text).split())


def _clean_nonempty(text: str) -> str:
    cleaned = _clean(text)
    if not cleaned:
        raise ValueError("must not be blank")
    return cleaned


Phrase = Annotated[str, Field(min_length=1, max_length=80), AfterValidator(_clean_nonempty)]
Keyword = Annotated[str, Field(min_length=1, max_length=60), AfterValidator(_clean_nonempty)]
Sentence = Annotated[str, Field(min_length=1, max_length=240), AfterValidator(_clean_nonempty)]


class ProfileDraft(BaseModel):
    """A server profile as a profiler produces it."""

    model_config = ConfigDict(extra="forbid")

    domain: Annotated[str, Field(min_length=1, max_length=100), AfterValidator(_clean_nonempty)]
    primary_capabilities: list[Sentence] = Field(default_factory=list, max_length=12)
    entity_types: list[Keyword] = Field(default_factory=list, max_length=30)
    action_verbs: list[Keyword] = Field(default_factory=list, max_length=30)
    integration_context: Annotated[str, Field(max_length=1000), AfterValidator(_clean)] = ""
    semantic_keywords: list[Keyword] = Field(default_factory=list, max_length=40)


class EnrichmentDraft(BaseModel):
    """One tool's enrichment as an enricher produces it."""

    model_config = ConfigDict(extra="forbid")

    enhanced_description: Annotated[str, Field(max_length=1500), AfterValidator(_clean)] = ""
    action_entities: list[Phrase] = Field(default_factory=list, max_length=30)
    semantic_keywords: list[Keyword] = Field(default_factory=list, max_length=40)
    use_cases: list[Sentence] = Field(default_factory=list, max_length=8)


class Profiler(Protocol):
    """Stage 1: one server and its tools -> a profile draft. Raises LLMError when it cannot."""

    kind: EnricherName
    model: str
    prompt_version: str

    def profile(self, server: ServerSpec, tools: Sequence[ToolSpec]) -> ProfileDraft: ...


class Enricher(Protocol):
    """Stage 2: a server's tools (with its profile as context) -> drafts by tool name.

    A tool missing from the answer could not be enriched (the caller falls back or reports it);
    raises LLMError when the whole call failed.
    """

    kind: EnricherName
    model: str
    prompt_version: str

    def enrich(
        self, server: ServerSpec, profile: ServerProfile, tools: Sequence[ToolSpec]
    ) -> dict[str, EnrichmentDraft]: ...


@dataclass
class Enrichers:
    """The profiler and enricher a run uses, their offline fallbacks, and the LLM call counter."""

    profiler: Profiler
    enricher: Enricher
    fallback_profiler: Profiler | None = None
    fallback_enricher: Enricher | None = None
    llm_calls: Callable[[], int] = field(default=lambda: 0)
    close: Callable[[], None] = field(default=lambda: None)

    @property
    def kind(self) -> str:
        return self.enricher.kind
