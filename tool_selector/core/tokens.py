"""Token counts as a Claude model would see them, offline.

The tokenizer is Anthropic's own published Claude tokenizer (``@anthropic-ai/tokenizer`` 0.0.4 on npm,
its ``claude.json`` BPE ranks, vendored in ``tool_selector/data`` with its licence) run by tiktoken.
Anthropic publishes it as accurate for its older models and an approximation for Claude 3 and
later; the savings the gateway reports are ratios of two counts made with the same tokenizer.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from functools import lru_cache
from importlib import resources

import tiktoken

TOKENIZER_NAME = "claude (legacy, @anthropic-ai/tokenizer 0.0.4)"


def _ranks(packed: str) -> dict[bytes, int]:
    """Decode the tiktoken-lite format: per line '! <first rank> <b64 token> <b64 token> ...'."""
    ranks: dict[bytes, int] = {}
    for line in packed.splitlines():
        parts = line.split(" ")
        if len(parts) < 3:
            continue
        offset = int(parts[1])
        for i, token in enumerate(parts[2:]):
            ranks[base64.b64decode(token)] = offset + i
    return ranks


@lru_cache(maxsize=1)
def claude_encoding() -> tiktoken.Encoding:
    data = json.loads(resources.files("tool_selector").joinpath("data/claude-tokenizer.json").read_text())
    return tiktoken.Encoding(
        name="claude",
        pat_str=data["pat_str"],
        mergeable_ranks=_ranks(data["bpe_ranks"]),
        special_tokens=data["special_tokens"],
    )


def count_tokens(text: str) -> int:
    """How many tokens ``text`` is (NFKC-normalised first, as the published tokenizer does)."""
    return len(claude_encoding().encode(unicodedata.normalize("NFKC", text), allowed_special="all"))
