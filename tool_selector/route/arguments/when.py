"""Dates and times as a tool takes them: the request's dates (recognised by tool_selector/core/arguments.py,
and here the relative ones: "yesterday", "since Monday", "the last 7 days") read against ``now``, and
its times ("3pm", "9:30 in the morning", "noon") on a 24-hour clock.

Nothing is guessed: a date without a year, or a relative one, needs ``now``; without it there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        "jan january|feb february|mar march|apr april|may|jun june|jul july|aug august|sep sept september|"
        "oct october|nov november|dec december".split("|")
    )
    for m in names.split()
}
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fourteen": 14, "thirty": 30,
}  # fmt: skip
_COUNT = r"\d{1,3}|" + "|".join(_NUMBER_WORDS)
_UNITS = r"(?P<{0}>day|week|month|year)s?"
RELATIVE = re.compile(
    r"\b(?:(?P<word>today|tonight|tomorrow|yesterday)"
    rf"|(?P<n>{_COUNT})\s+{_UNITS.format('unit')}\s+ago"
    rf"|in\s+(?P<ahead>{_COUNT})\s+{_UNITS.format('ahead_unit')}"
    rf"|(?:the\s+)?(?:last|past|previous)\s+(?:(?P<span>{_COUNT})\s+)?{_UNITS.format('span_unit')}"
    r"|(?:(?P<cue>since|last|next|this|coming|on)\s+)?(?P<weekday>" + "|".join(_WEEKDAYS) + r"))\b",
    re.IGNORECASE,
)
CLOCK_WORDS = re.compile(r"\b(?P<word>noon|midday|midnight)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Day:
    first: date
    last: date | None = None  # a range: from ``first`` to ``last``
    month: bool = False  # only a month was given ("October 2026"): ``first`` is its first day
    open_end: bool = False  # "the last 7 days": its end is today, which an optional end leaves out
    clock: tuple[int, int] | None = None  # the time given with it (an ISO date-time)


def _shift(day: date, unit: str, n: int) -> date:
    unit = unit.lower()
    if unit == "day":
        return day + timedelta(days=n)
    if unit == "week":
        return day + timedelta(weeks=n)
    months = day.month - 1 + n * (12 if unit == "year" else 1)
    year, month = day.year + months // 12, months % 12 + 1
    for last_day in (day.day, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last_day))
        except ValueError:
            continue
    return date(year, month, 1)


def _count(word: str | None) -> int:
    if word is None:
        return 1
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def relative(match: re.Match[str], now: datetime | None) -> Day | None:
    """The day (or range) a match of :data:`RELATIVE` means, read against ``now``."""
    if now is None:
        return None
    today = now.date()
    groups = match.groupdict()
    if groups["word"]:
        offset = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}[groups["word"].lower()]
        return Day(today + timedelta(days=offset))
    if groups["n"]:
        return Day(_shift(today, groups["unit"], -_count(groups["n"])))
    if groups["ahead"]:
        return Day(_shift(today, groups["ahead_unit"], _count(groups["ahead"])))
    if groups["span_unit"]:
        return Day(_shift(today, groups["span_unit"], -_count(groups["span"])), today, open_end=True)
    weekday = _WEEKDAYS.index(groups["weekday"].lower())
    cue = (groups["cue"] or "").lower()
    if cue in ("since", "last"):
        back = (today.weekday() - weekday) % 7
        return Day(today - timedelta(days=back or (7 if cue == "last" else 0)))
    return Day(today + timedelta(days=(weekday - today.weekday()) % 7 or 7))


def _year(written: str, now: datetime | None) -> int | None:
    found = re.search(r"\b(1[89]|2\d)\d\d\b", written)
    if found:
        return int(found.group())
    return None if now is None else now.year


def parse_date(written: str, now: datetime | None) -> Day | None:
    """A date the core recognised ("2024-03-15", "3/15/2024", "Jan 2 2024", "2nd of March", "October
    2026", an ISO date-time), or None when it is not a real date or needs a year ``now`` does not give."""
    text = written.strip()
    try:
        if re.fullmatch(r"\d{4}-\d\d-\d\d", text):
            return Day(date.fromisoformat(text))
        if re.match(r"\d{4}-\d\d-\d\d[T ]\d", text):
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            return Day(moment.date(), clock=(moment.hour, moment.minute))
        numeric = re.fullmatch(r"(\d{1,4})[/.-](\d{1,2})[/.-](\d{1,4})", text)
        if numeric:
            a, b, c = (int(g) for g in numeric.groups())
            if len(numeric.group(1)) == 4:
                return Day(date(a, b, c))
            year = c + 2000 if c < 100 else c
            day_first = "." in text or a > 12
            return Day(date(year, b, a) if day_first else date(year, a, b))
        words = re.findall(r"[a-z]+|\d+", text.lower())
        month = next((_MONTHS[w] for w in words if w in _MONTHS), None)
        days = [int(w) for w in words if w.isdigit() and len(w) <= 2]
        given_year = _year(text, now)
        if month is None or given_year is None:
            return None
        if not days:
            return Day(date(given_year, month, 1), month=True)
        return Day(date(given_year, month, days[0]))
    except ValueError:
        return None


_MONTH_WORDS = "|".join(sorted(_MONTHS, key=len, reverse=True))
DAY_RANGE = re.compile(
    rf"\b(?:(?P<a>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|to)\s*(?P<b>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m1>{_MONTH_WORDS})\.?"
    rf"|(?P<m2>{_MONTH_WORDS})\.?\s+(?P<c>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|to)\s*(?P<d>\d{{1,2}})(?:st|nd|rd|th)?)\b"
    r"(?:,?\s+(?P<y>(?:19|20)\d\d))?",
    re.IGNORECASE,
)
TIME_RANGE = re.compile(
    r"(?<![\w:])(\d{1,2}(?::\d\d)?)\s*(?:-|–|to)\s*(\d{1,2}(?::\d\d)?)\s*([ap])?\.?(?:m\b\.?)?",
    re.IGNORECASE,
)


def day_range(match: re.Match[str], now: datetime | None) -> Day | None:
    """ "12-15 Sept", "June 1-7": the range's first and last day, in the year written or ``now``'s."""
    year = int(match.group("y")) if match.group("y") else (None if now is None else now.year)
    month = _MONTHS[(match.group("m1") or match.group("m2")).lower()]
    first, last = (
        (match.group("a"), match.group("b")) if match.group("m1") else (match.group("c"), match.group("d"))
    )
    if year is None:
        return None
    try:
        return Day(date(year, month, int(first)), date(year, month, int(last)))
    except ValueError:
        return None


def time_range(match: re.Match[str]) -> tuple[str, str]:
    """ "9 to 10am" -> 9am and 10am, "11-1pm" -> 11am and 1pm, "10:00-12:00" as written."""
    first, last, half = match.group(1), match.group(2), (match.group(3) or "").lower()
    if not half:
        return first, last
    start_half = half
    if half == "p" and int(first.split(":")[0]) > int(last.split(":")[0]) and int(first.split(":")[0]) != 12:
        start_half = "a"  # "11-1pm": from 11 in the morning
    return f"{first}{start_half}m", f"{last}{half}m"


_TIME = re.compile(
    r"(?P<h>\d{1,2})(?::(?P<m>\d\d))?(?::\d\d)?\s*(?P<ap>[ap])?\.?(?:m\b\.?)?"
    r"(?:\s*o'clock)?(?:\s+(?:in\s+the\s+(?P<part>morning|afternoon|evening)|at\s+(?P<night>night)))?",
    re.IGNORECASE,
)


def parse_time(written: str) -> tuple[int, int] | None:
    """(hour, minute) on a 24-hour clock of a time the core recognised, or of noon and midnight."""
    word = written.strip().lower()
    if word in ("noon", "midday"):
        return 12, 0
    if word == "midnight":
        return 0, 0
    match = _TIME.fullmatch(written.strip())
    if match is None:
        return None
    hour, minute = int(match.group("h")), int(match.group("m") or 0)
    after_noon = (match.group("ap") or "").lower() == "p" or match.group("part") in ("afternoon", "evening")
    if match.group("night"):
        after_noon = hour >= 6
    if (match.group("ap") or "").lower() == "a" and hour == 12:
        hour = 0
    elif after_noon and hour < 12:
        hour += 12
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def clock(hour_minute: tuple[int, int]) -> str:
    return f"{hour_minute[0]:02d}:{hour_minute[1]:02d}"


def iso(day: date, at: tuple[int, int] | None = None) -> str:
    """``YYYY-MM-DD``, or ``YYYY-MM-DDTHH:MM:SS`` with a time."""
    return day.isoformat() if at is None else f"{day.isoformat()}T{clock(at)}:00"
