"""Passes for values known by their kind: phone numbers, ``owner/repo``, URLs and e-mail, paths, IDs and
hashes (and values of a parameter's own shape), time zones, places, dates and times, currencies,
languages, tickers, enums and arithmetic."""

from __future__ import annotations

import re
from typing import Any

from tool_selector.route.arguments.parameters import Parameter, is_datetime, takes_dates
from tool_selector.route.arguments.places import LANGUAGES, currency_of
from tool_selector.route.arguments.spans import Span
from tool_selector.route.arguments.state import NOT_NAMES, State, cued, near, pair, text_value
from tool_selector.route.arguments.when import Day, clock, iso, parse_time

_PHONE = re.compile(r"(?<![\w+])\+?\d[\d\s().-]{5,}\d(?!\w)")
_SLUG = re.compile(r"^([\w.-]+)/([\w.-]+)$")
_S3 = re.compile(r"s3://([a-z0-9][a-z0-9.-]+)/?(\S*)")
_ASSIGNMENT = re.compile(r"(?<![\w=])([A-Za-z][\w.:-]*)\s*=\s*([^\s,;=]+)")
_CELLS = re.compile(r"(?:[A-Za-z]\w*!)?[A-Z]{1,3}\d{1,7}(?::[A-Z]{1,3}\d{1,7})?")
_FORMULA = re.compile(r"=\s*[A-Z]+\([^)]*\)")
_DIR_WORDS = ("repo", "dir", "directory", "folder", "root", "cwd", "workspace")
_FILE_WORDS = ("file", "files", "filename", "filepath", "image", "document", "input", "output")
_TIME_CONTEXT = re.compile(
    r"\b(?:time|times|clock|zone|timezone|o'clock|morning|afternoon|evening|tonight|night|noon|midnight|"
    r"hours?|am|pm)\b",
    re.IGNORECASE,
)
_SYMBOL = re.compile(r"\$?([A-Z]{1,5}(?:\.[A-Z]{1,2})?)")
_NOT_SYMBOLS = frozenset("I A OK US UK EU AI API ID URL PDF CSV SQL PR ETF IPO CEO USA".split())
_EXPRESSION = re.compile(r"[-(]*\d[\d.,]*\)*(?:\s*[-+*/x×÷^%]\s*[-(]*\d[\d.,]*\)*)+")
_UNIT_WORDS = {
    "d": "days?", "w": "weeks?", "wk": "weeks?", "m": "months?", "mo": "months?", "y": "years?",
    "yr": "years?",
}  # fmt: skip


def _covered(state: State, start: int, end: int) -> list[Span]:
    return [s for s in state.spans if s.start < end and s.end > start]


def phones(state: State, params: list[Parameter]) -> None:
    for param in state.open(params, lambda p: p.has("phone", "mobile", "tel", "telephone")):
        match = _PHONE.search(state.text)
        if match is not None:
            state.give(param, match.group().strip(), _covered(state, match.start(), match.end()))


def owner_repo(state: State, params: list[Parameter]) -> None:
    """ "vercel/next.js" for a tool that takes ``owner`` and ``repo``."""
    owner = next(iter(state.open(params, lambda p: p.words == ("owner",))), None)
    repo = next(iter(state.open(params, lambda p: p.words in (("repo",), ("repository",)))), None)
    if owner is None or repo is None:
        return
    for span in state.free("path", "filename", "word", "url"):
        slug = _SLUG.match(span.value.strip("/"))
        if slug is not None:
            state.give(owner, slug.group(1), [span])
            state.give(repo, slug.group(2), [span])
            return


def buckets(state: State, params: list[Parameter]) -> None:
    """ "s3://acme-exports/tmp/old-dump.csv": the bucket, and the key (or prefix) inside it."""
    bucket = next(iter(state.open(params, lambda p: p.has("bucket") and p.texty)), None)
    if bucket is None:
        return
    inside = next(
        iter(state.open(params, lambda p: p.has("key", "prefix") and p.texty and p is not bucket)), None
    )
    for span in state.free("word", "url", "path"):
        uri = _S3.fullmatch(span.value)
        if uri is not None:
            state.give(bucket, uri.group(1), [span])
            if inside is not None and uri.group(2):
                state.give(inside, uri.group(2), [span])
            return


