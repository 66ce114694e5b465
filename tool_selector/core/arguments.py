"""The concrete arguments inside a request (URLs, paths, dates, IDs, ...): recognised, taken out of the
text the keyword and vector channels see, and matched against the parameters of a tool's input schema.

Arguments are not intent: in "grab the contents of the page at https://example.org/pricing" the request
asks to fetch a page; "pricing" must not drag in finance tools. :func:`extract` replaces each argument
by a generic word for its kind ("url", "path", "date", ...) and keeps the arguments typed;
:func:`parameter_kinds` says which kinds a tool's parameters take and :func:`fits` how many of a
request's specific arguments a tool can take. Recognition runs in a fixed order (quoted text, e-mail,
URL, path, dates, time zones, times, amounts, file names, IDs and hashes, numbers) and spans never
overlap. Place names ("Tokyo", "Berlin") stay: they are meaningful words, not arguments.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal[
    "url", "email", "path", "filename", "quoted", "datetime", "date", "time", "timezone", "amount", "number",
    "id", "hash",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Argument:
    kind: Kind
    value: str  # the text as it appeared (without its quotes for quoted text)


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str  # the request with each argument replaced by its kind's word, whitespace collapsed
    arguments: tuple[Argument, ...]  # in order of appearance


# The word that stands for an argument in the text: carries the kind's meaning, none of the argument's.
PLACEHOLDERS: dict[Kind, str] = {
    "url": "url", "email": "email address", "path": "path", "filename": "file", "quoted": "text",
    "datetime": "date", "date": "date", "time": "time", "timezone": "time zone", "amount": "amount",
    "number": "", "id": "id", "hash": "hash",
}  # fmt: skip
# The kinds that say which tool can take a request; quoted text, numbers, amounts and times are too generic.
SPECIFIC: frozenset[Kind] = frozenset(
    ("url", "email", "path", "filename", "timezone", "hash", "id", "date", "datetime")
)
_ACCEPTED_BY: dict[Kind, frozenset[Kind]] = {
    "path": frozenset(("path", "filename")), "filename": frozenset(("path", "filename")),
    "date": frozenset(("date", "datetime")), "datetime": frozenset(("date", "datetime")),
}  # fmt: skip
MAX_GROWTH = 40  # a text that the replacement words would grow by more than this is left as it was

_EXTENSIONS = frozenset("""
    txt md markdown rst pdf doc docx xls xlsx ppt pptx odt ods rtf tex epub csv tsv json jsonl ndjson yaml
    yml toml ini cfg conf xml html htm css scss less js jsx ts tsx mjs cjs vue svelte py pyi ipynb rb go rs
    java kt swift c h cpp hpp cc cs php pl sh bash zsh ps1 bat sql db sqlite log lock env png jpg jpeg gif
    svg webp bmp ico tif tiff heic mp3 wav flac ogg m4a mp4 mov avi mkv webm zip tar gz tgz bz2 xz 7z rar
    jar whl deb rpm dmg iso exe dll dylib wasm parquet avro proto graphql tf pem crt ics vcf eml dart lua
    scala ex exs hs
""".split())  # fmt: skip
_DOTFILES = frozenset("env gitignore dockerignore bashrc zshrc profile npmrc editorconfig prettierrc".split())
# top-level domains a bare "example.com" may end in; none that is also a file extension (.py, .md, .sh)
_TLDS = frozenset("""
    com org net edu gov mil int io ai dev app co uk de fr nl eu ca au jp ch se es be at dk fi cz ru br mx
    nz ie pt info biz xyz site online tech cloud tv gg ly
