"""``tokenize`` caches each word's token and skips the identifier split of text without capitals; the
tokens are those of the plain definition: identifiers split, lowercased, stopwords and one-letter words
dropped, Snowball-stemmed."""

from __future__ import annotations

import random
import re

import pytest
import Stemmer

from tool_selector.search import text
from tool_selector.search.text import STOPWORDS, split_identifiers, tokenize

_STEMMER = Stemmer.Stemmer("english")
SAMPLES = [
    "",
    "getHistoricalPrices",
    "get_historical-prices for XMLHttpRequest and HTTPServer2Go",
    "Send an e-mail to the team's inbox (urgent!)",
    "I'd like to use the API: list all S3 buckets in us-east-1",
    "ÜberCool naïve café résumé — ΣΑΣ Straße",
    "a b c x y z 1 2 3 42 007 h2o OAuth2Token",
    "mcp server model context protocol tool tools api",
    "running runs ran runner easily fairly",
    "ABCDef aB Ab AB ab a1B 1A",
    "tabs\tand\nnewlines\r\nand   spaces",
]


def _reference(value: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+", split_identifiers(value).lower())
    return [str(_STEMMER.stemWord(w)) for w in words if w not in STOPWORDS and len(w) > 1]


def test_tokens_are_those_of_the_plain_definition() -> None:
    rng = random.Random(3)
    alphabet = "aAbBzZ09_- .éÉxXyY"
    generated = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(3000)]
    for value in [*SAMPLES, *generated]:
        assert tokenize(value) == _reference(value), value
        assert tokenize(value) == _reference(value), value  # the second time from the word cache


def test_the_word_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "_WORDS_MAX", 10)
    text._WORDS.clear()
    for n in range(50):
        assert tokenize(f"word{n} another{n}") == _reference(f"word{n} another{n}")
    assert len(text._WORDS) <= 12
