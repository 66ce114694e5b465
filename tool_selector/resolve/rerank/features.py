"""What the learned ranker reads about each candidate tool of one query.

Every feature is computed the same way whatever the backend: scores come from the same fusion on both
backends, cosines from our own vectors, word evidence from
:class:`~tool_selector.resolve.evidence.CatalogTerms`
(built from the catalog store's documents, never from a backend). By family:

- channels: the fused hybrid score, the raw keyword score (and its share of the query's best), the cosine,
  each with the candidate's rank and its gap to the query's best; the best of each over the request's
  parts when it splits into steps;
- power: the score and rank of the candidate's power (its best tools' fused scores), how many of its tools
  are candidates, and the power's own server document (score, cosine, rank) when the index has one;
- words: the IDF-weighted share of the query's words found in each field of the tool (name, description,
  parameters, each enrichment field, its server's name, description and tags), in the whole tool and in
  its power; how much of the tool's and the server's names the query says, whether two adjacent words of
  the tool's name are adjacent in the query, the best action-entity pair the query matches;
- size: the query's length, its number of parts, the size of the candidate's server.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tool_selector.core.models import SearchHit
from tool_selector.resolve.evidence import RANKED_FIELDS, CatalogTerms

_UNRANKED = 100.0

RANK_FEATURES: tuple[str, ...] = (
    "fused",
    "fused_gap",
    "fused_rank",
    "keyword",
    "keyword_share",
    "keyword_rank",
    "cosine",
    "cosine_gap",
    "cosine_rank",
    "part_fused",
    "part_cosine",
    "part_rank",
    "power_score",
    "power_gap",
    "power_rank",
    "power_candidates",
    "server_score",
    "server_cosine",
    "server_rank",
    *(f"cover_{name}" for name in RANKED_FIELDS),
    "cover_tool",
    "cover_power",
    "name_said",
    "name_bigram",
    "server_name_said",
    "query_terms_log",
    "parts",
    "server_tools_log",
)


@dataclass(frozen=True)
class Candidates:
    """One query's candidates and the evidence about them the backends returned.

    ``hits`` are the candidates in the order the fused search put them (whole request and parts merged,
    each tool with its best scores); ``part_hits`` are each part's own hits; ``power_scores`` the
    powers' scores from the fused hits; ``server_hits`` the server documents' hits, best first.
    """

    words: Sequence[str]
    hits: Sequence[SearchHit]
    power_scores: Mapping[str, float]
    part_hits: Sequence[Sequence[SearchHit]] = ()
    server_hits: Sequence[SearchHit] = ()
    parts: int = 0
    extra: Mapping[str, float] = field(default_factory=dict)


def _ranks(values: Sequence[float]) -> np.ndarray:
    """log1p of each value's rank, best (largest) first; ties share the better rank."""
    arr = np.asarray(values, dtype=np.float64)
    order = np.argsort(-arr, kind="stable")
    ranks = np.empty(len(arr))
    ranks[order] = np.arange(len(arr))
    return np.log1p(ranks)


