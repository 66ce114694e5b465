"""The unicode check: characters a person cannot see in a definition, always a reason to quarantine.

Counted: what ``text.invisible_chars`` lists (format characters: zero-width, bidirectional controls,
tag characters; control characters; variation selectors; fillers) and private-use characters, which
render as nothing or as a font's private glyph. A tag-character run is decoded: its ASCII goes into
the reason, since that is the hidden sentence a model reads.

``check_confusables``: words that mix Latin letters with Cyrillic or Greek look-alikes ("іgnore" with a
Cyrillic і), a flag.

Not counted, because ordinary text needs them and they carry nothing: a variation selector right
after a symbol (the U+FE0F that makes ⚠ an emoji), a zero-width joiner between two symbols (emoji
sequences such as woman + U+200D + laptop), zero-width (non-)joiners between letters of scripts that
use them (Persian, Indic), tag characters inside an emoji flag sequence (U+1F3F4 + lower-case tags +
U+E007F: the flags of England, Scotland and Wales), and a byte-order mark that opens a text.
"""

from __future__ import annotations

import unicodedata

from tool_selector.trust.findings import Finding, mixed_words, quote
from tool_selector.trust.text import hidden_tag_text, invisible_chars, is_tag

_VS = frozenset(chr(c) for c in range(0xFE00, 0xFE10))
_JOINERS = frozenset("\u200c\u200d")
_BLACK_FLAG, _CANCEL_TAG = "\U0001f3f4", "\U000e007f"
_SHOWN = 6


def _symbol(char: str) -> bool:
    return not char.isascii() and unicodedata.category(char) in ("So", "Sk", "Sm", "Mn")


def _joining_letter(char: str) -> bool:
    return char.isalpha() and not char.isascii() and ord(char) >= 0x0600


def _emoji_flag_tags(text: str, index: int) -> int:
    """The length of the tag run that starts at ``index`` when it completes an emoji flag, else 0."""
    if index == 0 or text[index - 1] != _BLACK_FLAG:
        return 0
    end = index
    while end < len(text) and is_tag(text[end]) and text[end] != _CANCEL_TAG:
        end += 1
    run = text[index:end]
    closed = end < len(text) and text[end] == _CANCEL_TAG and 0 < len(run) <= 7
    if closed and all(c.isalnum() and not c.isupper() for c in hidden_tag_text(run)):
        return len(run) + 1
    return 0


def _allowed(text: str, index: int) -> bool:
    char = text[index]
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if char == "\ufeff":
        return index == 0
    if char in _VS:
        return bool(before) and _symbol(before) and before not in _VS
    if char in _JOINERS:
        both_symbols = bool(before and after) and _symbol(before) and _symbol(after)
        return both_symbols or (_joining_letter(before) and _joining_letter(after))
    return False


def hidden_characters(raw: str) -> tuple[list[str], str]:
    """The hidden characters of ``raw`` (each once, in order) and the ASCII its tag characters spell."""
    if raw.isascii() and raw.isprintable():
        return [], ""
    suspects = set(invisible_chars(raw)) | {c for c in set(raw) if unicodedata.category(c) == "Co"}
    if not suspects:
        return [], ""
    found: dict[str, None] = {}
    tags: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char in suspects:
            skip = _emoji_flag_tags(raw, index) if is_tag(char) else 0
            if skip:
                index += skip
                continue
            if not _allowed(raw, index):
                found[char] = None
                if is_tag(char):
                    tags.append(char)
        index += 1
    return list(found), hidden_tag_text("".join(tags))


def check_hidden_characters(where: str, raw: str) -> list[Finding]:
    chars, spelled = hidden_characters(raw)
    if not chars:
        return []
    plain = [c for c in chars if not is_tag(c)]
    named = [f"U+{ord(c):04X}" for c in plain[:_SHOWN]]
    if len(plain) > _SHOWN:
        named.append(f"{len(plain) - _SHOWN} more")
    if len(plain) < len(chars):
        named.append("tag characters (U+E0000-U+E007F)")
    reason = f"invisible characters: {', '.join(named)} in {where}"
    if spelled:
        spelled = spelled if len(spelled) <= 120 else spelled[:119] + "…"
        reason += f"; the tag characters spell {spelled!r}"
    return [Finding("unicode", "hold", reason)]


def check_confusables(where: str, raw: str) -> list[Finding]:
    """A word that mixes Latin letters with Cyrillic or Greek look-alikes is spelled to fool a reader
    or a filter; real catalogs have none. A flag (the rules read the word folded to Latin)."""
    words = mixed_words(raw)
    if not words:
        return []
    shown = ", ".join(quote(w, 30) for w in dict.fromkeys(words[:3]))
    reason = f"words that mix Latin with look-alike letters: {shown} in {where}"
    return [Finding("confusable", "flag", reason)]
