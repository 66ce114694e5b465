"""Misspelled words read as the catalog's ("waht tiem is it in Tokio" -> "waht time is it in Tokio").

A word of the request is misspelled when it is neither English (the word list of the relevance model's
tokenizer, 21,719 whole words, with their inflections and common prefixes) nor the catalog's (its stem
among the catalog's keyword tokens). It is replaced by an English word one edit away (a letter added,
dropped, changed, or two neighbours swapped; two edits for words of eight letters or more) whose stem
the catalog uses: one that keeps the first letter before one that does not (slips seldom hit it: "tiem"
is "time" before "item"), then the one the most tools use. Left as written: a word nothing fits, a short
word (under four letters), a capitalised word past the first or a mixed-case one (a name, an acronym,
"contactId"), and a word with one letter more than a catalog word that is not a doubled letter ("zset",
"httpx"). Only the text the search matches changes: the request as written is kept, and its arguments were
taken out before (a path or a URL is never corrected).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources

from tool_selector.search.text import tokenize

MIN_LETTERS = 4
TWO_EDITS = 8  # words this long may be two edits away
_WORD = re.compile(r"(?<![\w/.@#:-])[A-Za-z]+(?![\w/.@#:-])")


@cache
def english_words() -> frozenset[str]:
    """The whole words of the relevance model's word-piece vocabulary (lowercase, letters only)."""
    tokenizer = resources.files("tool_selector.embedding.relevance").joinpath("tokenizer.json")
    vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isascii() and w.isalpha() and len(w) >= 2)


@cache
def _english_stems() -> frozenset[str]:
    """The stems of those words: an inflected English word ("oranges", "redirects") is no misspelling."""
    return frozenset(t for w in english_words() for t in tokenize(w))


PREFIXES = ("re", "un", "de", "pre", "dis", "over", "sub", "multi", "auto")
SUFFIXES = ("ers", "er", "ings", "ing", "able", "izes", "ize", "ized", "ly")


def english(word: str) -> bool:
    """An English word, an inflection of one, or one with a common prefix or suffix ("reuse", "unpin",
    "matchers")."""
    if word in english_words():
        return True
    stems = _english_stems()
    if any(t in stems for t in tokenize(word)):
        return True
    if any(word.endswith(x) and english(word[: -len(x)]) for x in SUFFIXES if len(word) - len(x) >= 3):
        return True
    return any(word.startswith(p) and english(word[len(p) :]) for p in PREFIXES if len(word) - len(p) >= 3)


def _typed_extra(word: str, candidate: str) -> bool:
    """``word`` is ``candidate`` with a letter more that is not a doubled one ("zset" for "set", "httpx"
    for "http"): an identifier of its own, not a slip of the keyboard ("commmit" is one)."""
    if len(word) != len(candidate) + 1:
        return False
    for i in range(len(word)):
        if word[:i] + word[i + 1 :] == candidate:
            doubled = (i > 0 and word[i - 1] == word[i]) or (i + 1 < len(word) and word[i + 1] == word[i])
            if doubled:
                return False
    return True


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


@cache
def _index() -> dict[str, tuple[str, ...]]:
    """Each English word and each form of it with one letter dropped -> the words it comes from."""
    index: dict[str, set[str]] = {}
    for word in english_words():
        if len(word) >= MIN_LETTERS - 1:
            for key in {word, *_deletes(word)}:
                index.setdefault(key, set()).add(word)
    return {k: tuple(sorted(v)) for k, v in index.items()}


def distance(a: str, b: str, limit: int = 2) -> int:
    """Damerau-Levenshtein distance (optimal string alignment), capped at ``limit + 1``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return min(previous[len(b)], limit + 1)


def _candidates(word: str) -> set[str]:
    index = _index()
    keys = {word, *_deletes(word)}
    if len(word) >= TWO_EDITS:
        keys |= {d2 for d in _deletes(word) for d2 in _deletes(d)}
    found = {c for key in keys for c in index.get(key, ())}
    limit = 2 if len(word) >= TWO_EDITS else 1
    return {
        c
        for c in found
        if c != word
        and len(c) >= len(word) - 1  # "myvariant" is not "variant" with two slips
        and distance(word, c, limit) <= limit
        and not _typed_extra(word, c)
    }


def correction(word: str, frequency: Mapping[str, int]) -> str | None:
    """The catalog's word ``word`` is a misspelling of, or None (``frequency``: the catalog's keyword
    tokens and how many tools use each)."""
    lowered = word.lower()
    if len(lowered) < MIN_LETTERS:
        return None
    stems = tokenize(lowered)
    if not stems or stems[0] in frequency or english(lowered):  # the catalog's word: the cheap test first
        return None
    best, best_rank = None, (False, 0)
    for candidate in sorted(_candidates(lowered)):
        tokens = tokenize(candidate)
        count = frequency.get(tokens[0], 0) if tokens else 0
        rank = (candidate[0] == lowered[0], count)  # a slip seldom hits the first letter: "tiem" is "time"
        if count and rank > best_rank:
            best, best_rank = candidate, rank
    return best


def corrected(text: str, frequency: Mapping[str, int]) -> str:
    """``text`` with each misspelled word replaced by its correction (see the module's docstring)."""

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if (word[0].isupper() and match.start() > 0) or not word[1:].islower():
            return word  # a name ("Cate"), an acronym ("CNNs"), an identifier ("contactId", "iCloud")
        return correction(word, frequency) or word

    return _WORD.sub(fix, text)
