"""Numbers to number parameters: an amount to an amount parameter; a number next to its parameter's name
("port 22", "quiz 12", "3 rows", "30 seconds"); a count only when the words say so ("last 5 commits",
"top 5", "20 results", "first 20 lines" -> head); coordinates as latitude, longitude pairs; two numbers for
two generic parameters (``a``, ``b``) in order. A number inside a URL, a path, a title or a time span
("the last 3 days") was taken by then."""

from __future__ import annotations

import itertools
import re

from tool_selector.route.arguments.parameters import Parameter, is_count
from tool_selector.route.arguments.spans import Span
from tool_selector.route.arguments.state import TIME_UNITS, State, cued, near, number_for, numeric, singular

_COUNT_CUES = frozenset("last first top latest recent newest max maximum limit limited most up only".split())
_NOT_PLURALS = frozenset("times does goes this was has".split())
_LIST_VERBS = frozenset("show list get give fetch display find return pull see".split())
_RESULT_WORDS = frozenset("results items entries records rows lines hits matches".split())


def _plural(word: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _NOT_PLURALS
    )


def _give(state: State, param: Parameter, span: Span) -> None:
    state.give(param, number_for(param, span.value), [span])


def numbers(state: State, params: list[Parameter]) -> None:
    taking = state.open(params, lambda p: p.numeric or (bool(p.kinds & {"amount"}) and p.texty))
    if not taking:
        return
    _amounts(state, taking)
    _ranges(state, taking)
    _named_numbers(state, taking)
    _counts(state, taking)
    _coordinates(state, taking)
    _generic(state, taking)


def _amounts(state: State, taking: list[Parameter]) -> None:
    for param in state.open(taking, lambda p: "amount" in p.kinds):
        for span in state.free("amount"):
            number = re.search(r"\d[\d,]*(?:\.\d+)?", span.value)
            if number is not None:
                value = number.group().replace(",", "")
                state.give(param, number_for(param, value) if param.numeric else value, [span])
                break


def _ranges(state: State, taking: list[Parameter]) -> None:
    """ "between 1000 and 2000", "from 10 to 20": a pair's first and second number (min and max, ...)."""
    first = state.open(taking, lambda p: p.numeric and p.role == "first")
    second = state.open(taking, lambda p: p.numeric and p.role == "second")
    if len(first) != 1 or len(second) != 1:
        return
    spans = [s for s in state.free("number") if numeric(s.value) is not None]
    for low, high in itertools.pairwise(spans):
        if state.before(low, 1)[-1:] in (["between"], ["from"]) and re.fullmatch(
            r"\s+(?:and|to|-)\s+", state.gap(low, high)
        ):
            _give(state, first[0], low)
            _give(state, second[0], high)
            return


def _score(state: State, param: Parameter, span: Span) -> float:
    """How surely the words around a number make it this parameter's: its name next to it (right before
    it counts most), a unit its description gives after it, a word of its description before it."""
    before, after = state.before(span, 2, clause=True), state.after(span, 3, clause=True)
    around = before + after[:2]
    anchors = param.anchors()
    score = 0.0
    if near(around, anchors):
        score = 3 + (singular(param.head) in {singular(w) for w in around}) + (param.head in around)
        score += bool(before) and near(before[-1:], anchors)
    elif near(after[:2], param.units):
        score = 2
    elif near(before, param.described - {"number", "value"}):
        score = 1
    if score and param.role is not None and cued(state, span) == param.role:
        score += 1
    return score


def _named_numbers(state: State, taking: list[Parameter]) -> None:
    spans = [s for s in state.free("number", "id", "amount") if numeric(s.value) is not None]
    scored = [
        (score, span.start, span, param)
        for span in spans
        for param in state.open(taking, lambda p: p.numeric)
        if (score := _score(state, param, span))
    ]
    for _, _, span, param in sorted(scored, key=lambda s: (-s[0], s[1])):
        if id(span) not in state.used:
            _give(state, param, span)


def _counts(state: State, taking: list[Parameter]) -> None:
    counts = state.open(taking, is_count)
    for span in state.free("number"):
        if not counts:
            return
        before, after = state.before(span, 2), state.after(span, 2)
        if after[:1] and after[0] in TIME_UNITS:
            continue
        cue = next((w for w in reversed(before) if w in _COUNT_CUES), None)
        plural = bool(after) and _plural(after[0]) and after[0] not in TIME_UNITS
        listing = bool(set(state.before(span, 3)) & _LIST_VERBS)
        named = bool(after) and any(
            after[0] in p.units | p.described or after[0] in _RESULT_WORDS for p in counts
        )
        if cue is None and not (plural and (listing or named)) and after[:2] != ["most", "recent"]:
            continue
        choice = [p for p in counts if cue and cue in p.described] or [
            p for p in counts if not p.has("head", "tail")
        ]
        if choice:
            _give(state, choice[0], span)
            counts.remove(choice[0])


def _coordinates(state: State, taking: list[Parameter]) -> None:
    lats = state.open(taking, lambda p: p.has("lat", "latitude"))
    lons = state.open(taking, lambda p: p.has("lon", "lng", "long", "longitude"))
    if not lats or len(lats) != len(lons):
        return
    pairs = sorted(zip(lats, lons, strict=True), key=lambda p: (p[0].role == "second", p[0].role != "first"))
    numbers = [s for s in state.free("number") if numeric(s.value) is not None]
    coordinates = [
        (a, b)
        for a, b in itertools.pairwise(numbers)
        if re.fullmatch(r"\s*,?\s*", state.gap(a, b)) and any(re.search(r"[.-]", s.value) for s in (a, b))
    ]  # "38.72, -9.14": not "2 km of 10 Elm Road"
    taken: set[int] = set()
    for lat, lon in pairs:
        pair = next((c for c in coordinates if not {id(c[0]), id(c[1])} & taken), None)
        if pair is None:
            return
        _give(state, lat, pair[0])
        _give(state, lon, pair[1])
        taken |= {id(pair[0]), id(pair[1])}


def _generic(state: State, taking: list[Parameter]) -> None:
    """``a`` and ``b`` ("First number"): the numbers in order, only as many as the parameters, none that
    counts things ("add the 2 numbers")."""
    generic = state.open(
        taking,
        lambda p: (
            p.numeric and (len(p.name) == 1 or bool(re.match(r"(?i)(first|second) number", p.description)))
        ),
    )
    values = [
        s
        for s in state.free("number")
        if numeric(s.value) is not None and not (state.after(s, 1) and _plural(state.after(s, 1)[0]))
    ]
    if generic and len(values) >= len([p for p in generic if p.required]):
        for param, span in zip(generic, values, strict=False):
            _give(state, param, span)
