"""Stage 4, resolve: a query -> ranked tools and powers (servers), each with score and match type,
plus two absolute probabilities: that the top power is right, and that a right one is in the top three.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from tool_selector.core.arguments import Argument, extract, fits
from tool_selector.core.choices import SearchMode
from tool_selector.core.errors import CalibrationError, InvalidInputError
from tool_selector.core.models import (
    MatchType,
    PowerCandidate,
    QueryPart,
    Resolution,
    SearchHit,
    ToolCandidate,
    with_score,
)
from tool_selector.embedding.embedders import Embedder
from tool_selector.resolve.confidence import Calibration
from tool_selector.resolve.evidence import CatalogTerms, evidence_of
from tool_selector.resolve.judge import CapabilityJudge
from tool_selector.resolve.parts import split_query
from tool_selector.resolve.rerank.features import Candidates, rank_features
from tool_selector.resolve.rerank.model import RankerModel
from tool_selector.resolve.spelling import corrected
from tool_selector.resolve.toolorder import ToolOrder, ToolSignals, order_tools, tool_signals
from tool_selector.search.backend import Fusion, SearchBackend, SearchQuery, Target
from tool_selector.search.text import tokenize

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


def check_request(request: str | None, max_chars: int) -> str | None:
    """The person's words stripped; None when absent or blank (the request is optional), an
    InvalidInputError that says what to change when too long or not text."""
    if request is None:
        return None
    if not isinstance(request, str):
        raise InvalidInputError(
            "The request must be text: the user's own words for this need.",
            hint="Pass the user's message as a string, or leave request out.",
        )
    if len(request) > max_chars:
        raise InvalidInputError(
            f"The request is {len(request):,} characters long; the limit is {max_chars:,}.",
            hint="Pass only the user's words of this request, or leave request out.",
            length=len(request),
            limit=max_chars,
        )
    return request.strip() or None


def with_request_arguments(own: Sequence[Argument], request: str | None) -> tuple[Argument, ...]:
    """The query's arguments, then those of the person's ``request`` the query does not repeat.

    The agent's query says the capability ("list the files of a folder"); the person's words often carry
    the values it left out ("what's in ~/notes/2024?"). These order the tools by what their parameters
    take (``fit_arguments``); the words of the request are not searched, and the confidence reads the
    query alone, as it was fitted (docs/measurements.md, "What the resolver reads")."""
    if not request:
        return tuple(own)
    arguments = list(own)
    for argument in extract(request).arguments:
        if argument not in arguments:
            arguments.append(argument)
    return tuple(arguments)


def _match_type(hit: SearchHit, mode: SearchMode) -> MatchType:
    if mode == "keyword":
        return MatchType.KEYWORD
    if mode == "semantic" or hit.keyword_score <= 0:
        return MatchType.SEMANTIC
    return MatchType.HYBRID


@dataclass(frozen=True)
class Ranking:
    """What the search found for one query, before any judgement of how sure to be."""

    text: str
    vector: np.ndarray
    hits: list[SearchHit]
    powers: list[PowerCandidate]
    parts: list[QueryPart] = field(default_factory=list)
    candidates: Candidates | None = None  # what the ranker read (None when it did not run)
    matched: str = ""  # the text the search matched: the request with its arguments taken out
    arguments: tuple[Argument, ...] = ()  # the concrete arguments taken out of it
    # what ordered each power's tools (toolorder.py): each candidate's signals, the arguments' weight
    signals: Mapping[str, ToolSignals] = field(default_factory=dict)
    argument_weight: float = 0.0


SUPPORT = 0.2  # a power's score adds this share of its second-best tool's score
BETA = 0.3  # a tool's final score adds this share of its power's score
SERVER_WEIGHT = 0.1  # a power adds this share of its server document's fused score (0 to 0.8: within noise)
RERANKED = 40  # how many of the fused candidates a ranker reorders (its file may say otherwise)
PART_POWERS = PART_TOOLS = 3  # what each step of a multi-step request lists


def rank_powers(hits: Sequence[SearchHit], mode: SearchMode) -> list[PowerCandidate]:
    """A power scores its best tool's fused score plus SUPPORT times its second best."""
    by_server: dict[str, list[SearchHit]] = {}
    for hit in hits:
        by_server.setdefault(hit.server, []).append(hit)
    powers = []
    for server, server_hits in by_server.items():
        scores = sorted((h.score for h in server_hits), reverse=True)
        score = scores[0] + (SUPPORT * scores[1] if len(scores) > 1 else 0.0)
        powers.append(  # made here from valid values: pydantic's constructor without validation
            PowerCandidate.model_construct(
                name=server,
                score=round(score, 6),
                match_type=_match_type(server_hits[0], mode),
                tools=[h.id for h in server_hits],
            )
        )
    powers.sort(key=lambda p: (-p.score, p.name))
    return powers


