"""Keyword text handling shared by the backends and the resolver: split, lowercase, drop stopwords, stem."""

from __future__ import annotations

import re

import Stemmer

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_TOKEN = re.compile(r"[a-z0-9]+")

# English stopwords plus words that appear in almost every tool description or request
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves please want need like also using use via able let lets me i'd i'm
    """.split()
)

_stemmer = Stemmer.Stemmer("english")


def split_identifiers(text: str) -> str:
    """``getHistoricalPrices`` / ``get_historical-prices`` -> ``get Historical Prices``."""
    return _CAMEL.sub(" ", text).replace("_", " ").replace("-", " ")


_DROPPED = "\0"  # what ``_WORDS`` says of a word tokenize leaves out (no token holds it)
_WORDS: dict[str, str] = {}  # a lowercased word -> its token, or _DROPPED: a word is stemmed once
_WORDS_MAX = 1 << 18  # forgotten all at once when full (queries may bring any number of new words)


def _token(word: str) -> str:
    if word in STOPWORDS or len(word) < 2:
        return _DROPPED
    return str(_stemmer.stemWord(word))


def tokenize(text: str) -> list[str]:
    """Tokens for BM25: identifiers split, lowercased, stopwords dropped, Snowball-stemmed."""
    lowered = text.lower()
    if lowered != text:  # only an upper-case letter can split an identifier (the separators ``_`` and
        lowered = _CAMEL.sub(" ", text).lower()  # ``-`` split words anyway: no token holds them)
    known = _WORDS
    if len(known) > _WORDS_MAX:
        known.clear()
    out = []
    for word in _TOKEN.findall(lowered):
        token = known.get(word)
        if token is None:
            token = known[word] = _token(word)
        if token is not _DROPPED:
            out.append(token)
    return out


def field_text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else " . ".join(value)


def boost_repeats(boosts: dict[str, float]) -> dict[str, int]:
    """How many times each field's tokens count: round(2 x boost); fields that round to 0 are left out."""
    return {name: round(2 * b) for name, b in boosts.items() if round(2 * b) > 0}


def weighted_tokens(fields: dict[str, str | list[str]], boosts: dict[str, float]) -> list[str]:
    """One document's keyword tokens, each field's repeated by its weight (BM25F by repetition: term
    frequencies weighted per field under one IDF and one length norm). Both backends search this."""
    tokens: list[str] = []
    for name, times in boost_repeats(boosts).items():
        value = fields.get(name)
        if value:
            tokens.extend(tokenize(field_text(value)) * times)
    return tokens
