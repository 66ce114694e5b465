"""The deterministic offline profiler and enricher (stages 1-2 without an LLM).

They only extract and expand words. A tool's verb and object come from its name (``create_issue`` ->
"create issue"), or from its description's first words when the name has no verb; generic English
verb and noun synonyms (``semantic_enrichment.lexicon``) add the words a person might say instead
("add issue", "create ticket"). A server's profile comes from its own name, description and metadata
(categories) and from what its tools do. Descriptions are untrusted text: nothing in them is
followed, only words are taken, and every output stays within the draft limits.

Same input, same output: no randomness, no clock, ties broken alphabetically.

Measured on msc_bench_dev and livemcpbench: the profile's semantic keywords are left empty on purpose.
They are merged into every tool of the server, and the offline ones (server name, category and
description words) lowered tool recall there; the server's words already reach its tools through
``server_name``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from semantic_enrichment.base import EnrichmentDraft, ProfileDraft
from semantic_enrichment.enrichment import GENERIC_NAME_WORDS
from semantic_enrichment.lexicon import BOILERPLATE, NOUN_SYNONYMS, VERB_SYNONYMS, canonical_verb
from semantic_enrichment.words import singular
from tool_selector.core.models import EnricherName, ServerProfile, ServerSpec, ToolSpec
from tool_selector.index.build import server_tags
from tool_selector.search.text import STOPWORDS, split_identifiers

MODEL = "offline-v1"
PROMPT_VERSION = "2026-11-21"
MAX_TEXT = 4000  # only the start of a name or description is read
VERB_SYNONYMS_PER_TOOL = 4

_WORD = re.compile(r"[a-z][a-z0-9]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BREAK_WORDS = frozenset(
    "for from in on by with using via to into of and or that which based given when if as at "
    "about than so but per through across".split()
)
_ARTICLES = frozenset("a an the this that these those your my our its their some all any each".split())
_NAME_CUT = frozenset("by for from in on with to of using via".split())


def words_of(text: str) -> list[str]:
    """Lowercase words of a text, identifiers split (``getUserInfo`` -> get user info)."""
    return _WORD.findall(split_identifiers(text[:MAX_TEXT]).lower())


class _Unprintable(dict[int, int]):
    """``str.translate`` table: each character not printable becomes a space (learnt as it is met)."""

    def __missing__(self, code: int) -> int:
        self[code] = code if chr(code).isprintable() else 32
        return self[code]


_PRINTABLE = _Unprintable()


@lru_cache(maxsize=2**16)
def first_sentence(text: str, limit: int = 240) -> str:
    """The text's first sentence, whitespace and control characters collapsed, cut at a word. Kept for
    the texts seen last: a tool's description is read by the profiler and the enricher, and the same
    texts come again under other servers' names."""
    head = text[:MAX_TEXT]
    flat = " ".join((head if head.isprintable() else head.translate(_PRINTABLE)).split())
    first = _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0][:limit]
    return first.strip()


def _content(word: str) -> bool:
    return len(word) > 2 and word not in STOPWORDS and word not in BOILERPLATE and not word.isdigit()


