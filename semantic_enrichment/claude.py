"""The Claude profiler and enricher (stages 1-2 through ``ClaudeClient``; no ``anthropic`` import here).

The profiler makes one call per server. The enricher sends a server's tools in batches (15 by
default) so that a sync of hundreds of servers stays at a few calls per server. A batch answer is
parsed leniently and each item validated on its own into an ``EnrichmentDraft``: an invalid item loses
that tool only (it is absent from the result, so the caller falls back or reports it); names that
were not in the batch are ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import ValidationError

from semantic_enrichment.base import EnrichmentDraft, ProfileDraft
from semantic_enrichment.claude_client import ClaudeClient
from semantic_enrichment.prompts import (
    ENRICH_PROMPT_VERSION,
    ENRICH_SYSTEM,
    PROFILE_PROMPT_VERSION,
    PROFILE_SYSTEM,
    EnrichBatchAnswer,
    EnrichedTool,
    build_enrich_prompt,
    build_profile_prompt,
)
from semantic_enrichment.vetting import poisoned
from tool_selector.core.errors import LLMError
from tool_selector.core.models import EnricherName, ServerProfile, ServerSpec, ToolSpec

logger = logging.getLogger(__name__)

PROFILE_MAX_TOKENS = 2048
ENRICH_BASE_TOKENS = 512
ENRICH_TOKENS_PER_TOOL = 700
ENRICH_MAX_TOKENS = 16000
DEFAULT_BATCH_SIZE = 15
_ABORT_REASONS = frozenset({"rejected", "exhausted"})  # later batches would fail the same way


class ClaudeProfiler:
    """Stage 1 with Claude: one structured call per server."""

    kind: EnricherName = "claude"

    def __init__(self, client: ClaudeClient, *, max_tokens: int = PROFILE_MAX_TOKENS) -> None:
        self.client = client
        self.model = client.model
        self.prompt_version = PROFILE_PROMPT_VERSION
        self._max_tokens = max_tokens

    def profile(self, server: ServerSpec, tools: Sequence[ToolSpec]) -> ProfileDraft:
        draft = self.client.parse(
            PROFILE_SYSTEM, build_profile_prompt(server, tools), ProfileDraft, max_tokens=self._max_tokens
        )
        reasons = poisoned(draft)
        if reasons:  # the fallback profiler's profile stands in for it (semantic_enrichment/vetting.py)
            raise LLMError(
                f"The profile Claude wrote for {server.name!r} looks like a prompt injection: {reasons[0]}.",
                hint="Review the server's tools (`tool-selector scan`); the offline profile is used.",
                reason="poisoned",
                server=server.name,
            )
        return draft


class ClaudeEnricher:
    """Stage 2 with Claude: a server's tools in batches of ``batch_size`` per call."""

    kind: EnricherName = "claude"

    def __init__(self, client: ClaudeClient, *, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.client = client
        self.model = client.model
        self.prompt_version = ENRICH_PROMPT_VERSION
        self.batch_size = batch_size

    def enrich(
        self, server: ServerSpec, profile: ServerProfile, tools: Sequence[ToolSpec]
    ) -> dict[str, EnrichmentDraft]:
        """Drafts by tool name. A failed batch leaves its tools out; LLMError when no batch succeeded."""
        drafts: dict[str, EnrichmentDraft] = {}
        failures: list[LLMError] = []
        batches = [list(tools[i : i + self.batch_size]) for i in range(0, len(tools), self.batch_size)]
        for number, batch in enumerate(batches, 1):
            try:
                drafts.update(self._enrich_batch(server, profile, batch))
            except LLMError as exc:
                failures.append(exc)
                logger.warning(
                    "enriching batch %d/%d of %s (%d tools) failed: %s",
                    number,
                    len(batches),
                    server.name,
                    len(batch),
                    exc,
                )
                if exc.details.get("reason") in _ABORT_REASONS:
                    break
        if failures and not drafts:
            raise failures[0]
        return drafts

    def _enrich_batch(
        self, server: ServerSpec, profile: ServerProfile, batch: list[ToolSpec]
    ) -> dict[str, EnrichmentDraft]:
        max_tokens = min(ENRICH_MAX_TOKENS, ENRICH_BASE_TOKENS + ENRICH_TOKENS_PER_TOOL * len(batch))
        answer = self.client.parse(
            ENRICH_SYSTEM,
            build_enrich_prompt(server, profile, batch),
            EnrichBatchAnswer,
            max_tokens=max_tokens,
        )
        wanted = {t.name for t in batch}
        drafts: dict[str, EnrichmentDraft] = {}
        for position, raw in enumerate(answer.tools):
            try:
                item = EnrichedTool.model_validate(raw)
            except ValidationError as exc:
                name = raw.get("tool_name") if isinstance(raw, dict) else None
                logger.warning(
                    "Claude's item %d for %s (tool %r) does not validate: %d errors",
                    position,
                    server.name,
                    name if isinstance(name, str) else None,
                    exc.error_count(),
                )
                continue
            if item.tool_name not in wanted:
                logger.warning("Claude answered for a tool not in the batch of %s; ignored", server.name)
                continue
            if item.tool_name in drafts:
                continue  # the first valid item of a tool wins
            draft = EnrichmentDraft.model_validate(item.model_dump(exclude={"tool_name"}))
            reasons = poisoned(draft)
            if reasons:  # left out: the caller's fallback enriches it (semantic_enrichment/vetting.py)
                logger.warning(
                    "Claude's enrichment of %s::%s was refused: %s", server.name, item.tool_name, reasons[0]
                )
                continue
            drafts[item.tool_name] = draft
        return drafts
