"""Text the Claude profiler and enricher write is read by the scanner before it is kept.

What Claude writes is made from tool texts, which may carry an injection the scanner let through, and
profiles reach agents (``catalog_query profile``): a draft whose text the scanner would quarantine is
treated as a failed answer, so the deterministic offline profile or enrichment stands in for it (the
caller's fallback) and nothing of it is cached.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from tool_selector.trust.scanner import scan_text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def poisoned(draft: BaseModel) -> list[str]:
    """The scanner's reasons when it would quarantine the draft's text; empty when it may be kept."""
    text = "\n".join(s for s in _strings(draft.model_dump(mode="json")) if s.strip())
    result = scan_text(text, field="generated text")
    return result.reasons if result.held else []