def merge_hits(batches: Sequence[Sequence[SearchHit]]) -> list[SearchHit]:
    """Hits of the whole query and of its parts: each tool keeps its best fused score and cosine."""
    best: dict[str, SearchHit] = {}
    for hits in batches:
        for hit in hits:
            seen = best.get(hit.id)
            if seen is None:
                best[hit.id] = hit
                continue
            cosines = [c for c in (seen.vector_score, hit.vector_score) if c is not None]
            best[hit.id] = replace(
                seen,
                score=max(seen.score, hit.score),
                keyword_score=max(seen.keyword_score, hit.keyword_score),
                vector_score=max(cosines) if cosines else None,
            )
    return sorted(best.values(), key=lambda h: (-h.score, h.id))


def boost_powers(powers: list[PowerCandidate], servers: Sequence[SearchHit]) -> list[PowerCandidate]:
    """Powers whose own server document matches the query move up: + SERVER_WEIGHT x its fused score."""
    if not servers or SERVER_WEIGHT <= 0:
        return powers
    server_score = {h.server: h.score for h in servers}
    boosted = [
        PowerCandidate.model_construct(
            name=p.name,
            score=round(p.score + SERVER_WEIGHT * server_score.get(p.name, 0.0), 6),
            match_type=p.match_type,
            tools=p.tools,
        )
        for p in powers
    ]
    return sorted(boosted, key=lambda p: (-p.score, p.name))


def rerank(hits: list[SearchHit], scores: np.ndarray) -> list[SearchHit]:
    """The first ``len(scores)`` hits in the ranker's order, scored sigmoid(raw); the rest after them,
    their scores scaled below the lowest reranked one (their order kept)."""
    sigmoid = (1.0 / (1.0 + np.exp(-np.clip(scores[: len(hits)], -40, 40)))).tolist()
    head = [with_score(h, s) for h, s in zip(hits, sigmoid, strict=False)]
    head.sort(key=lambda h: (-h.score, h.id))
    tail = hits[len(head) :]
    if tail and head:
        floor, top = head[-1].score, max(tail[0].score, 1e-9)
        tail = [with_score(h, 0.99 * floor * max(h.score, 0.0) / top) for h in tail]
    return head + tail


def fit_arguments(
    hits: list[SearchHit], arguments: Sequence[Argument], terms: CatalogTerms, weight: float
) -> list[SearchHit]:
    """Tools whose parameters take the request's specific arguments (a URL to a url parameter, a path
    to a path, a time zone to a timezone) move up: + ``weight`` x the share of them they take."""
    kinds = terms.tool_kinds
    fitted = []
    for hit in hits:
        share = fits(arguments, kinds.get(hit.id) or frozenset())  # type: ignore[arg-type]
        fitted.append(with_score(hit, hit.score + weight * share) if share > 0 else hit)
    return sorted(fitted, key=lambda h: (-h.score, h.id))


def step_of(text: str, hits: list[SearchHit], mode: SearchMode) -> QueryPart:
    """One step of a multi-step request and what its own search ranked best."""
    powers = rank_powers(hits, mode)
    return QueryPart(
        text=text,
        powers=[p.name for p in powers[:PART_POWERS]],
        tools=[h.id for h in rescore_with_powers(hits, powers)[:PART_TOOLS]],
    )


