"""Which servers and tools a ``catalog_query`` matches, and how well.

Tools by action/entity, from three places, strongest first: the enrichment's ``action_entities``
("create issue", "add ticket"), the words of the name, the words of the description. The agent's
words are normalised like the stored ones (``semantic_enrichment.words.normalise``), and a verb's
synonyms count at half weight. Servers by keyword: every keyword word must start a word of the
server's name, tags or profile (2 points) or of its description (1 point).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from semantic_enrichment.lexicon import VERB_SYNONYMS
from semantic_enrichment.words import normalise, singular, words
from services.gateway.catalog_query.entries import ServerEntry, ToolEntry, plain

WEIGHTS = {"action_entities": 3.0, "name": 2.0, "description": 1.0}


@dataclass(frozen=True, slots=True)
class Want:
    """What a tools/check_tool query looks for, normalised: an action (and its synonyms), an entity."""

    action: str = ""
    synonyms: tuple[str, ...] = ()
    entity: str = ""

    @classmethod
    def of(cls, action: str | None, entity: str | None) -> Want:
        verb = normalise(action or "").strip()
        synonyms = tuple(
            dict.fromkeys(s for s in (normalise(x).strip() for x in VERB_SYNONYMS.get(verb, ())) if s != verb)
        )
        return cls(verb, synonyms, normalise(entity or "").strip())

    def __bool__(self) -> bool:
        return bool(self.action or self.entity)

    def _level(self, texts: Sequence[str], prefix: bool) -> float:
        """1.0 when a text has the action and the entity, 0.5 when only with a synonym, else 0."""
        best = 0.0
        for text in texts:
            if self.entity and f" {self.entity} " not in text:
                continue
            for level, verbs in ((1.0, (self.action,)), (0.5, self.synonyms)):
                if level <= best:
                    break
                if not self.action or any(_has_action(text, v, self.entity, prefix) for v in verbs):
                    best = level
            if best == 1.0:
                break
        return best

    def score(self, tool: ToolEntry) -> tuple[float, str]:
        """The tool's match score (0 = no match) and where it matched best."""
        if self.entity and f" {self.entity} " not in tool.all_text:
            return 0.0, ""
        if self.action and not any(f" {v} " in tool.all_text for v in (self.action, *self.synonyms)):
            return 0.0, ""
        levels = {
            "action_entities": self._level(tool.pairs, prefix=True),
            "name": self._level((tool.name_text,), prefix=False),
            "description": self._level((tool.description_text,), prefix=False),
        }
        total = sum(WEIGHTS[k] * v for k, v in levels.items())
        where = max(levels, key=lambda k: WEIGHTS[k] * levels[k])
        return total, where if total else ""


def _has_action(text: str, verb: str, entity: str, prefix: bool) -> bool:
    if not prefix:
        return f" {verb} " in text
    if not text.startswith(f" {verb} "):
        return False
    return not entity or f" {entity} " in text[len(verb) + 1 :]


def _glob(pattern: str) -> re.Pattern[str]:
    """A shell glob, case-insensitive; without * or ? it matches anywhere in the name."""
    text = pattern.strip().lower()
    return re.compile(fnmatch.translate(text if any(c in text for c in "*?[") else f"*{text}*"))


def matching_tools(f: Mapping[str, Any], pool: Sequence[ToolEntry]) -> list[tuple[float, str, ToolEntry]]:
    """(score, where, tool) for the tools matching the action, entity and name_pattern filters, best first."""
    want = Want.of(f.get("action"), f.get("entity"))
    name_re = _glob(f["name_pattern"]) if "name_pattern" in f else None
    hits: list[tuple[float, str, ToolEntry]] = []
    for tool in pool:
        if name_re is not None and not name_re.match(tool.name.lower()):
            continue
        score, where = want.score(tool) if want else (0.0, "")
        if score or not want:
            hits.append((score, where, tool))
    hits.sort(key=lambda h: (-h[0], h[2].server.casefold(), h[2].name))
    return hits


def matching_servers(f: Mapping[str, Any], servers: Iterable[ServerEntry]) -> list[tuple[float, ServerEntry]]:
    """(score, server) for the servers in the domain that have every keyword word, best first."""
    domain = plain(f.get("domain", ""))
    patterns = [re.compile(r"\b" + re.escape(singular(w))) for w in words(f.get("keyword", ""))]
    hits: list[tuple[float, ServerEntry]] = []
    for entry in servers:
        if domain and domain not in entry.domain_text:
            continue
        score = _keyword_score(entry, patterns)
        if score or not patterns:
            hits.append((score, entry))
    hits.sort(key=lambda h: (-h[0], h[1].record.name.casefold()))
    return hits


def _keyword_score(entry: ServerEntry, patterns: Sequence[re.Pattern[str]]) -> float:
    """2 per keyword word found in the name, tags or profile, 1 in the description; 0 if one is missing."""
    score = 0.0
    for pattern in patterns:
        if pattern.search(entry.strong_text):
            score += 2.0
        elif pattern.search(entry.weak_text):
            score += 1.0
        else:
            return 0.0
    return score
