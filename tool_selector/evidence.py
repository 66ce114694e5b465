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
from scipy import sparse

from tool_selector.models import PowerCandidate, SearchHit, ToolDocument
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
class WordMatrix:
    """The catalog's words as sparse 0/1 matrices, so that a query's word evidence about many tools is
    two sparse products instead of a loop: one row per tool and field (``RANKED_FIELDS``, then all the
    tool's words), one row per power (all its words)."""

    vocabulary: dict[str, int]
    tool_rows: dict[str, int]  # tool id -> its first row in ``fields``
    power_rows: dict[str, int]
    fields: sparse.csr_matrix
    powers: sparse.csr_matrix

    @classmethod
    def build(
        cls,
        per_field: dict[str, list[set[str]]],
        tool_words: dict[str, frozenset[str]],
        power_words: dict[str, set[str]],
    ) -> WordMatrix:
        vocabulary: dict[str, int] = {}
        columns: list[int] = []
        pointers = [0]
        tool_rows: dict[str, int] = {}
        for tool_id, fields in per_field.items():
            tool_rows[tool_id] = len(pointers) - 1
            for words in (*fields, tool_words[tool_id]):
                columns.extend(vocabulary.setdefault(w, len(vocabulary)) for w in sorted(words))
                pointers.append(len(columns))
        power_columns: list[int] = []
        power_pointers = [0]
        power_rows: dict[str, int] = {}
        for power, words in power_words.items():
            power_rows[power] = len(power_pointers) - 1
            power_columns.extend(vocabulary.setdefault(w, len(vocabulary)) for w in sorted(words))
            power_pointers.append(len(power_columns))
        size = max(len(vocabulary), 1)

        def matrix(cols: list[int], ptrs: list[int]) -> sparse.csr_matrix:
            data = np.ones(len(cols), dtype=np.float64)
            return sparse.csr_matrix(
                (data, np.asarray(cols, dtype=np.int64), ptrs), shape=(len(ptrs) - 1, size)
            )

        return cls(
            vocabulary,
            tool_rows,
            power_rows,
            matrix(columns, pointers),
            matrix(power_columns, power_pointers),
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

    @classmethod
    def from_documents(cls, documents: Sequence[ToolDocument]) -> CatalogTerms:
        tool_words: dict[str, frozenset[str]] = {}
        original: dict[str, frozenset[str]] = {}
        names: dict[str, frozenset[str]] = {}
        actions: dict[str, tuple[tuple[str, ...], ...]] = {}
        power_words: dict[str, set[str]] = {}
        power_names: dict[str, frozenset[str]] = {}
        frequency: Counter[str] = Counter()
        per_field: dict[str, list[set[str]]] = {}
        name_tokens: dict[str, tuple[str, ...]] = {}
        power_tools: Counter[str] = Counter()
        for doc in documents:
            power_tools[doc.server] += 1
            fields = [_tokens(doc.fields, (name,)) for name in RANKED_FIELDS]
            per_field[doc.id] = fields
            by_name = dict(zip(RANKED_FIELDS, fields, strict=True))
            name_tokens[doc.id] = tuple(tokenize(field_text(doc.fields.get("name", ""))))
            own = set().union(*(by_name[n] for n in ORIGINAL_FIELDS))
            every = frozenset(own.union(*(by_name[n] for n in ENRICHED_FIELDS)))
            original[doc.id] = frozenset(own)
            tool_words[doc.id] = every
            names[doc.id] = frozenset(by_name["name"]) - _GENERIC_NAME_TOKENS
            pairs = doc.fields.get("action_entities") or []
            actions[doc.id] = tuple(t for t in (tuple(tokenize(p)) for p in pairs if isinstance(p, str)) if t)
            if doc.server not in power_words:  # a server's own fields are the same on each of its tools
                power_words[doc.server] = set().union(*(by_name[n] for n in SERVER_FIELDS))
                power_names[doc.server] = frozenset(by_name["server_name"]) - _GENERIC_NAME_TOKENS
            power_words[doc.server] |= every
            frequency.update(every)
        return cls(
            tool_words=tool_words,
            tool_original_words=original,
            tool_name_words=names,
            tool_actions=actions,
            power_words={k: frozenset(v) for k, v in power_words.items()},
            power_name_words=power_names,
            document_frequency=dict(frequency),
            words=WordMatrix.build(per_field, tool_words, power_words),
            tool_name_tokens=name_tokens,
            power_tools=dict(power_tools),
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
