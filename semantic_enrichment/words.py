"""Word normal forms, shared by the enricher and the gateway's catalog matcher so they cannot drift.

The enricher writes a tool's verb as its canonical verb and its object in the singular ("create
issue"); the gateway's ``catalog_query`` compares an agent's words with those pairs after
``normalise`` maps both to the same forms:

    normal_word("creates") -> "create"     (a form of a lexicon verb -> that verb)
    normal_word("issues")  -> "issue"      (anything else -> its singular)
    normalise("Creates Issues") -> " create issue "
"""

from __future__ import annotations

import re

from semantic_enrichment.lexicon import canonical_verb
from tool_selector.search.text import split_identifiers

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lowercase words of a text, identifiers split: "getUserInfo" -> get, user, info."""
    return _WORD.findall(split_identifiers(text).lower())


def singular(word: str) -> str:
    """A plural's singular by its ending ("issues" -> "issue", "boxes" -> "box"); other words as given."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normal_word(word: str) -> str:
    """The canonical verb of a verb form (or of its singular: "settings" as "setting"), else the
    singular, so a word and its plural always come to the same form."""
    return canonical_verb(word) or canonical_verb(singular(word)) or singular(word)


def normalise(text: str) -> str:
    """Words as the matcher compares them, space-padded: "Creates Issues" -> " create issue "."""
    return " " + " ".join(normal_word(w) for w in words(text)) + " "
