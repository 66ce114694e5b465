"""The evidence the confidence reads: what one resolution says about how sure we can be.

Every feature is absolute, or normalised the same way whatever the backend: cosines come from our own
vectors; fused scores come from the same relative-score fusion on both backends; word evidence comes
from :class:`CatalogTerms`, built from the catalog store's documents (never from a backend). The
features, by family:

- vector: the best cosine, the top power's best cosine and its margin over the next power, the mean
  and spread of the candidates' cosines, and the query's cosine to a reference centroid of tool
  vectors (how "generic" the query is), with the top cosine above it;
- fused ranking: the top three power scores, the margin and ratio of the first two;
- channels: the top power's rank in the keyword and in the vector channel, and whether both agree;
- words: the IDF-weighted share of the query's content words found in the top tool (all its fields,
  and its original fields only), in the top power, in the runner-up power and anywhere in the catalog;
  how much of the top tool's and top power's names the query says; the best action-entity pair of the
  top tool matched by the query's words;
- capability: how much more the request is like the top power's best tool than like the power's own
  server document (what the server is about): a request for something the server's domain covers but
  none of its tools does matches the server as well as, or better than, any tool;
- judge: the capability judge's probability that the top power's first tool does what the request asks
  (``tool_selector/resolve/judge.py``; 0 when no judge runs);
- arguments: the share of the request's specific arguments (a URL, a path, a time zone...) that the top
  tool's parameters take (``tool_selector/core/arguments.py``), 0 when it has none;
- size: the query's length, the catalog's servers and tools, capped at 100 servers and 500 tools.
  Above that the labelled data has almost no request that nothing answers (the big public catalogs
  list a tool for every request), so trees reading bigger sizes learned that big catalogs answer
  everything; capped, a 491-server catalog reads as a 100-server one, where the data is balanced.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tool_selector.core.arguments import Argument, fits
from tool_selector.core.models import PowerCandidate, SearchHit, ToolDocument
from tool_selector.core.names import server_of
from tool_selector.resolve.judge import judge_text
from tool_selector.resolve.wordmatrix import Shards, WordMatrix, collection_held, extended, word_counts
from tool_selector.search.text import field_text, tokenize

FEATURES: tuple[str, ...] = (
    "top_cosine",
    "top_power_cosine",
    "cosine_margin",
    "candidate_cosine_mean",
    "candidate_cosine_std",
    "reference_cosine",
    "cosine_above_reference",
    "power_score_1",
    "power_score_2",
    "power_score_3",
    "power_margin",
    "power_ratio",
    "vector_rank",
    "keyword_rank",
    "channels_agree",
    "tool_coverage",
    "tool_coverage_original",
    "power_coverage",
    "runner_up_coverage",
    "catalog_coverage",
    "tool_name_overlap",
    "server_name_overlap",
    "action_match",
    "argument_fit",
    "tool_over_server",
    "capability",
    "query_terms_log",
    "catalog_servers_log",
    "catalog_tools_log",
)

ORIGINAL_FIELDS = ("name", "description", "parameter_names")
ENRICHED_FIELDS = ("action_entities", "enhanced_description", "semantic_keywords", "use_cases")
SERVER_FIELDS = ("server_name", "server_description", "tags")
RANKED_FIELDS = ORIGINAL_FIELDS + ENRICHED_FIELDS + SERVER_FIELDS  # the fields the ranker reads one by one
_GENERIC_NAME_TOKENS = frozenset(tokenize("mcp server model context protocol tool tools api"))
_UNRANKED = 10  # a power a channel did not rank counts as the 11th
MAX_SERVERS, MAX_TOOLS = 100, 500  # the catalog sizes the size features saturate at (see above)


_POSITION = {name: n for n, name in enumerate(RANKED_FIELDS)}
_NAME, _SERVER_NAME = _POSITION["name"], _POSITION["server_name"]
_ORIGINAL = tuple(_POSITION[n] for n in ORIGINAL_FIELDS)
_ENRICHED = tuple(_POSITION[n] for n in ENRICHED_FIELDS)
_SERVER = tuple(_POSITION[n] for n in SERVER_FIELDS)
_NONE: frozenset[str] = frozenset()


def kinds_of(doc: ToolDocument) -> frozenset[str]:
    """The kinds of argument a tool's parameters take, as the index read them from its input schema
    (``argument_kinds``: names, types and formats; tool_selector/core/arguments.py)."""
    kinds = doc.fields.get("argument_kinds") or []
    return frozenset(kinds) if isinstance(kinds, list) else frozenset((kinds,))


class _DocTerms(NamedTuple):
    """What the terms read from one tool document."""

    fields: list[frozenset[str]]  # the words of each of RANKED_FIELDS
    name_tokens: tuple[str, ...]
    own: frozenset[str]
    every: frozenset[str]
    names: frozenset[str]
    actions: tuple[tuple[str, ...], ...]


class _Reader:
    """Reads documents' words, tokenizing each distinct text once and making each distinct union of
    fields once: a server's own fields are the same on each of its tools, and many tools' names,
    parameters and descriptions repeat. Equal word sets are then one object, which the word matrix
    and the document frequencies count once too."""

    def __init__(self) -> None:
        self._words: dict[str, frozenset[str]] = {}
        self._tokens: dict[str, tuple[str, ...]] = {}
        self._unions: dict[tuple[frozenset[str], ...], frozenset[str]] = {}
        self._names: dict[frozenset[str], frozenset[str]] = {}
        self._actions: dict[str | tuple[str, ...], tuple[tuple[str, ...], ...]] = {}

    def tokens(self, text: str) -> tuple[str, ...]:
        found = self._tokens.get(text)
        if found is None:
            found = self._tokens[text] = tuple(tokenize(text))
        return found

    def _text_words(self, text: str) -> frozenset[str]:
        found = self._words[text] = frozenset(self.tokens(text))
        return found

    def union(self, parts: tuple[frozenset[str], ...]) -> frozenset[str]:
        found = self._unions.get(parts)
        if found is None:
            found = self._unions[parts] = _NONE.union(*parts)
        return found

    def names(self, words: frozenset[str]) -> frozenset[str]:
        """A name's words, those almost every name says left out."""
        found = self._names.get(words)
        if found is None:
            found = self._names[words] = words - _GENERIC_NAME_TOKENS
        return found

    def _actions_of(self, pairs: str | list[str]) -> tuple[tuple[str, ...], ...]:
        key = pairs if isinstance(pairs, str) else tuple(pairs)
        found = self._actions.get(key)
        if found is None:
            read = (self.tokens(p) for p in pairs if isinstance(p, str))
            found = self._actions[key] = tuple(t for t in read if t)
        return found

    def read(self, doc: ToolDocument) -> _DocTerms:
        get, known = doc.fields.get, self._words
        fields: list[frozenset[str]] = []
        for name in RANKED_FIELDS:
            value = get(name)
            if not value:
                fields.append(_NONE)
                continue
            text = field_text(value)
            found = known.get(text)
            fields.append(self._text_words(text) if found is None else found)
        own = self.union(tuple(fields[n] for n in _ORIGINAL))
        return _DocTerms(
            fields=fields,
            name_tokens=self.tokens(field_text(get("name", ""))),
            own=own,
            every=self.union((own, *(fields[n] for n in _ENRICHED))),
            names=self.names(fields[_NAME]),
            actions=self._actions_of(get("action_entities") or []),
        )

    def server(self, read: _DocTerms) -> tuple[frozenset[str], frozenset[str]]:
        """A server's own words (its fields on any of its tools' documents) and its name's words."""
        fields = read.fields
        return self.union(tuple(fields[n] for n in _SERVER)), self.names(fields[_SERVER_NAME])