""".split())  # fmt: skip
_TZ_REGIONS = """Africa America Antarctica Arctic Asia Atlantic Australia Europe Indian Pacific Etc US Canada
    Brazil Mexico Chile"""
_TZ_ABBREVIATIONS = """CEST CET EEST EET WET BST IST JST KST HKT SGT PHT WIB AEST AEDT ACST ACDT AWST NZST
    NZDT PST PDT MST MDT CST CDT EST EDT AKST AKDT HST MSK SAST"""
_CURRENCIES = "usd eur gbp jpy chf cad aud inr cny btc eth dollars? euros? pounds? yen bucks? cents? rupees?"
_TICKET_WORDS = "issue ticket pr pull request merge request mr bug invoice incident"
_TICKET = (
    r"\b(?:issue|ticket|pr|pull\s+request|merge\s+request|mr|bug|invoice|incident)\s+(?:no\.?\s*|number\s+)?"
)
# "COVID-19", "UTF-8", "GPT-4" are names, not ticket keys
_NOT_TICKETS = frozenset("UTF SHA MD COVID GPT ISO TLS SSL HTTP AES RSA IPV MPEG WCAG".split())
_TRIMMED = ".,;:!?)]}'\""  # sentence punctuation after a URL or a path is not part of it


def _any(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=lambda w: (-len(w), w)))


_EXT, _TLD, _TZ = _any(_EXTENSIONS), _any(_TLDS), _any(_TZ_ABBREVIATIONS.split())
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|(?-i:May|MAY)|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[89]|2\d)\d\d"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_SCALE = r"(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
_PART_OF_DAY = r"(?:\s+(?:in\s+the\s+(?:morning|afternoon|evening)|at\s+night))?"


def _date_parts(value: str) -> bool:
    parts = [int(p) for p in re.split(r"[/.-]", value)]
    if value[:4].isdigit():
        return 1 <= parts[1] <= 12 and 1 <= parts[2] <= 31
    a, b = parts[0], parts[1]
    return a >= 1 and b >= 1 and ((a <= 12 and b <= 31) or (a <= 31 and b <= 12))


def _letters_and_digits(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _mixed_token(value: str) -> bool:
    """An opaque ID like ``x9k2mq7``: letters and digits alternating, not a word with a version (python3)."""
    s = value.replace("_", "").replace("-", "")
    if not (s.isascii() and s.isalnum()):
        return False
    digits = sum(c.isdigit() for c in s)
    flips = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(s))
    return 2 <= digits < len(s) and flips >= 2


def _file_name(value: str) -> bool:
    """``report_q3.pdf``, ``.env``: a known extension; not ``e.g.``, ``3.13`` nor a library (``Node.js``)."""
    stem, _, extension = value.rpartition(".")
    extension = extension.lower()
    if not stem:
        return extension in _DOTFILES
    return extension in _EXTENSIONS and not (extension == "js" and re.fullmatch(r"[A-Z][A-Za-z0-9]*", stem))


def _isbn(value: str) -> bool:
    return len(re.sub(r"[^\dXx]", "", value)) in (10, 13)


@dataclass(frozen=True, slots=True)
class _Rule:
    """A recogniser, run only on a text that passes its cheap gates, all of: a digit (when ``digit``), one
    of the ``chars``, one of the ``needles`` (in the lowercased text), a word after a dot in ``dotted``
    ("main.py": py), a ``gate`` search."""

    kind: Kind
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None
    digit: bool
    chars: str
    needles: tuple[str, ...]
    dotted: frozenset[str] | None
    gate: re.Pattern[str] | None


def _rule(kind: Kind, pattern: str, check: Callable[[str], bool] | None = None, *, digit: bool = True,
          chars: str = "", needles: str = "", dotted: frozenset[str] | None = None, gate: str | None = None,
          flags: int = re.IGNORECASE) -> _Rule:  # fmt: skip
    gate_pattern = None if gate is None else re.compile(gate)
    return _Rule(
        kind, re.compile(pattern, flags), check, digit, chars, tuple(needles.split()), dotted, gate_pattern
    )


_QUOTED = [
    _rule("quoted", r'"(?P<v>[^"\n]+)"', digit=False, chars='"'),
    _rule("quoted", r"“(?P<v>[^”\n]+)”", digit=False, chars="“"),
    _rule("quoted", r"‘(?P<v>[^’\n]+?)’(?!\w)", digit=False, chars="‘"),
    _rule("quoted", r"`(?P<v>[^`\n]+)`", digit=False, chars="`"),
    _rule("quoted", r"«\s?(?P<v>[^»\n]+?)\s?»", digit=False, chars="«"),
    # an apostrophe inside a word (don't, Mom's) neither opens nor closes a quote
    _rule(
        "quoted", r"(?<![\w'])'(?P<v>(?=[^\s'])(?:[^'\n]|(?<=\w)'(?=\w))+?)'(?!\w)", digit=False, chars="'"
    ),
]
_RULES = [
    _rule("email", r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?![\w-])", digit=False, chars="@"),
    _rule("url", r"\b(?:https?|ftp)://[^\s<>\"'`]+", digit=False, chars=":", needles="://"),
    _rule("url", r"(?<![\w@./-])www\.[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:/[^\s<>\"'`]*)?", digit=False, chars=".",
          needles="www."),
    _rule("url", rf"(?<![\w@./:-])(?:[A-Za-z0-9-]+\.)+(?-i:{_TLD})(?::\d+)?(?![\w-])(?:/[^\s<>\"'`]*)?",
          digit=False, chars=".", dotted=_TLDS),
    # C:\Users\x, \\server\share, /usr/local/x ~/notes/a.md ./src, src/app.py (never a slug: acme/api)
    _rule("path", r"(?<!\w)[a-z]:[\\/](?:[^\\/\s:*?\"<>|]+(?:[\\/][^\\/\s:*?\"<>|]+)*)?[\\/]?", digit=False,
          chars=":", gate=r"[A-Za-z]:[\\/]"),
    _rule("path", r"(?<!\S)\\\\[\w.$-]+(?:\\[^\\\s]+)+", digit=False, chars="\\", needles="\\\\"),
    _rule("path", r"(?<![\w~./\\:-])(?:~[\w.-]*|\.{1,2})?(?:/[\w.@+%,~-]+)+/?", digit=False, chars="/"),
    _rule("path", rf"(?<![\w~./\\:-])[\w.-]+(?:/[\w.@+-]+)*/[\w.-]*\.(?:{_EXT})(?![\w-])", digit=False,
          chars="/", dotted=_EXTENSIONS),
    _rule("id", r"\bISBN(?:-1[03])?:?\s*(?P<v>\d[\d -]{8,15}[\dX])(?![\w-])", _isbn, needles="isbn"),
    _rule("id", r"(?<![\w-])97[89](?:-\d+){3,4}(?![\w-])", _isbn, needles="978- 979-"),
    _rule("datetime", r"(?<![\w.-])\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
          r"(?!\w)", lambda v: _date_parts(v[:10]), chars=":", gate=r"\d-\d\d[T ]\d"),
    _rule("date", r"(?<![\w./-])\d{4}-\d\d-\d\d(?![\w/-]|\.\d)", _date_parts, chars="-", gate=r"\d-\d\d-\d"),
    _rule("date", r"(?<![\w./-])(?:\d{1,2}([/-])\d{1,2}\1(?:\d{4}|\d\d)|\d{1,2}\.\d{1,2}\.\d{4}|"
          r"\d{4}/\d\d?/\d\d?)(?![\w/-]|[.,]\d)", _date_parts, chars="/-.",
          gate=r"\d[/.-]\d\d?[/.-]\d"),
    _rule("date", rf"(?<!\w)(?:{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_DAY}\s+(?:of\s+)?{_MONTH}"
          rf"(?:,?\s+{_YEAR})?|{_MONTH}\s+{_YEAR})(?!\w)",
          needles="jan feb mar apr may jun jul aug sep oct nov dec"),
    _rule("timezone", rf"(?<![\w/])(?:{_any(_TZ_REGIONS.split())})/[A-Z][\w+-]*(?:/[A-Z][\w+-]*)?(?![\w/])",
          digit=False, chars="/", gate=r"\w/[A-Z]", flags=0),
    # every abbreviation has a T, a K or a B; "utc" and "gmt" in any case
    _rule("timezone", rf"(?<![\w/])(?:UTC|GMT|{_TZ})(?:(?<=UTC|GMT)[+\-−]\d\d?(?::?\d\d)?)?(?![\w/])",
          digit=False, chars="TKB", gate="[A-Z]{3}", flags=0),
    _rule("timezone", r"(?<![\w/])(?:utc|gmt)(?:[+\-−]\d\d?(?::?\d\d)?)?(?![\w/])", digit=False,
          needles="utc gmt"),
    _rule("time", rf"(?<![\w:.])(?:[01]?\d|2[0-4]):[0-5]\d(?::[0-5]\d)?(?:\s?[ap]\.?m\b\.?)?{_PART_OF_DAY}"
          r"(?![\w:])", chars=":"),
    _rule("time", rf"(?<![\w.:])(?:1[0-2]|0?[1-9])(?:\s?[ap]\.?m\b\.?|\s?o'clock){_PART_OF_DAY}(?!\w)",
          needles="am pm a.m p.m o'clock"),
    _rule("amount", rf"(?<![\w$€£¥₹])(?:us|a|c|nz|hk)?[$€£¥₹]\s?{_NUM}{_SCALE}(?!\w)", chars="$€£¥₹"),
    _rule("amount", rf"(?<!\w)(?:(?:usd|eur|gbp|chf)\s?{_NUM}|{_NUM}{_SCALE}\s?"
          rf"(?:{_CURRENCIES.replace(' ', '|')})){_SCALE}(?!\w)", needles=_CURRENCIES.replace("s?", "")),
    _rule("filename", r"(?<![\w./\\~@-])[\w-]*+(?:\.[\w-]++)++(?![/\\@])", _file_name, digit=False, chars=".",
          dotted=_EXTENSIONS | _DOTFILES, flags=0),
    _rule("id", r"(?<![\w-])[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}(?![\w-])", chars="-",  # a UUID
          gate=r"[0-9a-fA-F]{8}-"),
    _rule("hash", r"(?<![\w./#@:-])(?:[0-9a-f]{7,64}+|[0-9A-F]{7,64}+)(?![\w-]|[./]\w)", _letters_and_digits,
          gate=r"[a-fA-F]\d|\d[a-fA-F]", flags=0),
    _rule("id", r"(?<![\w-])(?:CVE-\d{4}-\d{4,}|[A-Z][A-Z0-9]{1,9}-\d+)(?![\w-])",
          lambda v: v.split("-")[0] not in _NOT_TICKETS, chars="-", gate=r"[A-Z]-\d", flags=0),
    _rule("id", _TICKET + r"(?P<v>#?\d+)(?!\w|[.,]\d)", needles=_TICKET_WORDS),
    _rule("id", r"(?<![\w#&])#\d+(?!\w)", chars="#"),
    _rule("id", r"(?<![\w.,])\d{6,}(?!\w|[.,]\d)", gate=r"\d{6}"),
    _rule("id", r"(?<![\w./@#:~\\-])[\w-]{6,}(?![\w-]|[./@:]\w)", _mixed_token,
          gate=r"[A-Za-z_]\d+[A-Za-z_]|\d[A-Za-z_]+\d"),
    _rule("number", r"(?<![\w.,/:$-])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:%|st|nd|rd|th)?"
          r"(?!\w|[.,:/]\d|-\w)"),  # "10-K", "1-hour", "3-day": part of a word, kept
]  # fmt: skip
_ALL = [*_QUOTED, *_RULES]
_DIGIT = re.compile(r"\d")
_DOTTED = re.compile(r"\.([a-z0-9]+)")


def _scan(text: str, rules: Sequence[_Rule]) -> list[tuple[int, int, Kind, str]]:
    """(start, end, kind, value) of every argument in order. Each rule reads the text with the arguments
    found before it blanked out, so an earlier rule wins where two would overlap."""
    found: list[tuple[int, int, Kind, str]] = []  # sorted
    work = text
    lower, digit, dotted = _features(work)
    for rule in rules:
        if not _applies(rule, work, lower, digit, dotted):
            continue
        spans = []
        for match in rule.pattern.finditer(work):
            kind = rule.kind
            if kind == "quoted":  # the quotes go with the text; "'https://x.org'" is a URL
                start, end = match.span()
                value = text[match.start("v") : match.end("v")]
                if not value.strip():
                    continue
                inner = _scan(value, _RULES)
                if len(inner) == 1 and inner[0][:2] == (0, len(value)):
                    kind = inner[0][2]
            else:
                start, end = match.span("v") if "v" in rule.pattern.groupindex else match.span()
                value = text[start:end]
                if kind in ("url", "path"):
                    value = _trimmed(value)
                    end = start + len(value)
                if not value or (rule.check is not None and not rule.check(value)):
                    continue
            at = bisect.bisect(found, (start,))
            if (at == 0 or found[at - 1][1] <= start) and (at == len(found) or end <= found[at][0]):
                found.insert(at, (start, end, kind, value))
                spans.append((start, end))
        if spans:  # in the order found: increasing, not overlapping
            pieces, at = [], 0
            for start, end in spans:
                pieces += [work[at:start], " " * (end - start)]
                at = end
            work = "".join([*pieces, work[at:]])
            lower, digit, dotted = _features(work)
    return found


def _features(text: str) -> tuple[str, bool, set[str]]:
    """What the rules' gates read: the lowercased text, whether it has a digit, the words after a dot."""
    lower = text.lower()
    return lower, _DIGIT.search(text) is not None, set(_DOTTED.findall(lower)) if "." in text else set()


