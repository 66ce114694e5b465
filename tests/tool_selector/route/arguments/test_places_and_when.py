"""Places, zones, dates and times as a tool takes them (tool_selector/route/arguments: places.py, when.py)."""

from __future__ import annotations

import itertools
from datetime import date, datetime

import pytest

from tool_selector.route.arguments.places import currency_of, find_places, zone_of
from tool_selector.route.arguments.spans import spans_of
from tool_selector.route.arguments.when import RELATIVE, Day, parse_date, parse_time, relative

NOW = datetime(2026, 11, 20, 10, 0)  # a Friday


@pytest.mark.parametrize(
    ("written", "zone"),
    [("Europe/Berlin", "Europe/Berlin"), ("UTC", "UTC"), ("GMT", "UTC"), ("PST", "America/Los_Angeles"),
     ("EST", "America/New_York"), ("CET", "Europe/Berlin"), ("IST", "Asia/Kolkata"), ("UTC+2", "Etc/GMT-2"),
     ("GMT-5", "Etc/GMT+5"), ("UTC+0", "UTC"), ("UTC+5:30", None), ("Mars/Olympus", None)],
)  # fmt: skip
def test_a_recognised_zone_maps_to_an_iana_name_with_etc_signs_inverted(
    written: str, zone: str | None
) -> None:
    assert zone_of(written) == zone


def test_places_are_found_in_any_case_and_accent_and_capitals_only_abbreviations_in_capitals() -> None:
    text = "from sao paulo to São Paulo, then Kyoto and SF, not sf or la"
    found = [(p.name, p.zone) for p in find_places(text)]
    assert found == [
        ("Sao Paulo", "America/Sao_Paulo"),
        ("Sao Paulo", "America/Sao_Paulo"),
        ("Kyoto", "Asia/Tokyo"),
        ("SF", "America/Los_Angeles"),
    ]


def test_english_words_among_iana_city_names_are_no_places() -> None:
    assert find_places("the center of easter at christmas, north and west, victoria's reunion") == []


def test_a_place_inside_a_path_or_a_file_name_is_no_place() -> None:
    assert find_places("/home/sam/london/tokyo.md") == []


def test_currencies_are_read_as_codes_words_and_symbols() -> None:
    assert [currency_of(w) for w in ("USD", "euros", "pound", "$", "yen", "usd", "xyz")] == [
        "USD", "EUR", "GBP", "USD", "JPY", None, None,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("written", "day"),
    [("2024-03-15", date(2024, 3, 15)), ("3/15/2024", date(2024, 3, 15)), ("15/3/2024", date(2024, 3, 15)),
     ("15.03.2024", date(2024, 3, 15)), ("Jan 2 2024", date(2024, 1, 2)), ("March 1, 2024", date(2024, 3, 1)),
     ("2nd of March", date(2026, 3, 2)), ("Nov 1", date(2026, 11, 1)),
     ("2024-01-15T14:30", date(2024, 1, 15))],
)  # fmt: skip
def test_a_date_is_read_in_its_everyday_forms_and_a_year_it_lacks_is_nows(written: str, day: date) -> None:
    parsed = parse_date(written, NOW)
    assert parsed is not None and parsed.first == day


def test_a_month_is_its_first_day_and_an_impossible_or_yearless_date_without_now_is_none() -> None:
    assert parse_date("October 2026", NOW) == Day(date(2026, 10, 1), month=True)
    assert parse_date("Feb 30 2025", NOW) is None
    assert parse_date("Nov 1", None) is None
    assert parse_date("2024-01-15T14:30", NOW) == Day(date(2024, 1, 15), clock=(14, 30))


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [("today", date(2026, 11, 20), None), ("tomorrow", date(2026, 11, 21), None),
     ("yesterday", date(2026, 11, 19), None), ("3 days ago", date(2026, 11, 17), None),
     ("since Monday", date(2026, 11, 16), None), ("last Friday", date(2026, 11, 13), None),
     ("on Monday", date(2026, 11, 23), None), ("in 2 weeks", date(2026, 12, 4), None),
     ("the last 7 days", date(2026, 11, 13), date(2026, 11, 20)),
     ("the past month", date(2026, 10, 20), date(2026, 11, 20))],
)  # fmt: skip
def test_a_relative_date_is_read_against_now(text: str, first: date, last: date | None) -> None:
    match = RELATIVE.search(text)
    assert match is not None
    assert relative(match, NOW) == Day(first, last, open_end=last is not None)
    assert relative(match, None) is None


@pytest.mark.parametrize(
    ("written", "clock"),
    [("3pm", (15, 0)), ("3 p.m.", (15, 0)), ("9:30 in the morning", (9, 30)), ("7 in the evening", (19, 0)),
     ("10 at night", (22, 0)), ("12am", (0, 0)), ("12pm", (12, 0)), ("6 o'clock", (6, 0)),
     ("23:59", (23, 59)), ("noon", (12, 0)), ("midnight", (0, 0)), ("25:00", None)],
)  # fmt: skip
def test_a_time_is_read_on_a_24_hour_clock(written: str, clock: tuple[int, int] | None) -> None:
    assert parse_time(written) == clock


def test_spans_never_overlap_and_a_relative_date_takes_its_number_in() -> None:
    spans = spans_of("commits in /srv/app-2 from the last 3 days, 'Paris 2024' and HEAD~1", NOW)
    kinds = [(s.kind, s.value) for s in spans if s.kind != "word"]
    assert kinds == [("path", "/srv/app-2"), ("relative", "the last 3 days"), ("quoted", "Paris 2024")]
    assert ("word", "HEAD~1") in [(s.kind, s.value) for s in spans]
    ends = [(s.start, s.end) for s in spans]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ends))
