"""The deterministic offline profiler and enricher (stages 1-2 without an LLM).

They only extract and expand words: a tool's verb and object come from its name (``create_issue`` ->
"create issue"), or from its description's first words when the name has no verb; generic English
verb and noun synonyms (``semantic_enrichment.lexicon``) add the words a person might say instead
("add issue", "new ticket"). A server's profile is built from its own name, description, metadata
(summary, categories) and the words its tools share. Descriptions are untrusted text: nothing in them
is followed, only words are taken, and every output is bounded by the draft limits.

Same input, same output: no randomness, no clock, ties broken alphabetically.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from semantic_enrichment.base import EnrichmentDraft, ProfileDraft
from semantic_enrichment.enrichment import GENERIC_NAME_WORDS, singular
from semantic_enrichment.lexicon import BOILERPLATE, NOUN_SYNONYMS, VERB_SYNONYMS, canonical_verb
from tool_selector.models import EnricherName, ServerProfile, ServerSpec, ToolSpec
from tool_selector.search.text import STOPWORDS, split_identifiers

MAX_TEXT = 4000  # only the start of a description is read
OPTS: dict[str, object] = {}
_WORD = re.compile(r"[a-z][a-z0-9]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
_BREAK_WORDS = frozenset(
    "for from in on by with using via to into of and or that which based given when if as at "
    "about than so but per through across".split()
)
_ARTICLES = frozenset("a an the this that these those your my our its their some all any each".split())


def words_of(text: str) -> list[str]:
    """Lowercase words of a text, identifiers split (``getUserInfo`` -> get user info)."""
    return _WORD.findall(split_identifiers(text[:MAX_TEXT]).lower())


def first_sentence(text: str, limit: int = 240) -> str:
    """The description's first sentence, whitespace and control characters collapsed, cut at a word."""
    text = " ".join(text[:MAX_TEXT].split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0]
    return first.strip()


def _content(word: str) -> bool:
    return len(word) > 2 and word not in STOPWORDS and word not in BOILERPLATE and not word.isdigit()


@dataclass(frozen=True)
class ToolTerms:
    """What a tool does, in words: its main verb, the other verbs it names, and its object."""

    verb: str | None
    other_verbs: tuple[str, ...]
    entity: str


def _description_entity(words: list[str], start: int) -> str:
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


_NAME_CUT = frozenset("by for from in on with to of using via".split())


def tool_terms(tool: ToolSpec) -> ToolTerms:
    """The verb and object of a tool, from its name first and its description's opening otherwise."""
    name_words = words_of(tool.name)
    verb: str | None = None
    before: list[str] = []
    after: list[str] = []
    for word in name_words:
        found = canonical_verb(word)
        if verb is None and found is not None:
            verb = found
        elif verb is None:
            before.append(word)
        else:
            after.append(word)
    if OPTS.get("cut", True):
        cut = next((i for i, w in enumerate(after) if w in _NAME_CUT), None)
        if cut:
            after = after[:cut]
    rest = [w for w in (after or before) if w not in GENERIC_NAME_WORDS and not w.isdigit()]
    desc_words = words_of(first_sentence(tool.description))
    desc_verbs = _leading_verbs(desc_words) if OPTS.get("leading", True) else []
    if verb is None and desc_verbs:
        verb = desc_verbs[0]
    entity = " ".join(singular(w) for w in rest[-3:])
    if not entity and desc_words:
        start = next((i + 1 for i, w in enumerate(desc_words[:6]) if canonical_verb(w)), 0)
        entity = _description_entity(desc_words, start)
    others = tuple(v for v in desc_verbs if v != verb)[:3]
    return ToolTerms(verb=verb, other_verbs=others, entity=entity)