def _applies(rule: _Rule, text: str, lower: str, digit: bool, dotted: set[str]) -> bool:
    if rule.digit and not digit:
        return False
    for char in rule.chars:
        if char in text:
            break
    else:
        if rule.chars:
            return False
    for needle in rule.needles:
        if needle in lower:
            break
    else:
        if rule.needles:
            return False
    if rule.dotted is not None and rule.dotted.isdisjoint(dotted):
        return False
    return rule.gate is None or rule.gate.search(text) is not None


def _trimmed(value: str) -> str:
    """A URL or path without the sentence's punctuation after it (a closing bracket it opened stays)."""
    while value and value[-1] in _TRIMMED:
        if value[-1] == ")" and value.count("(") >= value.count(")"):
            break
        value = value[:-1]
    return value


def extract(text: str) -> Extracted:
    """The request with its arguments taken out (each replaced by its kind's word), and the arguments.

    The text stays as it was when nothing but arguments is left of it (no letter outside them: "42",
    "https://x.org"), or when the replacement words would grow it by more than ``MAX_GROWTH`` characters."""
    found = _scan(text, _ALL)
    if not found:
        return Extracted(text, ())
    pieces: list[str] = []
    outside: list[str] = []  # the text outside the arguments
    at = 0
    for start, end, kind, _ in found:
        before, word = text[at:start], PLACEHOLDERS[kind]
        if not word and text[end : end + 1] in _TRIMMED:  # "top 10, then" -> "top, then"
            before = before.rstrip()
        outside.append(before)
        pieces += [before, " " if text[start - 1 : start].isalnum() else "", word]
        pieces.append(" " if text[end : end + 1].isalnum() else "")
        at = end
    outside.append(text[at:])
    replaced = " ".join("".join([*pieces, text[at:]]).split())
    if not any(c.isalpha() for piece in outside for c in piece) or len(replaced) > len(text) + MAX_GROWTH:
        replaced = text
    return Extracted(replaced, tuple(Argument(kind, value) for _, _, kind, value in found))


