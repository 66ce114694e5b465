"""Keyword text handling shared by the backends and the resolver: split, lowercase, drop stopwords, stem."""

from __future__ import annotations

import re
from functools import lru_cache

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


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def tokenize(text: str) -> list[str]:
    """Tokens for BM25: identifiers split, lowercased, stopwords dropped, Snowball-stemmed."""
    words = _TOKEN.findall(split_identifiers(text).lower())
    return [_stem(w) for w in words if w not in STOPWORDS and len(w) > 1]


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