def assignments(state: State, params: list[Parameter]) -> None:
    """ "set FEATURE_X=true", "store feature:new-checkout = on": a name and its value."""
    value = next(iter(state.open(params, lambda p: p.words == ("value",))), None)
    name = next(iter(state.open(params, lambda p: p.words in (("key",), ("name",), ("field",)))), None)
    match = _ASSIGNMENT.search(state.text)
    if value is None or name is None or match is None:
        return
    covered = _covered(state, match.start(), match.end())
    if all(id(s) not in state.used for s in covered):
        state.give(name, match.group(1), covered)
        state.give(value, match.group(2), covered, source=match.group())


def cells(state: State, params: list[Parameter]) -> None:
    """Spreadsheet cells and ranges ("A1:C10", "B32"); a range's two ends for a start and an end cell."""
    ranges = [s for s in state.free("word") if _CELLS.fullmatch(s.value)]
    for param in state.open(params, lambda p: p.has("range", "cell") and p.texty and not p.array):
        for span in ranges:
            if id(span) in state.used:
                continue
            first, _, last = span.value.partition(":")
            if param.has("range"):
                state.give(param, span.value, [span])
            elif param.role == "second" and last:
                state.give(param, last, [span], source=span.value)
            elif param.role == "first" or not last:
                state.give(param, first, [span] if not last else [], source=span.value)
                continue  # the range's end may go to the end cell
            break


def urls_and_emails(state: State, params: list[Parameter]) -> None:
    """Each URL and address to the parameter named just before it, else to a required one, else the first;
    a domain parameter takes a URL's host."""
    for kind in ("url", "email"):
        for span in state.free(kind):
            taking = state.open(params, lambda p, k=kind: k in p.kinds and (p.texty or p.array))  # type: ignore[misc]
            named = [p for p in taking if near(state.before(span, 2), p.words)]
            chosen = (named or sorted(taking, key=lambda p: not p.required))[:1]
            if not chosen:
                break
            param = chosen[0]
            if param.array:
                spans = state.free(kind)
                state.give(param, [s.value for s in spans], spans)
                break
            value = span.value
            if kind == "url" and param.spec.get("format") in ("uri", "url") and "://" not in value:
                value = "https://" + value
            state.give(param, value, [span])
    for param in state.open(params, lambda p: p.has("domain", "host", "hostname") and p.texty):
        for span in state.free("url"):
            host = re.sub(r"^\w+://", "", span.value).split("/")[0].removeprefix("www.")
            state.give(param, host, [span])
            break


def _is_file(span: Span) -> bool:
    last = span.value.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    return span.kind == "filename" or (
        not span.value.endswith(("/", "\\")) and bool(re.search(r"\.\w{1,8}$", last))
    )


def _fits(param: Parameter, span: Span) -> bool:
    """A repository or folder parameter takes no file; a file parameter no folder; ``path`` either."""
    if param.has(*_DIR_WORDS):
        return not _is_file(span)
    return _is_file(span) if param.has(*_FILE_WORDS) and not param.has("path") else True


def paths(state: State, params: list[Parameter]) -> None:
    """Paths: source and destination by "from"/"to" and order; a repository the one "in"/"at"; a list all."""
    taking = state.open(params, lambda p: bool(p.kinds & {"path", "filename"}))
    spans = state.free("path", "filename")
    if not taking or not spans:
        return
    singles = [p for p in taking if not p.array]
    roles = [p for p in singles if p.role is not None]
    if len(roles) >= 2:
        for param, span in pair(state, roles, [s for s in spans if _fits(roles[0], s)]):
            state.give(param, span.value, [span])
        singles = [p for p in singles if p not in roles]
    for param in singles:
        if not param.has(*_DIR_WORDS) and _joined(state, param):
            continue
        fitting = [s for s in state.free("path", "filename") if _fits(param, s)]
        where = {"in", "at", "under", "of", "repo", "repository"}
        cued_in = [s for s in fitting if set(state.before(s, 2)) & where]
        chosen = (cued_in if param.has(*_DIR_WORDS) and cued_in else fitting)[:1]
        if chosen:
            state.give(param, chosen[0].value, chosen)
    for param in state.open(taking, lambda p: p.array):
        fitting = [s for s in state.free("path", "filename") if _fits(param, s)]
        if fitting:
            state.give(param, [s.value for s in fitting], fitting)