def _table(*rows: tuple[tuple[Kind, ...], str]) -> dict[str, frozenset[Kind]]:
    return {word: frozenset(kinds) for kinds, words in rows for word in words.split()}


# The words of a parameter's name, and the kinds of argument a parameter so named takes.
_NAME_WORDS = _table(
    (("url",), "url urls uri uris link links href endpoint website site page webpage homepage"),
    (("email",), "email emails mail recipient recipients cc bcc"),
    (
        ("path", "filename"),
        "path paths file files filepath filename dir directory folder source destination src dest",
    ),
    (
        ("quoted",),
        "query q text content contents body message note notes title name subject description comment "
        "prompt keyword keywords search term terms",
    ),
    (("date", "datetime"), "date dates day start end since until due deadline datetime timestamp birthday"),
    (("time",), "time hour hours"),
    (("timezone",), "timezone timezones tz zone"),
    (("amount",), "amount price cost total quantity fee balance budget"),
    (("id",), "id ids key uuid guid issue ticket pr invoice"),
    (("hash",), "sha commit hash revision rev ref checksum digest"),
)
# Names run together ("file_name", "time_zone" split fine; these do not).
_COMPOUNDS = _table(
    (("timezone",), "timezone"),
    (("path", "filename"), "filename filepath pathname dirname foldername"),
    (("date", "datetime"), "datetime timestamp"),
)
# Description words specific enough to give a kind when the parameter's name gives none.
_DESCRIPTION_WORDS = frozenset(
    "url uri link href endpoint website email path filepath filename directory folder timezone date datetime "
    "timestamp time sha hash revision uuid query".split()
)
_FORMATS = _table(
    (("url",), "uri url iri uri-reference iri-reference"),
    (("email",), "email idn-email"),
    (("date",), "date"),
    (("date", "datetime"), "date-time"),
    (("time",), "time"),
    (("id",), "uuid"),
)
_NUMERIC_KINDS: frozenset[Kind] = frozenset(("number", "amount", "id"))
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _parameter_kinds(name: str, spec: dict[str, Any]) -> set[Kind]:
    declared = spec.get("type")
    types = {declared} if isinstance(declared, str) else {str(t) for t in declared or ()}
    items = spec.get("items")
    if "array" in types and isinstance(items, dict) and isinstance(items.get("type"), str):
        types.add(items["type"])
    if "boolean" in types or (types and not types & {"string", "integer", "number"}):
        return set()  # flags (some say "boolean or string"), objects
    allowed = _NUMERIC_KINDS if types and "string" not in types else None
    kinds: set[Kind] = set(_FORMATS.get(str(spec.get("format", "")).lower(), ()))
    if types & {"integer", "number"}:
        kinds.add("number")
    words = [w.lower() for w in _WORD.findall(name)]
    description = re.findall(r"[a-z]+", str(spec.get("description", "")).lower())
    joined = "".join(words)
    candidates = [compound_kinds for compound, compound_kinds in _COMPOUNDS.items() if compound in joined]
    candidates += [_NAME_WORDS[w] for w in reversed(words) if w in _NAME_WORDS]  # the head noun comes last
    candidates += [_NAME_WORDS[w] for w in description if w in _DESCRIPTION_WORDS]
    for candidate in candidates:
        fitting = candidate if allowed is None else candidate & allowed
        if fitting:
            return kinds | fitting
    return kinds


def parameter_kinds(input_schema: dict[str, Any]) -> frozenset[Kind]:
    """The kinds of argument a tool's parameters take (top level, and one level of nested objects)."""
    kinds: set[Kind] = set()
    properties = input_schema.get("properties")
    for name, spec in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        kinds |= _parameter_kinds(str(name), spec)
        items = spec.get("items")
        nested = spec.get("properties") or (items.get("properties") if isinstance(items, dict) else None)
        for inner_name, inner in (nested if isinstance(nested, dict) else {}).items():
            if isinstance(inner, dict):
                kinds |= _parameter_kinds(str(inner_name), inner)
    return frozenset(kinds)


def fits(arguments: Sequence[Argument], kinds: frozenset[Kind]) -> float:
    """The share of the request's specific arguments (a URL, a path, a time zone, ...) the tool can take;
    0.0 when the request has none."""
    specific = [a.kind for a in arguments if a.kind in SPECIFIC]
    if not specific:
        return 0.0
    taken = sum(1 for kind in specific if not _ACCEPTED_BY.get(kind, frozenset((kind,))).isdisjoint(kinds))
    return taken / len(specific)
