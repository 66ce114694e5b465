"""What one check of the scanner found, and the text the checks read.

A ``Finding`` names its check (one family of evidence: ``markup``, ``override``, ``exfiltration``, ...),
its strength (``hold``: enough on its own to quarantine; ``flag``: a weak signal) and a short reason a
person reads. A ``Field`` is a definition as the checks read it: its pieces (the description; every key
and string value of the schemas) with invisible characters removed, Unicode NFKC-normalised (full-width
letters become ASCII), look-alike Cyrillic and Greek letters of mixed words made Latin, and white space
collapsed, so that "ig" + U+200B + "nore", full-width "ignore" and "іgnore" with a Cyrillic і all read as
"ignore". The pieces are joined with a paragraph separator, which ends a sentence for every rule, and
each remembers where it came from for the reason. A ``Rule`` is a pattern behind a cheap gate (words
the text must hold), tried only where its words occur when it is ``anchored``, and read for at most
``MAX_MATCHES`` matches: the checks stay linear on any input.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal, NamedTuple

from tool_selector.core.names import LOOKALIKE_FROM, LOOKALIKES
from tool_selector.trust.text import strip_invisible

Strength = Literal["hold", "flag"]
PIECE_END = "\u2029"  # joins the pieces of one field; a sentence boundary for every rule
_SPACES = re.compile(r"\s+")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SENTENCE_ENDS = (". ", "! ", "? ", "; ", PIECE_END)
SNIPPET = 70
MAX_MATCHES = 200  # matches of one rule looked at per text
SENTENCE_WINDOW = 1000  # a "sentence" longer than this on either side of a match is cut there
_MAX_DEPTH = 40  # deeper than any real schema; the size caps refuse such a definition anyway
# JSON Schema's own keys: read as keys they are not the author's words (property names always are)
_SCHEMA_KEYWORDS = frozenset(
    "type description title properties required items default enum examples format $schema $ref $id $defs "
    "definitions additionalProperties anyOf oneOf allOf not minimum maximum minLength maxLength pattern "
    "minItems maxItems uniqueItems const nullable exclusiveMinimum exclusiveMaximum multipleOf".split()
)


@dataclass(frozen=True)
class Finding:
    check: str
    strength: Strength
    reason: str


class Rule(NamedTuple):
    """A pattern, and the lower-case words one of which the text must hold for it to be tried.

    ``anchored``: every match starts with one of the words, so the pattern is tried only where they
    occur (found by plain substring search, far cheaper than a regex scan of the whole text)."""

    gate: tuple[str, ...]
    pattern: re.Pattern[str]
    anchored: bool = False

    def finditer(self, field: Field) -> Iterator[re.Match[str]]:
        """The first ``MAX_MATCHES`` matches: a text that repeats a phrase is not read endlessly."""
        if not field.text or not field.has(*self.gate):
            return iter(())
        starts = field.positions(self.gate) if self.anchored else None
        if starts is None:
            return islice(self.pattern.finditer(field.text), MAX_MATCHES)
        return islice((m for m in (self.pattern.match(field.text, p) for p in starts) if m), MAX_MATCHES)

    def search(self, field: Field) -> re.Match[str] | None:
        return next(self.finditer(field), None)


def prepare(raw: str) -> str:
    """``raw`` as the rules read it: visible characters only, NFKC, single spaces."""
    if raw.isascii():
        if raw.isidentifier():  # most keys and enum values: nothing to do
            return raw
        text = strip_invisible(raw) if _CONTROLS.search(raw) else raw
    else:
        text = fold_confusables(unicodedata.normalize("NFKC", strip_invisible(raw)))
    return _SPACES.sub(" ", text).strip()


# Cyrillic and Greek letters that look like Latin ones: the naming rule's table (core/names.py)
_LOOKALIKES = LOOKALIKES
_LOOKALIKE_CHARS = frozenset(LOOKALIKE_FROM)
_WORDS = re.compile(r"\w+")


def mixed_words(text: str) -> list[str]:
    """The words of ``text`` that mix Latin letters with Cyrillic or Greek look-alikes ("іgnore")."""
    if text.isascii() or _LOOKALIKE_CHARS.isdisjoint(text):
        return []
    return [
        w
        for w in _WORDS.findall(text)
        if not _LOOKALIKE_CHARS.isdisjoint(w) and any(c.isascii() and c.isalpha() for c in w)
    ]


def fold_confusables(text: str) -> str:
    """``text`` with the look-alike letters of mixed words made Latin, so that rules read the word."""
    for word in mixed_words(text):
        text = text.replace(word, word.translate(_LOOKALIKES))
    return text


def words(spec: str) -> tuple[str, ...]:
    """A gate's words written as one string: ``words("ssh|id_|private key")``."""
    return tuple(spec.split("|"))


