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

import numpy as np

from tool_selector.models import PowerCandidate, SearchHit, ToolDocument
from tool_selector.search.text import field_text, tokenize
from tool_selector.wordmatrix import WordMatrix, extended

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


def _tokens(fields: dict[str, str | list[str]], names: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for name in names:
        value = fields.get(name)
        if value:
            out.update(tokenize(field_text(value)))
    return out


@dataclass(frozen=True)
class _DocTerms:
    """What the terms read from one tool document."""

    fields: list[set[str]]
    name_tokens: tuple[str, ...]
    own: frozenset[str]
    every: frozenset[str]
    names: frozenset[str]
    actions: tuple[tuple[str, ...], ...]
    server_words: frozenset[str]
    server_names: frozenset[str]

    @classmethod
    def of(cls, doc: ToolDocument) -> _DocTerms:
        fields = [_tokens(doc.fields, (name,)) for name in RANKED_FIELDS]
        by_name = dict(zip(RANKED_FIELDS, fields, strict=True))
        own = set().union(*(by_name[n] for n in ORIGINAL_FIELDS))
        pairs = doc.fields.get("action_entities") or []
        return cls(
            fields=fields,
            name_tokens=tuple(tokenize(field_text(doc.fields.get("name", "")))),
            own=frozenset(own),
            every=frozenset(own.union(*(by_name[n] for n in ENRICHED_FIELDS))),
            names=frozenset(by_name["name"]) - _GENERIC_NAME_TOKENS,
            actions=tuple(t for t in (tuple(tokenize(p)) for p in pairs if isinstance(p, str)) if t),
            server_words=frozenset().union(*(by_name[n] for n in SERVER_FIELDS)),
            server_names=frozenset(by_name["server_name"]) - _GENERIC_NAME_TOKENS,
        )


@dataclass(frozen=True)
class CatalogTerms:
    """The words of a catalog, per tool and per power, with their document frequencies over tools.

    Built from the same documents the index is built from (``tool_selector.indexing.build_documents``),
    so both backends see the same numbers. Immutable: a changed catalog builds a new one.
    """

    tool_words: dict[str, frozenset[str]]
    tool_original_words: dict[str, frozenset[str]]
    tool_name_words: dict[str, frozenset[str]]
    tool_actions: dict[str, tuple[tuple[str, ...], ...]]
    power_words: dict[str, frozenset[str]]
    power_name_words: dict[str, frozenset[str]]
    document_frequency: dict[str, int] = field(default_factory=dict)
    words: WordMatrix | None = None
    tool_name_tokens: dict[str, tuple[str, ...]] = field(default_factory=dict)
    power_tools: dict[str, int] = field(default_factory=dict)
    power_members: dict[str, frozenset[str]] = field(default_factory=dict)  # power -> its tool ids
    power_own_words: dict[str, frozenset[str]] = field(default_factory=dict)  # its server fields' words

    @classmethod
    def from_documents(cls, documents: Sequence[ToolDocument]) -> CatalogTerms:
        return cls.empty().updated(documents, ())

    @classmethod
    def empty(cls) -> CatalogTerms:
        return cls({}, {}, {}, {}, {}, {}, words=WordMatrix.build({}, {}, {}))

    def updated(self, documents: Sequence[ToolDocument], removed: Iterable[str]) -> CatalogTerms:
        """These terms with the tools ``removed`` (ids) taken out and ``documents`` put in (a document
        of a tool already here replaces it): what ``from_documents`` gives for the new catalog, at the
        cost of what changed (a registration at 100k tools does not re-read every tool's words)."""
        tool_words = dict(self.tool_words)
        original = dict(self.tool_original_words)
        names = dict(self.tool_name_words)
        actions = dict(self.tool_actions)
        name_tokens = dict(self.tool_name_tokens)
        frequency = Counter(self.document_frequency)
        members = {k: set(v) for k, v in self.power_members.items()}
        own_words = dict(self.power_own_words)
        power_names = dict(self.power_name_words)
        touched: set[str] = set()
        gone = {*removed, *(doc.id for doc in documents)} & tool_words.keys()
        for tool_id in gone:
            frequency.subtract(tool_words.pop(tool_id))
            original.pop(tool_id, None)
            names.pop(tool_id, None)
            actions.pop(tool_id, None)
            name_tokens.pop(tool_id, None)
            server = tool_id.rpartition("::")[0]
            members.get(server, set()).discard(tool_id)
            touched.add(server)
        per_field: dict[str, list[set[str]]] = {}
        seen: set[str] = set()  # servers whose own fields this update has read
        for doc in documents:
            read = _DocTerms.of(doc)
            per_field[doc.id] = read.fields
            name_tokens[doc.id], original[doc.id], tool_words[doc.id] = read.name_tokens, read.own, read.every
            names[doc.id], actions[doc.id] = read.names, read.actions
            if doc.server not in seen:  # a server's own fields are the same on each of its tools
                seen.add(doc.server)
                own_words[doc.server], power_names[doc.server] = read.server_words, read.server_names
            members.setdefault(doc.server, set()).add(doc.id)
            touched.add(doc.server)
            frequency.update(read.every)
        power_words = dict(self.power_words)
        power_tools = dict(self.power_tools)
        changed_powers: dict[str, set[str]] = {}
        for server in touched:
            tools = members.get(server, set())
            if not tools:  # a server with no tool left is no power of the terms
                power_words.pop(server, None)
                power_tools.pop(server, None)
                members.pop(server, None)
                own_words.pop(server, None)
                power_names.pop(server, None)
                continue
            words = set(own_words[server]).union(*(tool_words[t] for t in tools))
            power_words[server] = frozenset(words)
            power_tools[server] = len(tools)
            changed_powers[server] = words
        matrix = self.words if self.words is not None else WordMatrix.build({}, {}, {})
        return CatalogTerms(
            tool_words=tool_words,
            tool_original_words=original,
            tool_name_words=names,
            tool_actions=actions,
            power_words=power_words,
            power_name_words=power_names,
            document_frequency={w: n for w, n in frequency.items() if n > 0},
            words=extended(
                matrix,
                per_field,
                {k: tool_words[k] for k in per_field},
                changed_powers,
                (gone, touched - power_words.keys()),
            ),
            tool_name_tokens=name_tokens,
            power_tools=power_tools,
            power_members={k: frozenset(v) for k, v in members.items()},
            power_own_words=own_words,
        )

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
) -> dict[str, float]:
    """The confidence features of one resolution (see the module docstring); always every feature."""
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
    return out
