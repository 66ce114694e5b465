"""What the passes of the filler share: the values given so far and the spans they used, the words around
a span, how a pair of parameters (source and target, start and end) is told apart, and numbers in the
JSON type a parameter takes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from tool_selector.route.arguments.parameters import Parameter
from tool_selector.route.arguments.spans import Span, words_after, words_before

ARTICLES = frozenset("a an the my our your this that its their his her some any".split())
# words that are never a name a parameter takes
NOT_NAMES = ARTICLES | frozenset(
    "new remote local current all every each other same to in on at for from of by with and or is it me "
    "called named titled latest last first next previous newest oldest recent open closed whole entire "
    "following only default".split()
)
FIRST_CUES = frozenset("from since after starting between source off".split())
SECOND_CUES = frozenset("to until till through into before ending and against vs versus".split())
TIME_UNITS = frozenset(
    "second seconds minute minutes hour hours day days week weeks month months year years".split()
)


class State:
    """The request, its spans, and the values given so far (each span gives at most one value)."""

    def __init__(self, text: str, spans: list[Span], now: datetime | None) -> None:
        self.text, self.spans, self.now = text, spans, now
        self.used: set[int] = set()
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def free(self, *kinds: str) -> list[Span]:
        """The spans no value came from yet (of these kinds, when given), in order."""
        return [s for s in self.spans if id(s) not in self.used and (not kinds or s.kind in kinds)]

    def open(self, parameters: Iterable[Parameter], test: Callable[[Parameter], bool]) -> list[Parameter]:
        """The parameters without a value yet that pass the test."""
        return [p for p in parameters if p.name not in self.values and test(p)]

    def give(self, parameter: Parameter, value: Any, spans: list[Span], source: str | None = None) -> None:
        if value is None or parameter.name in self.values:
            return
        self.values[parameter.name] = value
        self.used |= {id(s) for s in spans}
        if source is None and spans:
            source = self.text[min(s.start for s in spans) : max(s.end for s in spans)]
        self.sources[parameter.name] = source or ""

    def before(self, span: Span, count: int = 2, *, clause: bool = False) -> list[str]:
        return words_before(self.text, span.start, count, clause=clause)

    def after(self, span: Span, count: int = 3, *, clause: bool = False) -> list[str]:
        return words_after(self.text, span.end, count, clause=clause)

    def gap(self, left: Span, right: Span) -> str:
        return self.text[left.end : right.start]


def singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def near(words: Iterable[str], anchors: Iterable[str]) -> bool:
    """Whether one of the words is one of the anchors (singular or plural)."""
    wanted = {singular(a) for a in anchors}
    return any(singular(w) in wanted for w in words)


def cued(state: State, span: Span) -> str | None:
    """ "first" or "second" when a word just before the span says which of a pair it is ("from", "to")."""
    before = state.before(span, 2)
    for word in reversed(before):
        if word in FIRST_CUES:
            return "first"
        if word == "and" and "between" not in words_before(state.text, span.start, 8):
            continue  # "with Lee and Priya next Tuesday": "and" pairs only after "between"
        if word in SECOND_CUES:
            return "second"
    if before and before[-1] == "in" and "from" not in before:
        return "second"
    return None


def pair(state: State, params: list[Parameter], spans: list[Span]) -> list[tuple[Parameter, Span]]:
    """Spans for one or two parameters of a kind: by the request's cue words, then in order."""
    params = sorted(params, key=lambda p: (p.role != "first", p.role == "second"))
    if len(params) < 2 or not {p.role for p in params} >= {"first", "second"}:
        return list(zip(params, spans, strict=False))
    first = next(p for p in params if p.role == "first")
    second = next(p for p in params if p.role == "second")
    chosen: dict[str, Span] = {}
    for span in spans:
        cue = cued(state, span)
        if cue is not None and cue not in chosen:
            chosen[cue] = span
    rest = [s for s in spans if s not in chosen.values()]
    for role in ("first", "second"):
        if role not in chosen and rest:
            if role == "first" and "second" in chosen and rest[0].start > chosen["second"].start:
                continue  # "to X" came first and nothing is cued "from": X is the only one
            chosen[role] = rest.pop(0)
    return [(p, chosen[r]) for p, r in ((first, "first"), (second, "second")) if r in chosen]


def numeric(value: str) -> float | None:
    try:
        return float(value.lstrip("#").replace(",", ""))
    except ValueError:
        return None


def number_for(param: Parameter, value: str) -> Any:
    """A number as the parameter takes it: an int for ``integer`` (None if it has a fraction), an int or a
    float for ``number``, the text as written for a string parameter."""
    number = numeric(value)
    if number is None:
        return None
    if "integer" in param.types or (number.is_integer() and "number" in param.types):
        return int(number) if number.is_integer() else None
    return number if param.numeric else value


def takes_as_id(param: Parameter, span: Span) -> bool:
    """An ID parameter (``*_id``, ``*Ids``) takes an ID, a hash, a number or a word that reads as a name
    of something, never a plain word or words ("my checking account", 'Misc')."""
    if param.head not in ("id", "ids") or span.kind in ("id", "hash", "number"):
        return True
    value = span.value
    if " " in value.strip() or not re.search(r"\d|[_:./=-]|[a-z][A-Z]|^[A-Z0-9]+$", value):
        return False
    return not re.fullmatch(r"[A-Z][a-z]+", value)


def text_value(param: Parameter, span: Span) -> Any:
    """A span's value for a text or number parameter ("#42" is 42)."""
    if param.numeric:
        return number_for(param, span.value.lstrip("#"))
    return span.value.lstrip("#") if span.kind == "id" else span.value