def _dedupe(items: Iterable[str], limit: int, max_len: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if len(out) >= limit:
            break
        text = " ".join(item.split())[:max_len].strip()
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return out


def _ranked(counts: Counter[str]) -> list[str]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


@dataclass(frozen=True)
class ToolTerms:
    """What a tool does, in words: its main verb, the other verbs its description opens with, its object."""

    verb: str | None
    other_verbs: tuple[str, ...]
    entity: str


def _leading_verbs(words: list[str]) -> list[str]:
    """The verbs a description opens with: "List and filter apps" -> list, filter."""
    verbs: list[str] = []
    for i, word in enumerate(words[:8]):
        found = canonical_verb(word)
        if found is not None and ((not verbs and i <= 2) or (verbs and words[i - 1] in ("and", "or"))):
            if found not in verbs:
                verbs.append(found)
            continue
        if word in ("and", "or") and verbs:
            continue
        if verbs or i > 2:
            break
    return verbs


def _description_entity(words: list[str], start: int) -> str:
    """Up to two content words after the verb, until a preposition: "Search the web using X" -> web."""
    picked: list[str] = []
    for word in words[start : start + 6]:
        if word in _BREAK_WORDS or (picked and canonical_verb(word)):
            break
        if word in _ARTICLES or not _content(word):
            continue
        picked.append(singular(word))
        if len(picked) == 2:
            break
    return " ".join(picked)


def tool_terms(tool: ToolSpec) -> ToolTerms:
    """The verb and object of a tool, from its name first and its description's opening otherwise.

    ``todoist_create_task`` -> create / task; ``zoomeye_vuldb_by_id`` -> (no verb) / zoomeye vuldb;
    ``weather`` described as "Fetches the weather for a city" -> fetch / weather.
    """
    return _terms(tool.name, tool.description)


@lru_cache(maxsize=2**16)
def _terms(name: str, description: str) -> ToolTerms:
    """``tool_terms`` of a name and description, kept for the pairs seen last (the profiler and the
    enricher both read them; a large catalog holds the same tool under several servers)."""
    verb: str | None = None
    before: list[str] = []
    after: list[str] = []
    for word in words_of(name):
        found = canonical_verb(word)
        if verb is None and found is not None:
            verb = found
        elif verb is None:
            before.append(word)
        else:
            after.append(word)
    cut = next((i for i, w in enumerate(after) if w in _NAME_CUT), None)
    if cut:
        after = after[:cut]
    rest = [w for w in (after or before) if w not in GENERIC_NAME_WORDS and not w.isdigit()]
    desc_words = words_of(first_sentence(description))
    desc_verbs = _leading_verbs(desc_words)
    if verb is None and desc_verbs:
        verb = desc_verbs[0]
    entity = " ".join(singular(w) for w in rest[-3:])
    if not entity and desc_words:
        start = next((i + 1 for i, w in enumerate(desc_words[:6]) if canonical_verb(w)), 0)
        entity = _description_entity(desc_words, start)
    others = tuple(v for v in desc_verbs if v != verb)[:3]
    return ToolTerms(verb=verb, other_verbs=others, entity=entity[:60])


def noun_synonyms(entity: str) -> list[str]:
    """The entity with its head noun replaced by each synonym: "pull repo" -> "pull repository"."""
    words = entity.split()
    if not words:
        return []
    return [" ".join([*words[:-1], s]) for s in NOUN_SYNONYMS.get(words[-1], ())]


def action_entities(terms: ToolTerms) -> list[str]:
    """ "create issue", "add issue", "new issue", "create ticket", ... for a create_issue tool."""
    if not terms.entity:
        return [v for v in (terms.verb, *terms.other_verbs) if v]
    pairs: list[str] = []
    if terms.verb:
        pairs.append(f"{terms.verb} {terms.entity}")
        pairs += [f"{s} {terms.entity}" for s in VERB_SYNONYMS.get(terms.verb, ())[:VERB_SYNONYMS_PER_TOOL]]
        pairs += [f"{terms.verb} {n}" for n in noun_synonyms(terms.entity)]
    else:
        pairs.append(terms.entity)
    pairs += [f"{v} {terms.entity}" for v in terms.other_verbs]
    return pairs


def _categories(server: ServerSpec) -> list[str]:
    return [c[:MAX_TEXT] for c in server_tags(server)[:10]]


class OfflineProfiler:
    """A server profile from the server's own words and what its tools do."""

    kind: EnricherName = "offline"
    model: str = MODEL
    prompt_version: str = PROMPT_VERSION

    def profile(self, server: ServerSpec, tools: Sequence[ToolSpec]) -> ProfileDraft:
        ordered = sorted(tools, key=lambda t: t.name)
        terms = [tool_terms(t) for t in ordered]
        entities = Counter(t.entity for t in terms if t.entity)
        scores: Counter[str] = Counter()
        for word in words_of(server.name):
            scores[word] += 3
        for text in (server.description, str(server.metadata.get("summary") or "")):
            for word in set(words_of(text)):
                scores[word] += 1
        for tool in ordered:
            for word in set(words_of(tool.name)):
                scores[word] += 1
        keywords = [w for w in _ranked(scores) if _content(w)]
        categories = [" ".join(words_of(c)) for c in _categories(server)]
        domain_parts = [c for c in categories if c] or _ranked(entities)[:2] or keywords[:3]
        domain = ", ".join(domain_parts)[:100].strip(" ,") or "general"
        return ProfileDraft(
            domain=domain,
            primary_capabilities=_dedupe(
                (f"{t.verb} {t.entity}" for t in terms if t.verb and t.entity), 12, 240
            ),
            entity_types=_dedupe(_ranked(entities), 30, 60),
            action_verbs=_dedupe(_ranked(Counter(t.verb for t in terms if t.verb)), 30, 60),
            integration_context=first_sentence(server.description, 1000),
            semantic_keywords=[],
        )


class OfflineEnricher:
    """Per tool: action-entity pairs with verb and noun synonyms, keywords, templated use cases."""

    kind: EnricherName = "offline"
    model: str = MODEL
    prompt_version: str = PROMPT_VERSION

    def enrich(
        self, server: ServerSpec, profile: ServerProfile, tools: Sequence[ToolSpec]
    ) -> dict[str, EnrichmentDraft]:
        return {tool.name: enrich_tool(server, profile, tool) for tool in tools}


def enrich_tool(server: ServerSpec, profile: ServerProfile, tool: ToolSpec) -> EnrichmentDraft:
    """One tool's draft: only words taken from its name, description and server, and their synonyms."""
    label = " ".join(w for w in words_of(server.name) if w not in BOILERPLATE) or server.name
    draft = _draft(tool.name, tool.description, label, profile.domain)
    return EnrichmentDraft.model_construct(  # a copy of what _draft validated: the caller may change it
        enhanced_description=draft.enhanced_description,
        action_entities=list(draft.action_entities),
        semantic_keywords=list(draft.semantic_keywords),
        use_cases=list(draft.use_cases),
    )


@lru_cache(maxsize=2**14)
def _draft(name: str, description: str, server_label: str, domain: str) -> EnrichmentDraft:
    """The draft of a tool by what it is made from, kept for the inputs seen last: a large catalog's
    copies of a server (``<name> (copy k)``) share their label, so their tools' drafts are made once."""
    terms = _terms(name, description)
    entity_words = terms.entity.split()
    keywords = [
        *entity_words,
        *(s for w in entity_words for s in NOUN_SYNONYMS.get(w, ())),
        *(w for w in words_of(name) if _content(w)),
    ]
    action = f"{terms.verb or 'use'} {terms.entity}".strip()
    use_cases = [f"{action} with {server_label}"]
    if terms.verb:
        use_cases += [f"{s} {terms.entity}".strip() for s in VERB_SYNONYMS.get(terms.verb, ())[:2]]
    summary = first_sentence(description, 600)
    enhanced = f"{summary} {action.capitalize()} ({domain})." if summary else f"{action} ({domain})."
    return EnrichmentDraft(
        enhanced_description=enhanced[:1500],
        action_entities=_dedupe(action_entities(terms), 30, 80),
        semantic_keywords=_dedupe(keywords, 25, 60),
        use_cases=_dedupe(use_cases, 8, 240),
    )
