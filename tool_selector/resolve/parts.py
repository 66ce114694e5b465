"""Split a multi-step request into its steps, so that each step can find its own tool.

"Check my balance, then send 0.05 ETH and finally post the receipt to Slack" -> three parts.
Sentences split first, then clauses on sequencing words ("then", "after that", "finally", ...) and on
", and <action verb>". Short fragments glue to the previous part; at most ``max_parts`` parts are
kept (the shortest neighbours merge). A query that does not split returns [].
"""

from __future__ import annotations

import re

MAX_PARTS = 3
MIN_WORDS = 4

_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z\"'(])|;\s*|\n+")
_VERBS = (
    "get|list|create|update|delete|send|search|find|retrieve|fetch|add|generate|check|show|post|upload|"
    "download|read|write|save|analy[sz]e|summari[sz]e|convert|calculate|run|execute|open|set|make|provide|"
    "compare|translate|schedule|book|remove|notify|store"
)
_CLAUSE = re.compile(
    r",?\s+(?:and\s+then|and\s+after\s+that|after\s+that|then|afterwards|finally|next|followed\s+by|"
    r"and\s+also|as\s+well\s+as|before\s+that)\s*,?\s+|,?\s+and\s+(?=(?:then\s+)?(?:" + _VERBS + r")\b)",
    re.IGNORECASE,
)


def split_query(text: str, *, max_parts: int = MAX_PARTS, min_words: int = MIN_WORDS) -> list[str]:
    parts: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.split(text) if s and s.strip()):
        for piece in (p.strip(" ,.") for p in _CLAUSE.split(sentence)):
            if not piece:
                continue
            if len(piece.split()) < min_words and parts:
                parts[-1] += " " + piece
            else:
                parts.append(piece)
    if len(parts) > 1 and len(parts[0].split()) < min_words:
        parts[1] = parts[0] + " " + parts[1]
        parts = parts[1:]
    while len(parts) > max_parts:
        j = min(range(len(parts) - 1), key=lambda i: len(parts[i].split()) + len(parts[i + 1].split()))
        parts[j : j + 2] = [parts[j] + " " + parts[j + 1]]
    return parts if len(parts) > 1 else []