def _dedupe(items: Iterable[str], limit: int, max_len: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        text = " ".join(item.split())[:max_len].strip()
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
            if len(out) == limit:
                break
    return out


def noun_synonyms(entity: str) -> list[str]:
    """Synonyms of an entity's head noun ("pull request" keeps its words; "repo" -> "repository")."""
    if not entity:
        return []
    words = entity.split()
    head = words[-1]
    found = NOUN_SYNONYMS.get(head, ())
    return [" ".join([*words[:-1], s]) for s in found]


def action_entities(terms: ToolTerms, verb_synonyms: int = 4) -> list[str]:
    """"create issue", "add issue", "new issue", "create ticket", ... for a create_issue tool."""
    if not terms.entity:
        verbs = [v for v in (terms.verb, *terms.other_verbs) if v]
        return verbs
    pairs: list[str] = []
    if terms.verb:
        pairs.append(f"{terms.verb} {terms.entity}")
        pairs += [f"{s} {terms.entity}" for s in VERB_SYNONYMS.get(terms.verb, ())[:verb_synonyms]]
        if OPTS.get("nsyn", True):
            pairs += [f"{terms.verb} {n}" for n in noun_synonyms(terms.entity)]
    if OPTS.get("others", True):
        pairs += [f"{v} {terms.entity}" for v in terms.other_verbs]
    if not terms.verb:
        pairs.append(terms.entity)
    return pairs


class OfflineProfiler:
    """A server profile from the server's own text and its tools' names, verbs and objects."""

    kind: EnricherName = "offline"
    model: str = "offline-v1"
    prompt_version: str = "1"

    def profile(self, server: ServerSpec, tools: Sequence[ToolSpec]) -> ProfileDraft:
        categories = _categories(server)
        terms = [tool_terms(t) for t in tools]
        verbs = Counter(t.verb for t in terms if t.verb)
        entities = Counter(t.entity for t in terms if t.entity)
        scores: Counter[str] = Counter()
        for word in words_of(server.name):
            scores[word] += 3
        for category in categories:
            for word in words_of(category):
                scores[word] += 2
        for text in (server.description, str(server.metadata.get("summary") or "")):
            for word in set(words_of(text)):
                scores[word] += 1
        for tool in tools:
            for word in set(words_of(tool.name)):
                scores[word] += 1
        keywords = [w for w, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])) if _content(w)]
        domain_parts = ([" ".join(words_of(c)) for c in categories] if OPTS.get("dom", "cat") == "cat" else []) or keywords[:3]
        domain = ", ".join(p for p in domain_parts if p)[:100].strip(" ,") or "general"
        capabilities = [
            f"{t.verb} {t.entity}".strip() for t in terms if t.verb and t.entity
        ]
        return ProfileDraft(
            domain=domain,
            primary_capabilities=_dedupe(capabilities, 12, 240),
            entity_types=_dedupe(_ranked(entities), 30, 60),
            action_verbs=_dedupe(_ranked(verbs), 30, 60),
            integration_context=first_sentence(server.description, 1000),
            semantic_keywords=_dedupe(keywords, int(OPTS.get("srvkw", 15)), 60),  # type: ignore[call-overload]
        )


def _ranked(counts: Counter[str]) -> list[str]:
    return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _categories(server: ServerSpec) -> list[str]:
    found: list[str] = []
    for key in ("categories", "category", "tags", "keywords"):
        value = server.metadata.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(str(v) for v in value if isinstance(v, str | int))
    return [c[:60] for c in found[:10]]


class OfflineEnricher:
    """Per tool: action-entity pairs with verb and noun synonyms, keywords, templated use cases."""

    kind: EnricherName = "offline"
    model: str = "offline-v1"
    prompt_version: str = "1"

    def enrich(
        self, server: ServerSpec, profile: ServerProfile, tools: Sequence[ToolSpec]
    ) -> dict[str, EnrichmentDraft]:
        return {tool.name: enrich_tool(server, profile, tool) for tool in tools}


def _param_words(schema: dict[str, object]) -> list[str]:
    props = schema.get("properties")
    out: list[str] = []
    if not isinstance(props, dict):
        return out
    for name, spec in list(props.items())[:20]:
        out += words_of(str(name))
        if isinstance(spec, dict):
            if OPTS.get("pdesc"):
                out += words_of(str(spec.get("description") or "")[:200])
            enum = spec.get("enum")
            if OPTS.get("penum") and isinstance(enum, list):
                for v in enum[:15]:
                    out += words_of(str(v)[:40])
    return [w for w in out if _content(w)]


def enrich_tool(server: ServerSpec, profile: ServerProfile, tool: ToolSpec) -> EnrichmentDraft:
    terms = tool_terms(tool)
    pairs = action_entities(terms, int(OPTS.get("vsyn", 4)))  # type: ignore[call-overload]
    entity_words = terms.entity.split()
    keywords = [*entity_words]
    if OPTS.get("kwnsyn", True):
        keywords += [s for w in entity_words for s in NOUN_SYNONYMS.get(w, ())]
    if OPTS.get("kwname", True):
        keywords += [w for w in words_of(tool.name) if _content(w)]
    if OPTS.get("pdesc") or OPTS.get("penum"):
        keywords += _param_words(tool.input_schema)
    server_label = " ".join(w for w in words_of(server.name) if w not in BOILERPLATE) or server.name
    action = f"{terms.verb or 'use'} {terms.entity}".strip()
    uc = OPTS.get("uc", "tmpl")
    use_cases: list[str] = []
    if uc == "tmpl":
        use_cases = [f"{action} with {server_label}"]
        if terms.verb:
            use_cases += [f"{s} {terms.entity}".strip() for s in VERB_SYNONYMS.get(terms.verb, ())[:2]]
    elif uc == "short":
        use_cases = [f"{action} with {server_label}"]
    ed = OPTS.get("ed", "first+action")
    summary = first_sentence(tool.description, 600)
    if ed == "first+action":
        enhanced = f"{summary} {action.capitalize()} ({profile.domain})." if summary else f"{action} ({profile.domain})."
    elif ed == "first":
        enhanced = summary
    elif ed == "action":
        enhanced = f"{action.capitalize()} ({profile.domain})."
    else:
        enhanced = ""
    return EnrichmentDraft(
        enhanced_description=enhanced[:1500],
        action_entities=_dedupe(pairs, 30, 80),
        semantic_keywords=_dedupe(keywords, 25, 60),
        use_cases=_dedupe(use_cases, 8, 240),
    )