def _joined(state: State, param: Parameter) -> bool:
    """ "notes.txt in /tmp/demo", "a folder called reports in /tmp/demo": one name and the one folder it
    is in make the path."""
    inside = ("in", "into", "under", "inside")
    folders = [
        s for s in state.free("path") if not _is_file(s) and state.before(s, 1)[-1:] in [[w] for w in inside]
    ]
    names = [s for s in state.free("filename") if not re.search(r"[/\\]", s.value)]
    names += [s for s in state.free("word") if state.before(s, 1)[-1:] in (["called"], ["named"])]
    names = [s for s in names if s.value.lower() not in NOT_NAMES]
    if len(folders) != 1 or len(names) != 1 or names[0].start > folders[0].start:
        return False
    state.give(param, folders[0].value.rstrip("/\\") + "/" + names[0].value, [names[0], folders[0]])
    return True


def _digits_fit(param: Parameter, span: Span) -> bool:
    return not param.numeric or span.value.lstrip("#").isdigit()


def identifiers(state: State, params: list[Parameter]) -> None:
    """Values of a parameter's shape (its pattern, its examples: "NCT06524388"); IDs and hashes to id
    parameters, the one named right before it first, then the required ones in order."""
    shaped = state.open(params, lambda p: p.shape is not None and p.texty)
    roles = {p.role for p in shaped}
    if len(shaped) == 2 and roles == {"first", "second"} and shaped[0].shape == shaped[1].shape:
        shape = shaped[0].shape
        fitting = [s for s in state.free("word") if shape is not None and shape.fullmatch(s.value)]
        for param, span in pair(state, shaped, fitting):  # "from LHR to LIS"
            state.give(param, span.value, [span])
    for param in state.open(shaped, lambda p: True):
        for span in state.free("word", "id", "hash", "number", "quoted"):
            if param.shape is not None and param.shape.fullmatch(span.value):
                state.give(param, [span.value] if param.array else span.value, [span])
                break
    taking = state.open(params, lambda p: bool(p.kinds & {"id", "hash"}) and not p.enum)
    for param in taking:
        for span in state.free("id", "hash"):
            if near(state.before(span, 2), param.anchors()) and _digits_fit(param, span):
                state.give(param, text_value(param, span), [span])
                break
    for param in state.open(taking, lambda p: p.required):
        kinds = ("hash", "id") if "hash" in param.kinds else ("id", "hash")
        spans = [s for k in kinds for s in state.free(k) if _digits_fit(param, s)]
        if spans and param.array:
            state.give(param, [text_value(param, s) for s in spans], spans)
        elif spans:
            state.give(param, text_value(param, spans[0]), spans[:1])


def _attached(state: State, time: Span, zone: Span) -> bool:
    """The zone the given time belongs to: "3pm London", "9am in Berlin", "in Tokyo at 6am"."""
    if time.end <= zone.start:
        return bool(re.fullmatch(r"\s*(?:,\s*)?(?:in\s+)?", state.gap(time, zone)))
    return bool(re.fullmatch(r"(?:\s+time)?\s*(?:,\s*)?(?:at\s+|is\s+)?", state.gap(zone, time)))