def _adjacent_pairs(tokens: Sequence[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(tokens))


def rank_features(candidates: Candidates, terms: CatalogTerms) -> np.ndarray:
    """One row of :data:`RANK_FEATURES` per candidate hit, in the hits' order."""
    hits = candidates.hits
    n = len(hits)
    out = np.zeros((n, len(RANK_FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    col = {name: i for i, name in enumerate(RANK_FEATURES)}
    ids = [h.id for h in hits]
    fused = [h.score for h in hits]
    keyword = [h.keyword_score for h in hits]
    cosine = [h.vector_score if h.vector_score is not None else 0.0 for h in hits]
    best_kw = max(keyword)
    out[:, col["fused"]] = fused
    out[:, col["fused_gap"]] = max(fused) - np.asarray(fused)
    out[:, col["fused_rank"]] = _ranks(fused)
    out[:, col["keyword"]] = np.log1p(np.maximum(keyword, 0.0))
    out[:, col["keyword_share"]] = np.asarray(keyword) / best_kw if best_kw > 0 else 0.0
    out[:, col["keyword_rank"]] = _ranks(keyword)
    out[:, col["cosine"]] = cosine
    out[:, col["cosine_gap"]] = max(cosine) - np.asarray(cosine)
    out[:, col["cosine_rank"]] = _ranks(cosine)
    _part_features(candidates, ids, out, col)
    _power_features(candidates, terms, out, col)
    _word_features(candidates, terms, ids, out, col)
    out[:, col["query_terms_log"]] = math.log1p(len(set(candidates.words)))
    out[:, col["parts"]] = candidates.parts
    return out


def _part_features(candidates: Candidates, ids: list[str], out: np.ndarray, col: dict[str, int]) -> None:
    """Each candidate's best fused score, cosine and rank over the request's steps (when it has some)."""
    if candidates.part_hits:
        part_fused: dict[str, float] = {}
        part_cosine: dict[str, float] = {}
        part_rank: dict[str, int] = {}
        for part in candidates.part_hits:
            for rank, hit in enumerate(part):
                part_fused[hit.id] = max(part_fused.get(hit.id, 0.0), hit.score)
                if hit.vector_score is not None:
                    part_cosine[hit.id] = max(part_cosine.get(hit.id, -1.0), hit.vector_score)
                part_rank[hit.id] = min(part_rank.get(hit.id, rank), rank)
        out[:, col["part_fused"]] = [part_fused.get(i, 0.0) for i in ids]
        out[:, col["part_cosine"]] = [part_cosine.get(i, 0.0) for i in ids]
        out[:, col["part_rank"]] = [math.log1p(part_rank.get(i, _UNRANKED)) for i in ids]
    else:
        out[:, col["part_fused"]] = out[:, col["fused"]]
        out[:, col["part_cosine"]] = out[:, col["cosine"]]
        out[:, col["part_rank"]] = out[:, col["fused_rank"]]


def _power_features(
    candidates: Candidates, terms: CatalogTerms, out: np.ndarray, col: dict[str, int]
) -> None:
    """The candidate's power: its fused score and rank, its candidates, its server document's match."""
    hits = candidates.hits
    powers = candidates.power_scores
    power_order = {name: rank for rank, name in enumerate(sorted(powers, key=lambda p: (-powers[p], p)))}
    top_power = max(powers.values()) if powers else 0.0
    per_power: dict[str, int] = {}
    for hit in hits:
        per_power[hit.server] = per_power.get(hit.server, 0) + 1
    servers = {h.server: (rank, h) for rank, h in enumerate(candidates.server_hits)}
    for row, hit in enumerate(hits):
        power = powers.get(hit.server, 0.0)
        out[row, col["power_score"]] = power
        out[row, col["power_gap"]] = top_power - power
        out[row, col["power_rank"]] = math.log1p(power_order.get(hit.server, _UNRANKED))
        out[row, col["power_candidates"]] = math.log1p(per_power[hit.server])
        seen = servers.get(hit.server)
        if seen is not None:
            out[row, col["server_score"]] = seen[1].score
            out[row, col["server_cosine"]] = seen[1].vector_score or 0.0
            out[row, col["server_rank"]] = math.log1p(seen[0])
        else:
            out[row, col["server_rank"]] = math.log1p(_UNRANKED)
        out[row, col["server_tools_log"]] = math.log1p(terms.power_tools.get(hit.server, 0))


def _row_sums(matrix: Any, rows: np.ndarray, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``rows`` of a 0/1 CSR matrix: the sum of ``vector``'s rows at its columns, and how
    many columns it has. Plain numpy on the CSR arrays (a sparse library's row indexing costs more)."""
    starts, ends = matrix.indptr[rows], matrix.indptr[rows + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros((len(rows), vector.shape[1])), lengths
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    columns = matrix.indices[np.arange(total) + offsets]
    owner = np.repeat(np.arange(len(rows)), lengths)
    picked = vector[columns]
    sums = np.column_stack(
        [np.bincount(owner, weights=picked[:, k], minlength=len(rows)) for k in range(vector.shape[1])]
    )
    return sums, lengths


def _word_features(
    candidates: Candidates, terms: CatalogTerms, ids: list[str], out: np.ndarray, col: dict[str, int]
) -> None:
    """Word coverage per field as sparse products: rows (tool x field) times the query's IDF weights."""
    matrix = terms.words
    words = [w for w in dict.fromkeys(candidates.words)]
    if matrix is None or not words:
        return
    weight = {w: terms.idf(w) for w in words}
    total = sum(weight.values())
    if total <= 0:
        return
    query = np.zeros((len(matrix.vocabulary) or 1, 2))
    for word in words:
        column = matrix.vocabulary.get(word)
        if column is not None:
            query[column, 0] = weight[word] / total
            query[column, 1] = 1.0
    width = len(RANKED_FIELDS) + 1
    rows = np.asarray([matrix.tool_rows.get(i, -1) for i in ids])
    known = rows >= 0
    if known.any():
        picked = (rows[known][:, None] + np.arange(width)[None, :]).ravel()
        sums, lengths = _row_sums(matrix.fields, picked, query)
        covered = sums[:, 0].reshape(-1, width)
        said = sums[:, 1].reshape(-1, width)
        lengths = lengths.reshape(-1, width)
        first = col[f"cover_{RANKED_FIELDS[0]}"]
        out[known, first : first + len(RANKED_FIELDS)] = covered[:, : len(RANKED_FIELDS)]
        out[known, col["cover_tool"]] = covered[:, -1]
        name, server_name = RANKED_FIELDS.index("name"), RANKED_FIELDS.index("server_name")
        out[known, col["name_said"]] = said[:, name] / np.maximum(lengths[:, name], 1)
        out[known, col["server_name_said"]] = said[:, server_name] / np.maximum(lengths[:, server_name], 1)
    power_rows = np.asarray([matrix.power_rows.get(h.server, -1) for h in candidates.hits])
    have = power_rows >= 0
    if have.any():
        out[have, col["cover_power"]] = _row_sums(matrix.powers, power_rows[have], query)[0][:, 0]
    pairs = _adjacent_pairs(list(candidates.words))
    if pairs:
        for row, hit in enumerate(candidates.hits):
            tokens = terms.tool_name_tokens.get(hit.id, ())
            if len(tokens) > 1 and _adjacent_pairs(tokens) & pairs:
                out[row, col["name_bigram"]] = 1.0