def rescore_with_powers(hits: list[SearchHit], powers: list[PowerCandidate]) -> list[SearchHit]:
    """Tools of strong powers move up: final = fused + BETA x the power's score."""
    power_score = {p.name: p.score for p in powers}
    rescored = [with_score(h, h.score + BETA * power_score.get(h.server, 0.0)) for h in hits]
    return sorted(rescored, key=lambda h: (-h.score, h.id))


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
        server_field_boosts: dict[str, float] | None = None,
        ranker: RankerModel | None = None,
        arguments: bool = False,
        argument_weight: float = 0.0,
        tool_order: ToolOrder | None = None,
        spelling: bool = False,
        capability: CapabilityJudge | None = None,
    ) -> None:
        if capability is None and "capability" in calibration.features:
            raise CalibrationError(
                f"The confidence calibration {calibration.version!r} reads the capability judge, which is "
                "off.",
                hint="Set judge to true, or point calibration_file at a calibration fitted without it.",
            )
        reference = calibration.reference_vector
        if reference.size and reference.shape != (embedder.dim,):
            raise CalibrationError(
                f"The confidence calibration {calibration.version!r} was fitted with vectors of "
                f"{reference.size} dimensions, but the embedder {embedder.model_id} makes {embedder.dim}.",
                hint="Re-run `tool-selector lab calibrate` with this embedding model, or unset "
                "calibration_file.",
            )
        self.backend = backend
        self.embedder = embedder
        self.calibration = calibration
        self.alpha = alpha
        self.field_boosts = dict(field_boosts)
        self.candidates = candidates
        self.fusion: Fusion = fusion
        self.max_query_chars = max_query_chars
        self.server_field_boosts = dict(server_field_boosts or {})
        self.ranker = ranker
        self.arguments = arguments  # take concrete arguments out of the text that is matched
        self.argument_weight = argument_weight  # what a tool whose parameters take them gains
        self.tool_order = tool_order or ToolOrder()  # the order of each power's tools (toolorder.py)
        self.spelling = spelling  # misspelled words read as the catalog's (spelling.py)
        self.capability = capability  # can the top tool do what is asked? (judge.py)

    def _search(
        self, text: str, vector: np.ndarray, alpha: float, target: Target = "tools"
    ) -> list[SearchHit]:
        return self.backend.hybrid_search(
            SearchQuery(
                text=text,
                vector=vector,
                alpha=alpha,
                limit=self.candidates,
                field_boosts=self.field_boosts if target == "tools" else self.server_field_boosts,
                fusion=self.fusion,
                candidates=self.candidates,
                target=target,
            )
        )

    def rank(
        self,
        text: str,
        mode: SearchMode = "hybrid",
        terms: CatalogTerms | None = None,
        request: str | None = None,
    ) -> Ranking:
        """Search for a checked query: its vector, the ranked hits, the powers, and each step's best
        powers when the request has several. Hybrid search with ``terms`` (the catalog's words) lets the
        learned ranker reorder the first candidates; without them the fused order stands. ``request``:
        the person's own words beside the agent's query, read for their arguments only
        (:func:`with_request_arguments`)."""
        if mode not in ("keyword", "semantic", "hybrid"):
            raise InvalidInputError(f"Unknown search mode {mode!r}.", hint="Use keyword, semantic or hybrid.")
        alpha = {"keyword": 0.0, "semantic": 1.0, "hybrid": self.alpha}[mode]
        asked = text
        extracted = extract(text) if self.arguments else None
        if extracted is not None:
            text = extracted.text
        given = with_request_arguments(extracted.arguments, request) if extracted is not None else ()
        written = split_query(asked)  # the steps as the request says them (shown to the agent) ...
        parts = [extract(p).text for p in written] if extracted is not None else written  # ... and matched
        if self.spelling and terms is not None:
            text = corrected(text, terms.document_frequency)
            parts = [corrected(p, terms.document_frequency) for p in parts]
        if parts:  # a multi-step request: each step searches on its own; the whole uses their mean
            part_vectors = self.embedder.embed_documents(parts)
            mean = part_vectors.mean(axis=0)
            vector = mean / max(float(np.linalg.norm(mean)), 1e-9)
        else:
            part_vectors = np.zeros((0, 0), dtype=np.float32)
            vector = self.embedder.embed_query(text)
        whole = self._search(text, vector, alpha)
        part_hits = [self._search(part, part_vectors[i], alpha) for i, part in enumerate(parts)]
        hits = merge_hits([whole, *part_hits]) if parts else whole
        argument_weight = 0.0
        if given and terms is not None and self.argument_weight > 0:
            # the weight is on relative-score fusion's scale (at most 1); ranked fusion's scores are ~1/60
            scale = 1.0 if self.fusion == "relative_score" or not hits else hits[0].score
            hits = fit_arguments(hits, given, terms, self.argument_weight * scale)
            argument_weight = self.argument_weight  # the tool order's scores are on a 0-1 scale
        powers = rank_powers(hits, mode)
        signals: Mapping[str, ToolSignals] = {}
        if terms is not None and mode == "hybrid":  # the other modes keep their own channel's order
            signals = tool_signals(hits, set(tokenize(text)), terms, given)
        servers = self._search(text, vector, alpha, "servers") if mode == "hybrid" else []
        ordered = rescore_with_powers(hits, powers)
        candidates = None
        if terms is not None and mode == "hybrid" and ordered:
            fused = {h.id: h for h in hits}
            size = self.ranker.candidates if self.ranker is not None else RERANKED
            head = [fused[h.id] for h in ordered[:size]]
            candidates = Candidates(
                words=tokenize(text),
                hits=head,
                power_scores={p.name: p.score for p in powers},
                part_hits=part_hits,
                server_hits=servers,
                parts=len(parts),
            )
        if candidates is not None and self.ranker is not None and terms is not None:
            ordered = rerank(ordered, self.ranker.scores(rank_features(candidates, terms)))
        steps = [step_of(part, found, mode) for part, found in zip(written, part_hits, strict=True)]
        return Ranking(
            text=asked,
            vector=vector,
            hits=ordered,
            powers=self._ordered(boost_powers(powers, servers), signals, argument_weight),
            parts=steps,
            candidates=candidates,
            matched=text,
            arguments=extracted.arguments if extracted is not None else (),
            signals=signals,
            argument_weight=argument_weight,
        )

    def _ordered(
        self, powers: list[PowerCandidate], signals: Mapping[str, ToolSignals], argument_weight: float
    ) -> list[PowerCandidate]:
        """The powers, each with its tools in the tool order (toolorder.py); as they are without signals."""
        if not signals:
            return powers
        score = self.tool_order.score
        return order_tools(powers, {t: score(s, argument_weight) for t, s in signals.items()})

    def verdict(self, ranking: Ranking, terms: CatalogTerms) -> float:
        """The capability judge's probability that the top power's first tool does what the request asks
        (0 without a judge, a candidate or the tool's text)."""
        if self.capability is None or not ranking.powers:
            return 0.0
        top = ranking.powers[0]
        tool = top.tools[0] if top.tools else next((h.id for h in ranking.hits if h.server == top.name), None)
        text = terms.tool_texts.get(tool) if tool is not None else None
        return self.capability.probability(ranking.text, text) if text else 0.0

    def judge(self, ranking: Ranking, terms: CatalogTerms) -> tuple[dict[str, float], float, float]:
        """The evidence of a ranking and the two probabilities read off it (P(top), P(top three))."""
        evidence = evidence_of(
            ranking.matched or ranking.text,
            ranking.hits,
            ranking.powers,
            terms,
            query_vector=ranking.vector,
            reference=self.calibration.reference_vector,
            arguments=ranking.arguments,
            server_hits=ranking.candidates.server_hits if ranking.candidates is not None else (),
            capability=self.verdict(ranking, terms),
        )
        evidence = {k: round(v, 4) for k, v in evidence.items()}  # what the fit saw, to the same digits
        if not ranking.hits:
            return evidence, 0.0, 0.0
        top, top3 = self.calibration.probabilities(evidence)
        return evidence, top, top3

    def resolve(
        self,
        query: str,
        terms: CatalogTerms,
        *,
        mode: SearchMode = "hybrid",
        tools: int = 10,
        powers: int = 10,
        request: str | None = None,
    ) -> Resolution:
        """Rank tools and powers for ``query`` and say how sure we are; ``terms`` are the words of the
        catalog the index holds (the confidence reads them). ``request``: the user's own words, when the
        agent passes them beside its query (the capability needed, in its words): the query is what is
        searched and judged, the request's arguments only order the tools (``with_request_arguments``);
        a blank request is no request."""
        asked = check_query(query, self.max_query_chars)
        words = check_request(request, self.max_query_chars)
        return self.answer(self.rank(asked, mode, terms, words), terms, mode=mode, tools=tools, powers=powers)

    def answer(
        self,
        ranking: Ranking,
        terms: CatalogTerms,
        *,
        mode: SearchMode = "hybrid",
        tools: int = 10,
        powers: int = 10,
    ) -> Resolution:
        """The resolution of a ranking: its first tools and powers, the evidence and both probabilities."""
        evidence, top, top3 = self.judge(ranking, terms)
        resolution = Resolution(
            query=ranking.text,
            mode=mode,
            tools=[
                ToolCandidate(
                    id=h.id,
                    server=h.server,
                    name=h.name,
                    score=round(h.score, 6),
                    match_type=_match_type(h, mode),
                )
                for h in ranking.hits[:tools]
            ],
            powers=ranking.powers[:powers],
            confidence=round(top, 4),
            top3_confidence=round(top3, 4),
            features=evidence,
            parts=ranking.parts,
        )
        return resolution.with_vector(ranking.vector)