def report(
    check: str, strength: Strength, what: str, field: Field, said: str, position: int
) -> list[Finding]:
    """The one finding of a check: what it found, a quotation, and where."""
    return [Finding(check, strength, f"{what}: {quote(said)} in {field.where(position)}")]


def quote(text: str, limit: int = SNIPPET) -> str:
    """A short, single-line quotation of ``text`` for a reason."""
    text = _SPACES.sub(" ", text.replace(PIECE_END, " ")).strip()
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class Field:
    """The text of a definition as the rules read it: its pieces (the description; every key and string
    value of a schema) prepared and joined, each remembering where it came from."""

    def __init__(self) -> None:
        self._parts: list[tuple[str, tuple[str, ...], str]] = []  # (label, JSON path, original string)
        self._text: str | None = None
        self._starts: list[int] = []
        self._owners: list[int] = []  # the part of each prepared piece
        self._lower: str | None = None

    @classmethod
    def of_text(cls, label: str, raw: str) -> Field:
        made = cls()
        made.add(label, raw)
        return made

    def add(self, label: str, raw: str) -> None:
        self._parts.append((label, (), raw))
        self._text = None

    def add_json(self, label: str, value: Mapping[str, Any] | None) -> None:
        """Every string of a JSON value: keys (property names), descriptions, titles, defaults, enums."""
        self._parts.extend((label, path, raw) for path, raw in _strings(value or {}, ()))
        self._text = None

    def suspect_pieces(self) -> Iterable[tuple[int, str]]:
        """(part, original string) of the pieces that are not plain printable ASCII (text and line
        breaks), for the checks that read what the author wrote character by character."""
        joined = "".join(raw for _, _, raw in self._parts)
        if joined.isascii() and not _CONTROLS.search(joined):
            return ()
        return ((i, raw) for i, (_, _, raw) in enumerate(self._parts))

    def where_of(self, part: int) -> str:
        label, path, _ = self._parts[part]
        return f"{label} {'.'.join(path)}" if path else label

    @property
    def text(self) -> str:
        if self._text is None:
            pieces: list[str] = []
            self._starts, self._owners, at = [], [], 0
            for index, (_, _, raw) in enumerate(self._parts):
                prepared = prepare(raw)
                if prepared:
                    self._starts.append(at)
                    self._owners.append(index)
                    pieces.append(prepared)
                    at += len(prepared) + len(PIECE_END)
            self._text = PIECE_END.join(pieces)
            self._lower = None
        return self._text

    def has(self, *words: str) -> bool:
        """Does the text hold any of ``words`` (lower case)? A cheap gate before a costly pattern."""
        if self._lower is None:
            self._lower = self.text.lower()
        lower = self._lower
        for word in words:  # noqa: SIM110  (a plain loop: this runs ~50 times per tool)
            if word in lower:
                return True
        return False

    def positions(self, words: tuple[str, ...]) -> list[int] | None:
        """Where ``words`` start in the text, in order; None when lower-casing moved the characters."""
        self.has()
        lower = self._lower or ""
        if len(lower) != len(self.text):
            return None
        found: set[int] = set()
        for word in words:
            at = lower.find(word)
            while at >= 0:
                found.add(at)
                at = lower.find(word, at + 1)
        return sorted(found)

    def where(self, position: int) -> str:
        """Where the text at ``position`` came from: "description", "input_schema properties.x", ..."""
        _ = self.text
        index = bisect_right(self._starts, position) - 1
        return self.where_of(self._owners[index]) if index >= 0 else "?"

    def sentence_at(self, position: int) -> tuple[int, str]:
        """(start, sentence) of the sentence that holds ``position``: it ends at ". ", "! ", "? ", "; "
        or a piece boundary (the text has single spaces only)."""
        text = self.text
        start, stop = max(0, position - SENTENCE_WINDOW), min(len(text), position + SENTENCE_WINDOW)
        for end in _SENTENCE_ENDS:
            before = text.rfind(end, start, position)
            if before >= 0:
                start = max(start, before + len(end))
            after = text.find(end, position, stop)
            if after >= 0:
                stop = min(stop, after + (1 if end != PIECE_END else 0))
        return start, text[start:stop]


def _strings(value: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """(path, string) for every key and string value; a key's path ends with the key itself."""
    found: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            found.append((where, item))
        elif isinstance(item, dict | Mapping):
            in_properties = where[-1:] == ("properties",)
            for raw_key, sub in reversed(list(item.items())):
                key = str(raw_key)
                if len(where) < _MAX_DEPTH and isinstance(sub, str | dict | list | Mapping):
                    stack.append((sub, (*where, key)))
                if in_properties or key not in _SCHEMA_KEYWORDS:
                    stack.append((key, (*where, key)))
        elif isinstance(item, list) and len(where) < _MAX_DEPTH:
            stack.extend(
                (sub, where) for sub in reversed(item) if isinstance(sub, str | dict | list | Mapping)
            )
    return found
