"""Where each candidate value sits in the request: the core's arguments (tool_selector/core/arguments.py:
URLs, e-mail, paths, quoted text, dates, times, zones, amounts, IDs, hashes, numbers) located in the text,
then what only the filler needs (places, relative dates, noon and midnight, currencies, languages), then
every other word. Spans never overlap; the first found wins."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from tool_selector.core.arguments import extract
from tool_selector.route.arguments.places import (
    CURRENCY,
    LANGUAGE,
    Place,
    currency_of,
    find_places,
    region_zone,
    zone_of,
)
from tool_selector.route.arguments.when import (
    CLOCK_WORDS,
    DAY_RANGE,
    RELATIVE,
    TIME_RANGE,
    Day,
    day_range,
    parse_date,
    relative,
    time_range,
)

_OPENING = "\"'`“‘«"
_TOKEN = re.compile(r"[\w$][\w.:/+*#~^-]*[\w/*]|\w")
_REGION_AFTER_TIME = re.compile(r"\s+(Pacific|Eastern|Central|Mountain)\b")
_WORDS = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str  # a core Kind, or place, relative, clock, currency, language, word
    value: str  # as written (quoted text without its quotes)
    quoted: bool = False
    day: Day | None = None  # dates: the day or range it means
    place: Place | None = None
    zone: str | None = None  # time zones and places: the IANA zone
    code: str | None = None  # currencies and languages: the code


class _Cover:
    def __init__(self, length: int) -> None:
        self.taken = bytearray(length)

    def free(self, start: int, end: int) -> bool:
        return not any(self.taken[start:end])

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)

    def give_back(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x00" * (end - start)


def spans_of(text: str, now: datetime | None) -> list[Span]:
    """Every candidate value of the request, in order of appearance."""
    cover = _Cover(len(text))
    spans: list[Span] = []

    def add(span: Span) -> None:
        if span.end > span.start and cover.free(span.start, span.end):
            cover.take(span.start, span.end)
            spans.append(span)

    at = 0
    for argument in extract(text).arguments:
        start = text.find(argument.value, at)
        if start < 0:
            continue
        end = start + len(argument.value)
        at = end
        if argument.kind == "number" and (
            text[start - 1 : start] in ("~", "^") or re.match(r":[A-Za-z]", text[end : end + 2])
        ):
            continue  # "HEAD~1", "19:abc123": part of a name, read whole as a word below
        quoted = start > 0 and text[start - 1] in _OPENING
        if quoted and text.rfind("{", 0, start) > text.rfind("}", 0, start):
            continue  # a JSON or object literal's quoted keys are no values of their own
        day = parse_date(argument.value, now) if argument.kind in ("date", "datetime") else None
        zone = zone_of(argument.value) if argument.kind == "timezone" else None
        add(Span(start, end, argument.kind, argument.value, quoted, day=day, zone=zone))
        if quoted:  # the quotes belong to the span: no word is read inside or of them
            cover.take(start - 1, min(len(text), end + 1))
    for match in RELATIVE.finditer(text):
        found = relative(match, now)
        inside = [s for s in spans if s.start < match.end() and s.end > match.start()]
        if found is not None and all(s.kind == "number" for s in inside):  # "the last 3 days": one date
            for number in inside:
                spans.remove(number)
                cover.give_back(number.start, number.end)
            add(Span(match.start(), match.end(), "relative", match.group(), day=found))
    for match in DAY_RANGE.finditer(text):
        days = day_range(match, now)
        inside = [s for s in spans if s.start < match.end() and s.end > match.start()]
        if days is not None and all(s.kind in ("number", "date") for s in inside):
            for span in inside:  # "12-15 Sept", "June 1-7": one range, not a number and a date
                spans.remove(span)
                cover.give_back(span.start, span.end)
            add(Span(match.start(), match.end(), "relative", match.group(), day=days))
    for match in TIME_RANGE.finditer(text):
        inside = [s for s in spans if s.start < match.end() and s.end > match.start()]
        if all(s.kind in ("number", "time") for s in inside):
            for span in inside:  # "9 to 10am", "10:00-12:00": two times
                spans.remove(span)
                cover.give_back(span.start, span.end)
            for value, (start, end) in zip(time_range(match), (match.span(1), match.span(2)), strict=True):
                add(Span(start, end, "time", value))
    for match in CLOCK_WORDS.finditer(text):
        add(Span(match.start(), match.end(), "clock", match.group()))
    for span in [s for s in spans if s.kind in ("time", "clock")]:
        region = _REGION_AFTER_TIME.match(text, span.end)
        if region is not None:
            add(
                Span(
                    region.start(1),
                    region.end(1),
                    "place",
                    region.group(1),
                    zone=region_zone(region.group(1)),
                )
            )
    for place in find_places(text):
        add(
            Span(place.start, place.end, "place", text[place.start : place.end], place=place, zone=place.zone)
        )
    for match in CURRENCY.finditer(text):
        add(Span(match.start(), match.end(), "currency", match.group(), code=currency_of(match.group())))
    for match in LANGUAGE.finditer(text):
        add(Span(match.start(), match.end(), "language", match.group()))
    for match in _TOKEN.finditer(text):
        add(Span(match.start(), match.end(), "word", match.group()))
    return sorted(spans, key=lambda s: s.start)


def words_before(text: str, start: int, count: int = 3, *, clause: bool = False) -> list[str]:
    """The ``count`` words before a position, lower case, nearest last; a sentence's end (with ``clause``,
    a comma too) stops them."""
    ends = r"[.;!?](?:\s|$)|," if clause else r"[.;!?](?:\s|$)"
    before = re.split(ends, text[max(0, start - 80) : start])[-1]
    return _WORDS.findall(before.lower())[-count:]


def words_after(text: str, end: int, count: int = 3, *, clause: bool = False) -> list[str]:
    ends = r"[.;!?](?:\s|$)|," if clause else r"[.;!?](?:\s|$)"
    after = re.split(ends, text[end : end + 80])[0]
    return _WORDS.findall(after.lower())[:count]


def identifier_like(value: str) -> bool:
    """A name with a mark of one: a dash, underscore, dot, slash, colon or digit, or capitals inside."""
    return (
        bool(re.search(r"[-_./:\d]", value))
        or (value.isupper() and len(value) > 1)
        or (any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))
    )
