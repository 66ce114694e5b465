"""Characters a person cannot see but a model reads: found (for the scanner) and stripped (for agents).

Stripped: every format character (Unicode category Cf: zero-width spaces and joiners, bidirectional
embeddings, overrides and isolates, the word joiner, the BOM, the tag block U+E0000-U+E007F that can
spell whole hidden sentences), control characters other than tab, line feed and carriage return,
variation selectors, and the Hangul fillers that render as nothing. Stored text is never changed:
this runs on what is shown.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_KEEP_CONTROLS = frozenset("\t\n\r")
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_TAG_FIRST, _TAG_LAST = 0xE0000, 0xE007F


@lru_cache(maxsize=4096)
def _is_invisible(char: str) -> bool:
    code = ord(char)
    if char in _KEEP_CONTROLS:
        return False
    if char in _FILLERS or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True
    return unicodedata.category(char) in ("Cf", "Cc")


def invisible_chars(text: str) -> list[str]:
    """The invisible characters of ``text`` (each once, in order of first appearance)."""
    return [c for c in dict.fromkeys(text) if _is_invisible(c)]


def is_tag(char: str) -> bool:
    return _TAG_FIRST <= ord(char) <= _TAG_LAST


def hidden_tag_text(text: str) -> str:
    """The ASCII a run of Unicode tag characters spells (an "ASCII smuggling" payload), or ''."""
    return "".join(chr(ord(c) - _TAG_FIRST) for c in text if _TAG_FIRST + 0x20 <= ord(c) <= _TAG_FIRST + 0x7E)


def strip_invisible(text: str) -> str:
    """``text`` without the characters this module's docstring lists; ASCII text is returned as is
    except for control characters."""
    if text.isascii():
        if all(" " <= c < "\x7f" or c in _KEEP_CONTROLS for c in text):
            return text
        return "".join(c for c in text if (" " <= c < "\x7f") or c in _KEEP_CONTROLS)
    return "".join(c for c in text if not _is_invisible(c))


def clean_json(value: object) -> object:
    """``strip_invisible`` applied to every string of a JSON value (keys too): a schema shown to an
    agent is text as much as a description is."""
    if isinstance(value, str):
        return strip_invisible(value)
    if isinstance(value, dict):
        return {strip_invisible(str(k)): clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    return value
