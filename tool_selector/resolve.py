"""Stage 4, resolve: a query -> ranked tools and powers (servers), each with score and match type,
plus one absolute confidence that the top power is right.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from tool_selector.confidence import Calibration, evidence_of
from tool_selector.embedding import Embedder
from tool_selector.errors import InvalidInputError
from tool_selector.models import (
    MatchType,
    PowerCandidate,
    Resolution,
    SearchHit,
    SearchMode,
    ToolCandidate,
)
from tool_selector.search.backend import Fusion, SearchBackend, SearchQuery

logger = logging.getLogger(__name__)


def check_query(query: str, max_chars: int) -> str:
    """The query stripped, or an InvalidInputError that says what to change."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError(
            "The query is empty.", hint="Describe in words what you want to do, e.g. 'get the current time'."
        )
    if len(query) > max_chars:
        raise InvalidInputError(
            f"The query is {len(query):,} characters long; the limit is {max_chars:,}.",
            hint="Shorten it to the task itself, or raise max_query_chars in the settings.",
            length=len(query),
            limit=max_chars,
        )
    return query.strip()


def _match_type(hit: SearchHit, mode: SearchMode) -> MatchType:
    if mode == "keyword":
        return MatchType.KEYWORD
    if mode == "semantic" or hit.keyword_score <= 0:
        return MatchType.SEMANTIC
    return MatchType.HYBRID


def rank_powers(hits: Sequence[SearchHit], mode: SearchMode, *, support: float = 0.1) -> list[PowerCandidate]:
    """A power scores its best tool's fused score plus ``support`` times its second best."""
    by_server: dict[str, list[SearchHit]] = {}
    for hit in hits:
        by_server.setdefault(hit.server, []).append(hit)
    powers = []
    for server, server_hits in by_server.items():
        scores = sorted((h.score for h in server_hits), reverse=True)
        score = scores[0] + (support * scores[1] if len(scores) > 1 else 0.0)
        powers.append(
            PowerCandidate(
                name=server,
                score=round(score, 6),
                match_type=_match_type(server_hits[0], mode),
                tools=[h.id for h in server_hits],
            )
        )
    powers.sort(key=lambda p: (-p.score, p.name))
    return powers


class Resolver:
    """Ranks tools and powers for a query with weighted hybrid search, and says how sure it is."""

    def __init__(
        self,
        backend: SearchBackend,
        embedder: Embedder,
        calibration: Calibration,
        *,
        alpha: float,
        field_boosts: dict[str, float],
        candidates: int = 100,
        fusion: Fusion = "relative_score",
        max_query_chars: int = 32_000,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.calibration = calibration
        self.alpha = alpha
        self.field_boosts = dict(field_boosts)
        self.candidates = candidates
        self.fusion: Fusion = fusion
        self.max_query_chars = max_query_chars

    def resolve(
        self, query: str, *, mode: SearchMode = "hybrid", tools: int = 10, powers: int = 10
    ) -> Resolution:
        text = check_query(query, self.max_query_chars)
        if mode not in ("keyword", "semantic", "hybrid"):
            raise InvalidInputError(f"Unknown search mode {mode!r}.", hint="Use keyword, semantic or hybrid.")
        alpha = {"keyword": 0.0, "semantic": 1.0, "hybrid": self.alpha}[mode]
        vector = self.embedder.embed_query(text)
        hits = self.backend.hybrid_search(
            SearchQuery(
                text=text,
                vector=vector,
                alpha=alpha,
                limit=self.candidates,
                field_boosts=self.field_boosts,
                fusion=self.fusion,
                candidates=self.candidates,
            )
        )
        ranked_powers = rank_powers(hits, mode)
        evidence = evidence_of(text, hits, ranked_powers)
        confidence = self.calibration.probability(evidence) if hits else 0.0
        return Resolution(
            query=text,
            mode=mode,
            tools=[
                ToolCandidate(
                    id=h.id,
                    server=h.server,
                    name=h.name,
                    score=round(h.score, 6),
                    match_type=_match_type(h, mode),
                )
                for h in hits[:tools]
            ],
            powers=ranked_powers[:powers],
            confidence=round(confidence, 4),
            features={k: round(v, 4) for k, v in evidence.items()},
        )