def zones(state: State, params: list[Parameter]) -> None:
    """Time zones: a zone written out or its abbreviation always; a place only when the request speaks of
    time. Of a source and a target, the zone the given time belongs to is the source."""
    taking = state.open(params, lambda p: "timezone" in p.kinds or p.has("timezone", "tz"))
    if not taking:
        return
    times = state.free("time", "clock")
    speaks_of_time = bool(times) or bool(_TIME_CONTEXT.search(state.text))
    spans = [
        s for s in state.free("timezone", "place") if s.zone and (s.kind == "timezone" or speaks_of_time)
    ]
    if len(taking) >= 2 and {p.role for p in taking} >= {"first", "second"}:
        attached = [s for s in spans for t in times if _attached(state, t, s)]
        if attached:
            source = next(p for p in taking if p.role == "first")
            state.give(source, attached[0].zone, [attached[0]])
            spans.remove(attached[0])
            taking = [p for p in taking if p is not source]
            spans.sort(key=lambda s: cued(state, s) != "second")
    for param, span in pair(state, taking, spans):
        state.give(param, span.zone, [span])


def _takes_places(param: Parameter) -> bool:
    """A city or location parameter; a city code is no place's name."""
    return (
        param.has("city", "location", "town", "place")
        and param.texty
        and not param.enum
        and not param.has("code")
    )


def places(state: State, params: list[Parameter]) -> None:
    """A city or location parameter takes the place's name: a known place, or a capitalised word after
    "in", "at", "near"."""
    taking = state.open(params, _takes_places)
    if len(taking) >= 2:
        for param, span in pair(state, taking, [s for s in state.free("place") if s.place is not None]):
            state.give(param, span.place.name if span.place else span.value, [span])
    for param in state.open(taking, lambda p: True):
        known = state.free("place")
        if known and known[0].place is not None:
            state.give(param, known[0].place.name, known[:1])
            continue
        for span in state.free("word"):
            if span.value[:1].isupper() and state.before(span, 1)[-1:] in (
                ["in"],
                ["at"],
                ["near"],
                ["city"],
            ):
                state.give(param, span.value, [span])
                break


def dates_and_times(state: State, params: list[Parameter]) -> None:
    """A time as ``HH:MM``; dates as ``YYYY-MM-DD`` (with the time given next to them for a date-time);
    a range's start, and its end only for a tool that requires one; start and end by cue, then order."""
    times = state.free("time", "clock")
    for param in state.open(params, lambda p: "time" in p.kinds and not takes_dates(p)):
        hour_minute = parse_time(times[0].value) if times else None
        if hour_minute is not None:
            state.give(param, clock(hour_minute), times[:1])
            times = times[1:]
    taking = state.open(params, takes_dates)
    days = [s for s in state.free("date", "datetime", "relative") if s.day is not None]
    if not taking or not days:
        return
    first = next((p for p in taking if p.role == "first"), None)
    second = next((p for p in taking if p.role == "second"), None)
    ranged = next((s for s in days if s.day is not None and s.day.last is not None), None)
    if ranged is not None and ranged.day is not None and ranged.day.last is not None and first is not None:
        _give_day(state, first, ranged, ranged.day, times[:1])
        if second is not None and (second.required or not ranged.day.open_end):
            _give_day(state, second, ranged, Day(ranged.day.last), times[1:2])
        return
    if len(days) == 1 and len(times) == 2 and first is not None and second is not None and days[0].day:
        _give_day(state, first, days[0], days[0].day, times[:1])  # "thursday 9 to 10am"
        _give_day(state, second, days[0], days[0].day, times[1:])
        return
    for param, span in pair(state, taking, days):
        if span.day is not None:
            _give_day(state, param, span, span.day, times)


def _give_day(state: State, param: Parameter, span: Span, day: Day, times: list[Span]) -> None:
    at, used = day.clock, [span]
    if at is None:
        beside = [t for t in times if re.fullmatch(r"\s*,?\s*(?:at\s+)?", _between(state, span, t))]
        beside = beside or (times if len(times) == 1 else [])
        at = parse_time(beside[0].value) if beside else None
        used += beside[:1] if at is not None else []
    if not is_datetime(param):
        state.give(param, iso(day.first), [span])
    elif at is not None:
        state.give(param, iso(day.first, at), used)


def _between(state: State, one: Span, other: Span) -> str:
    return state.gap(one, other) if other.start >= one.end else state.gap(other, one)