@dataclass(frozen=True)
class CatalogTerms:
    """The words of a catalog, per tool and per power, with their document frequencies over tools.

    Built from the same documents the index is built from (``tool_selector.index.build.build_documents``),
    so both backends see the same numbers. Immutable: a changed catalog makes new terms (``updated``),
    which share with these what the change did not write (the maps are ``Shards``).
    """

    tool_words: Shards[frozenset[str]]
    tool_original_words: Shards[frozenset[str]]
    tool_name_words: Shards[frozenset[str]]
    tool_actions: Shards[tuple[tuple[str, ...], ...]]
    power_words: Shards[frozenset[str]]
    power_name_words: Shards[frozenset[str]]
    document_frequency: Shards[int] = field(default_factory=Shards)
    words: WordMatrix = field(default_factory=WordMatrix.empty)
    tool_name_tokens: Shards[tuple[str, ...]] = field(default_factory=Shards)
    power_tools: Shards[int] = field(default_factory=Shards)
    power_members: Shards[frozenset[str]] = field(default_factory=Shards)  # power -> its tool ids
    power_own_words: Shards[frozenset[str]] = field(default_factory=Shards)  # its server fields' words
    tool_kinds: Shards[frozenset[str]] = field(default_factory=Shards)  # argument kinds its parameters take
    tool_texts: Shards[str] = field(default_factory=Shards)  # what the capability judge reads of a tool

    @classmethod
    def from_documents(cls, documents: Sequence[ToolDocument]) -> CatalogTerms:
        with collection_held():
            return cls.empty().updated(documents, ())

    @classmethod
    def empty(cls) -> CatalogTerms:
        return cls(Shards(), Shards(), Shards(), Shards(), Shards(), Shards())

    def updated(self, documents: Sequence[ToolDocument], removed: Iterable[str]) -> CatalogTerms:
        """These terms with the tools ``removed`` (ids) taken out and ``documents`` put in (a document
        of a tool already here replaces it): what ``from_documents`` gives for the new catalog, at the
        cost of what changed (a registration at 100k tools reads its server's tools' words only, and
        copies no map nor matrix of the catalog's size)."""
        tool_words, original = self.tool_words.edit(), self.tool_original_words.edit()
        names, actions = self.tool_name_words.edit(), self.tool_actions.edit()
        name_tokens, members = self.tool_name_tokens.edit(), self.power_members.edit()
        own_words, power_names = self.power_own_words.edit(), self.power_name_words.edit()
        lost_sets: Counter[frozenset[str]] = Counter()
        lost: dict[str, set[str]] = {}  # server -> its tools taken out
        gone = {t for t in {*removed, *(doc.id for doc in documents)} if t in tool_words}
        for tool_id in gone:
            lost_sets[tool_words.pop(tool_id) or _NONE] += 1
            for held in (original, names, actions, name_tokens):
                held.pop(tool_id)
            lost.setdefault(server_of(tool_id), set()).add(tool_id)
        added_sets: Counter[frozenset[str]] = Counter()
        added: dict[str, set[str]] = {}  # server -> its tools put in
        per_field: dict[str, list[frozenset[str]]] = {}
        new_words: dict[str, frozenset[str]] = {}
        reader = _Reader()
        read_all = [(doc, reader.read(doc)) for doc in documents]
        for doc, read in read_all:
            per_field[doc.id], new_words[doc.id] = read.fields, read.every
            if doc.server not in added:  # a server's own fields are the same on each of its tools
                own_words[doc.server], power_names[doc.server] = reader.server(read)
                added[doc.server] = set()
            added[doc.server].add(doc.id)
            added_sets[read.every] += 1
        tool_words.update(new_words)
        original.update({doc.id: read.own for doc, read in read_all})
        names.update({doc.id: read.names for doc, read in read_all})
        actions.update({doc.id: read.actions for doc, read in read_all})
        name_tokens.update({doc.id: read.name_tokens for doc, read in read_all})
        power_words, power_tools = self.power_words.edit(), self.power_tools.edit()
        changed_powers: dict[str, frozenset[str]] = {}
        emptied: set[str] = set()
        for server in lost.keys() | added.keys():
            tools = ((members.get(server) or _NONE) - lost.get(server, set())).union(added.get(server, ()))
            if not tools:  # a server with no tool left is no power of the terms
                for gone_power in (power_words, members, own_words, power_names):
                    gone_power.pop(server)
                power_tools.pop(server)
                emptied.add(server)
                continue
            union = own_words[server].union(*(tool_words[t] for t in tools))
            changed_powers[server] = union
            power_tools[server] = len(tools)
            members[server] = frozenset(tools)
        power_words.update(changed_powers)
        frequency = self.document_frequency.edit()
        added_words, lost_words = word_counts(added_sets), word_counts(lost_sets)
        for word in added_words.keys() | lost_words.keys():
            n = (frequency.get(word) or 0) + added_words[word] - lost_words[word]
            if n > 0:
                frequency[word] = n
            else:
                frequency.pop(word)
        words = extended(self.words, per_field, new_words, changed_powers, (gone, emptied))
        return CatalogTerms(
            tool_words=tool_words.done(),
            tool_original_words=original.done(),
            tool_name_words=names.done(),
            tool_actions=actions.done(),
            power_words=power_words.done(),
            power_name_words=power_names.done(),
            document_frequency=frequency.done(),
            words=words,
            tool_name_tokens=name_tokens.done(),
            power_tools=power_tools.done(),
            power_members=members.done(),
            power_own_words=own_words.done(),
            tool_kinds=self._kinds(documents, gone),
            tool_texts=self._texts(documents, gone),
        )

    def _texts(self, documents: Sequence[ToolDocument], gone: Iterable[str]) -> Shards[str]:
        """The tools' judge texts (name, server, approved description), with ``gone`` taken out and
        ``documents`` put in."""
        texts = self.tool_texts.edit()
        for tool_id in gone:
            texts.pop(tool_id)
        texts.update(
            {
                doc.id: judge_text(doc.name, doc.server, str(doc.fields.get("description") or ""))
                for doc in documents
            }
        )
        return texts.done()

    def _kinds(self, documents: Sequence[ToolDocument], gone: Iterable[str]) -> Shards[frozenset[str]]:
        """The tools' argument kinds, with ``gone`` taken out and ``documents`` put in."""
        kinds = self.tool_kinds.edit()
        for tool_id in gone:
            kinds.pop(tool_id)
        kinds.update({doc.id: kinds_of(doc) for doc in documents})
        return kinds.done()

    @property
    def tools(self) -> int:
        return len(self.tool_words)

    @property
    def powers(self) -> int:
        return len(self.power_words)

    def idf(self, word: str) -> float:
        """BM25's idf over the catalog's tools; a word no tool has weighs most."""
        n, df = self.tools, self.document_frequency.get(word, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _coverage(query: set[str], words: frozenset[str] | set[str], weight: dict[str, float]) -> float:
    total = sum(weight[t] for t in query)
    return sum(weight[t] for t in query if t in words) / total if total > 0 else 0.0


def _share_said(name: frozenset[str], query: set[str]) -> float:
    return len(name & query) / len(name) if name else 0.0


def action_match(pairs: tuple[tuple[str, ...], ...], query: set[str]) -> float:
    """1 when some action-entity pair has its verb and its whole object in the query, 0.5 for one."""
    best = 0.0
    for pair in pairs:
        if len(pair) == 1:
            best = max(best, float(pair[0] in query))
        else:
            best = max(best, 0.5 * (pair[0] in query) + 0.5 * all(t in query for t in pair[1:]))
    return best


def _channel_rank(best: dict[str, float], power: str, *, positive_only: bool) -> float:
    """log(1 + the power's rank among the channel's powers, best first, ties by name); unranked: 10."""
    mine = best.get(power)
    if mine is None or (positive_only and mine <= 0):
        return math.log1p(_UNRANKED)
    rank = sum(1 for s, v in best.items() if v > mine or (v == mine and s < power))
    return math.log1p(min(rank, _UNRANKED))


def evidence_of(
    query: str,
    hits: Sequence[SearchHit],
    powers: Sequence[PowerCandidate],
    terms: CatalogTerms,
    *,
    query_vector: np.ndarray | None = None,
    reference: np.ndarray | None = None,
    arguments: Sequence[Argument] = (),
    server_hits: Sequence[SearchHit] = (),
    capability: float = 0.0,
) -> dict[str, float]:
    """The confidence features of one resolution (see the module docstring); always every feature.
    ``arguments``: the specific arguments taken out of the request; ``server_hits``: the server
    documents' hits; ``capability``: the judge's verdict on the top power's first tool."""
    words = set(tokenize(query))
    out = dict.fromkeys(FEATURES, 0.0)
    out["query_terms_log"] = math.log1p(len(words))
    out["catalog_servers_log"] = math.log1p(min(terms.powers, MAX_SERVERS))
    out["catalog_tools_log"] = math.log1p(min(terms.tools, MAX_TOOLS))
    if query_vector is not None and reference is not None and reference.size:
        out["reference_cosine"] = float(query_vector @ reference)
    if not hits or not powers:
        return out
    cosines: list[float] = []
    best_cosine: dict[str, float] = {}
    best_keyword: dict[str, float] = {}
    for hit in hits:
        server, cosine, keyword = hit.server, hit.vector_score, hit.keyword_score
        if cosine is not None:
            cosines.append(cosine)
            if cosine > best_cosine.get(server, -2.0):
                best_cosine[server] = cosine
        if keyword > best_keyword.get(server, -1.0):
            best_keyword[server] = keyword
    top = powers[0].name
    out["top_cosine"] = max(cosines) if cosines else 0.0
    out["top_power_cosine"] = best_cosine.get(top, 0.0)
    others = [v for k, v in best_cosine.items() if k != top]
    out["cosine_margin"] = out["top_power_cosine"] - (max(others) if others else 0.0)
    if cosines:
        mean = sum(cosines) / len(cosines)
        out["candidate_cosine_mean"] = mean
        out["candidate_cosine_std"] = math.sqrt(
            max(sum(c * c for c in cosines) / len(cosines) - mean * mean, 0.0)
        )
    out["cosine_above_reference"] = out["top_cosine"] - out["reference_cosine"]
    scores = [p.score for p in powers[:3]] + [0.0] * 3
    out["power_score_1"], out["power_score_2"], out["power_score_3"] = scores[0], scores[1], scores[2]
    out["power_margin"] = scores[0] - scores[1]
    out["power_ratio"] = scores[1] / scores[0] if scores[0] > 0 else 1.0
    out["vector_rank"] = _channel_rank(best_cosine, top, positive_only=False)
    out["keyword_rank"] = _channel_rank(best_keyword, top, positive_only=True)
    out["channels_agree"] = float(out["vector_rank"] == 0.0 and out["keyword_rank"] == 0.0)
    weight = {w: terms.idf(w) for w in words}
    tool = hits[0].id
    out["tool_coverage"] = _coverage(words, terms.tool_words.get(tool, frozenset()), weight)
    out["tool_coverage_original"] = _coverage(words, terms.tool_original_words.get(tool, frozenset()), weight)
    out["power_coverage"] = _coverage(words, terms.power_words.get(top, frozenset()), weight)
    if len(powers) > 1:
        out["runner_up_coverage"] = _coverage(
            words, terms.power_words.get(powers[1].name, frozenset()), weight
        )
    out["catalog_coverage"] = _coverage(words, terms.document_frequency.keys() & words, weight)
    out["tool_name_overlap"] = _share_said(terms.tool_name_words.get(tool, frozenset()), words)
    out["server_name_overlap"] = _share_said(terms.power_name_words.get(top, frozenset()), words)
    out["action_match"] = action_match(terms.tool_actions.get(tool, ()), words)
    out.update(_fit(out["top_power_cosine"], tool, top, terms, arguments, server_hits))
    out["capability"] = capability
    return out


def _fit(
    cosine: float,
    tool: str,
    top: str,
    terms: CatalogTerms,
    arguments: Sequence[Argument],
    server_hits: Sequence[SearchHit],
) -> dict[str, float]:
    """Capability and argument fit of the top tool: its cosine over its server document's, and the share
    of the request's specific arguments its parameters take."""
    server_cosine = next((h.vector_score for h in server_hits if h.server == top), None)
    kinds = terms.tool_kinds.get(tool) or frozenset()
    return {
        "tool_over_server": cosine - server_cosine if server_cosine is not None else 0.0,
        "argument_fit": fits(arguments, kinds),  # type: ignore[arg-type]
    }
