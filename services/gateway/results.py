"""A proxied tool's result, bounded: what an upstream server answers reaches the agent unchanged up to
the gateway's caps, and is cut past them with a note saying so.

- Text blocks share ``gateway.max_result_chars``: the block that crosses it is cut, later ones dropped.
- Images, audio, embedded resources and resource links are counted by their size (decoded bytes of
  binary data, UTF-8 bytes of an embedded text resource, the JSON of a link) against
  ``gateway.max_result_media_bytes``; a block that would pass it is dropped.
- Structured content whose JSON is longer than ``max_result_chars`` is dropped and the result becomes
  an error result: a client that checks results against the tool's output schema refuses a result
  without structured content, while an error result it reads as text.

The note is one more text block at the end: how big the result was, the cap, and how to ask for less.
Nothing else of a result is changed (its text is the upstream's, invisible characters included: tool
results are data, not catalog text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mcp import types

NOTE_PREFIX = "[tool-selector]"


@dataclass
class _Budget:
    chars: int
    media: int
    text_total: int = 0
    text_cut: bool = False
    dropped: list[str] = field(default_factory=list)
    dropped_bytes: int = 0


def _decoded_size(data: str) -> int:
    """The byte size base64 ``data`` decodes to (without decoding it)."""
    data = data.rstrip()
    return len(data) * 3 // 4 - data[-2:].count("=")


def _media_bytes(block: types.ContentBlock) -> int:
    if isinstance(block, types.ImageContent | types.AudioContent):
        return _decoded_size(block.data)
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return len(resource.text.encode("utf-8", "surrogatepass"))
        return _decoded_size(resource.blob)
    return len(block.model_dump_json())


def _kind(block: types.ContentBlock) -> str:
    return {"image": "image", "audio": "audio clip", "resource": "embedded resource"}.get(
        block.type, "resource link"
    )


def _fit(block: types.ContentBlock, budget: _Budget) -> types.ContentBlock | None:
    """The block as it fits in what is left of the budget (cut or None when it does not)."""
    if isinstance(block, types.TextContent):
        budget.text_total += len(block.text)
        room = budget.chars
        budget.chars = max(0, room - len(block.text))
        if len(block.text) <= room:
            return block
        budget.text_cut = True
        return block.model_copy(update={"text": block.text[:room]}) if room > 0 else None
    size = _media_bytes(block)
    if size <= budget.media:
        budget.media -= size
        return block
    budget.dropped.append(_kind(block))
    budget.dropped_bytes += size
    return None


def _note(budget: _Budget, max_chars: int, max_media: int, structured: int) -> str:
    parts = []
    if budget.text_cut:
        parts.append(
            f"its text was {budget.text_total:,} characters, over the gateway's limit of {max_chars:,} "
            f"(gateway.max_result_chars): only the first {max_chars:,} are shown"
        )
    if budget.dropped:
        counts = {k: budget.dropped.count(k) for k in dict.fromkeys(budget.dropped)}
        what = ", ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in counts.items())
        parts.append(
            f"{what} ({budget.dropped_bytes:,} bytes) left out, over the gateway's limit of {max_media:,} "
            "bytes of non-text content (gateway.max_result_media_bytes)"
        )
    if structured:
        parts.append(
            f"its structured content ({structured:,} characters as JSON, over the limit of {max_chars:,}) "
            "was left out, so the result is marked as an error"
        )
    return (
        f"{NOTE_PREFIX} This result was cut: " + "; ".join(parts) + ". Ask the tool for less (a narrower "
        "query, a filter, a page, or a limit or offset argument if it has one) and call it again; if the "
        "whole result is needed, tell the user (the operator can raise the limit)."
    )


def capped_result(
    result: types.CallToolResult, *, max_chars: int, max_media_bytes: int
) -> types.CallToolResult:
    """``result`` within the caps (the same object when it already is); see the module docstring."""
    budget = _Budget(chars=max_chars, media=max_media_bytes)
    content = [b for b in (_fit(block, budget) for block in result.content) if b is not None]
    structured = 0
    if result.structured_content is not None:
        size = len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
        structured = size if size > max_chars else 0
    if not budget.text_cut and not budget.dropped and not structured:
        return result
    note = types.TextContent(type="text", text=_note(budget, max_chars, max_media_bytes, structured))
    update: dict[str, object] = {"content": [*content, note]}
    if structured:
        update |= {"structured_content": None, "is_error": True}
    return result.model_copy(update=update)
