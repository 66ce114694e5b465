"""What the resolver reads when the agent's query and the person's request are both given (issue 40).

The lab's ``--phrasing both`` resolves each agent line of a dataset with its query and, as the request,
the person's words of the line it phrases. ``--reading`` says what is done with the two, so that the
choice the product makes can be measured against the others on the same requests:

- ``arguments`` (the product's: ``Resolver.resolve(query, request=...)``): the query is searched and
  judged; the request's arguments (URLs, paths, time zones... the query left out) only order the tools
  by what their parameters take (``tool_selector.resolve.resolver.with_request_arguments``);
- ``judged``: the same, and the confidence's evidence reads the request's arguments too (its
  ``argument_fit``);
- ``query``: the agent's query alone, the request ignored;
- ``joined``: one text, the query then the request (``"<query>. <request>"``);
- ``fused``: each resolved on its own and the two rankings fused: every tool's and every power's score is
  the mean of its two scores (0 where a ranking lacks it), its cosine and keyword score the mean of those
  it has; the confidence reads the fused ranking and the words of both texts.

A request without ``request`` (people's words, or the agent's alone) is resolved as the product does it
whatever the reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from eval.quality.choices import READINGS, Reading
from eval.quality.dataset import Asked
from services.resolve.read_path import ReadPath
from tool_selector.core.choices import SearchMode
from tool_selector.core.models import Decision, PowerCandidate, Resolution, SearchHit
from tool_selector.resolve.rerank.features import Candidates
from tool_selector.resolve.resolver import Ranking, Resolver, check_query, with_request_arguments
from tool_selector.route.tiers import route
from tool_selector.search.text import tokenize

__all__ = ["PRODUCT", "READINGS", "Reading", "fuse", "resolve_and_route_asked", "resolve_asked"]
PRODUCT: Reading = "arguments"  # what Resolver.resolve does with a request


def resolve_asked(
    read_path: ReadPath,
    asked: Asked,
    *,
    reading: Reading = PRODUCT,
    mode: SearchMode = "hybrid",
    limit: int = 10,
) -> Resolution:
    """The resolution of one asked request under ``reading`` (see the module docstring)."""
    if asked.request is None or reading == "arguments":  # the product's read path
        return read_path.decide(asked.query, mode=mode, limit=limit, request=asked.request).resolution
    resolver, terms = read_path.container.resolver, read_path.snapshot().terms
    if reading == "judged":
        ranking = resolver.rank(
            check_query(asked.query, resolver.max_query_chars), mode, terms, asked.request
        )
        read = with_request_arguments(ranking.arguments, asked.request) if resolver.arguments else ()
        return resolver.answer(replace(ranking, arguments=read), terms, mode=mode, tools=limit, powers=limit)
    if reading == "query":
        return resolver.resolve(asked.query, terms, mode=mode, tools=limit, powers=limit)
    if reading == "joined":
        text = f"{asked.query.strip().rstrip('.')}. {asked.request.strip()}"
        return resolver.resolve(text, terms, mode=mode, tools=limit, powers=limit)
    first = resolver.rank(check_query(asked.query, resolver.max_query_chars), mode, terms)
    second = resolver.rank(check_query(asked.request, resolver.max_query_chars), mode, terms)
    return resolver.answer(fuse(resolver, first, second), terms, mode=mode, tools=limit, powers=limit)


def resolve_and_route_asked(
    read_path: ReadPath, asked: Asked, *, reading: Reading = PRODUCT, limit: int = 10
) -> tuple[Resolution, Decision]:
    """The resolution and the tiered decision: the read path's for a query alone and for the product's
    reading; for another reading, the router's decision on that reading's resolution (the eval catalogs
    never change, so a step's powers are always known)."""
    if asked.request is None or reading == "arguments":
        return read_path.decide(asked.query, limit=limit, request=asked.request)
    resolution = resolve_asked(read_path, asked, reading=reading, limit=limit)
    return resolution, route(
        resolution, read_path.snapshot().powers, read_path.container.settings.confidence.thresholds
    )


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _fused_hits(first: Sequence[SearchHit], second: Sequence[SearchHit]) -> list[SearchHit]:
    one, two = {h.id: h for h in first}, {h.id: h for h in second}
    fused = []
    for tool_id in one.keys() | two.keys():
        a, b = one.get(tool_id), two.get(tool_id)
        base = a or b
        assert base is not None
        fused.append(
            replace(
                base,
                score=((a.score if a else 0.0) + (b.score if b else 0.0)) / 2,
                keyword_score=((a.keyword_score if a else 0.0) + (b.keyword_score if b else 0.0)) / 2,
                vector_score=_mean([a.vector_score if a else None, b.vector_score if b else None]),
            )
        )
    return sorted(fused, key=lambda h: (-h.score, h.id))


def _fused_powers(first: Sequence[PowerCandidate], second: Sequence[PowerCandidate]) -> list[PowerCandidate]:
    one, two = {p.name: p for p in first}, {p.name: p for p in second}
    fused = []
    for name in one.keys() | two.keys():
        a, b = one.get(name), two.get(name)
        base = a or b
        assert base is not None
        score = ((a.score if a else 0.0) + (b.score if b else 0.0)) / 2
        tools = list(dict.fromkeys([*(a.tools if a else []), *(b.tools if b else [])]))
        fused.append(base.model_copy(update={"score": round(score, 6), "tools": tools}))
    return sorted(fused, key=lambda p: (-p.score, p.name))


def fuse(resolver: Resolver, first: Ranking, second: Ranking) -> Ranking:
    """Two rankings of one need (the agent's query, the person's words) as one: scores averaged."""
    mean = first.vector + second.vector
    vector = mean / max(float(np.linalg.norm(mean)), 1e-9)
    hits = _fused_hits(first.hits, second.hits)
    powers = _fused_powers(first.powers, second.powers)
    servers = _fused_hits(
        first.candidates.server_hits if first.candidates else (),
        second.candidates.server_hits if second.candidates else (),
    )
    matched = f"{first.matched or first.text} {second.matched or second.text}"
    candidates = Candidates(
        words=tokenize(matched),
        hits=hits[: resolver.candidates],
        power_scores={p.name: p.score for p in powers},
        server_hits=servers,
    )
    arguments = tuple(dict.fromkeys([*first.arguments, *second.arguments]))
    return Ranking(
        text=first.text,
        vector=vector,
        hits=hits,
        powers=powers,
        parts=first.parts,
        candidates=candidates,
        matched=matched,
        arguments=arguments,
    )