def _amount_code(span: Span) -> str | None:
    symbol = re.search(r"[$€£¥₹]|[A-Za-z]+$", span.value)
    return None if symbol is None else currency_of(symbol.group())


def currencies(state: State, params: list[Parameter]) -> None:
    """ISO codes for currency parameters; "how many euros is a dollar": the dollar is the base."""
    taking = state.open(params, lambda p: p.has("currency") and p.texty)
    spans = [s for s in state.free("currency", "amount") if s.code or _amount_code(s)]
    if not taking or not spans:
        return
    many = re.search(r"\bhow\s+(?:many|much)\s+(\w+)", state.text, re.IGNORECASE)
    if many and len(spans) >= 2 and len(taking) >= 2 and spans[0].start == many.start(1):
        spans = [spans[1], spans[0], *spans[2:]]
    for param, span in pair(state, taking, spans):
        state.give(param, span.code or _amount_code(span), [span])


def languages_and_symbols(state: State, params: list[Parameter]) -> None:
    """A language (its code for a code parameter); a ticker ("AAPL", "$TSLA") for a symbol parameter."""
    for param in state.open(params, lambda p: p.has("lang", "language") and p.texty and not p.enum):
        for span in state.free("language"):
            code = param.has("lang") or "code" in param.described
            state.give(param, LANGUAGES[span.value.lower()] if code else span.value.capitalize(), [span])
            break
    for param in state.open(params, lambda p: p.has("symbol", "ticker") and p.texty):
        for span in state.free("word"):
            match = _SYMBOL.fullmatch(span.value)
            if match and match.group(1) not in _NOT_SYMBOLS:
                state.give(param, match.group(1), [span])
                break


def _enum_pattern(value: str) -> re.Pattern[str]:
    """How an enum value is written in a request: "turnOff" as "turn off", "30d" as "30 days"."""
    unit = re.fullmatch(r"(\d+)\s*(d|w|wk|m|mo|y|yr)", value)
    if unit:
        return re.compile(rf"{unit.group(1)}[\s-]*{_UNIT_WORDS[unit.group(2)]}\b", re.IGNORECASE)
    parts = [re.escape(w) for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", value)]
    return re.compile(r"[\s_-]*".join(parts or [re.escape(value)]) + r"\b", re.IGNORECASE)


def enums(state: State, params: list[Parameter]) -> None:
    """An enum value the request names, when it names exactly one ("all" gives way to a specific one); of
    two parameters with one enum, "to pdf" goes to the output."""
    taking = state.open(params, lambda p: bool(p.enum))
    for param in taking:
        found: dict[Any, Span] = {}
        for value in param.enum:
            pattern = _enum_pattern(str(value))
            for span in state.free("word", "place", "number", "language", "currency", "filename"):
                match = pattern.match(state.text, span.start)
                if match and (span.kind != "word" or match.end() >= span.end):
                    found.setdefault(value, span)
        found = {
            v: s for v, s in found.items() if str(v).lower() not in ("all", "any", "none", "default")
        } or found
        rivals = [p for p in taking if p is not param and set(p.enum) & set(found)]
        if rivals and param.role is not None:
            found = {v: s for v, s in found.items() if cued(state, s) == param.role}
        if len(found) == 1:
            value, span = next(iter(found.items()))
            state.give(param, [value] if param.array else value, [span])


def expressions(state: State, params: list[Parameter]) -> None:
    """ "17 * 23 + 4" for an expression parameter, "=SUM(B2:B31)" for a formula."""
    for param in state.open(params, lambda p: p.has("formula") and p.texty):
        match = _FORMULA.search(state.text)
        if match is not None:
            state.give(param, match.group(), _covered(state, match.start(), match.end()))
    for param in state.open(
        params, lambda p: p.has("expression", "expr", "equation", "calculation") and p.texty
    ):
        match = _EXPRESSION.search(state.text)
        if match is not None:
            state.give(param, match.group().strip(), _covered(state, match.start(), match.end()))
