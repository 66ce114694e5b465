"""A tool's parameters as the filler reads them: JSON types, the kinds of argument each takes (by
tool_selector/core/arguments.py: name, format, description), the words of its name, its role in a pair
(source/target, start/end, ...), its enum, and the shape its values have."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from tool_selector.core.arguments import Kind, parameter_kinds

Role = Literal["first", "second"]
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
FIRST_WORDS = frozenset(
    "source src from start begin since init initial checkin min base after old find input origin dep "
    "left".split()
)
SECOND_WORDS = frozenset(
    "target dest destination to end until checkout max new replace output before arr right".split()
)
# name words that say nothing about which value goes in: never an anchor
GENERIC = frozenset("id ids name names key keys value values text type the of number num a an".split())
COUNT_HEADS = frozenset("count limit first top results size num head tail length n".split())
NOT_COUNTS = frozenset("page offset cursor index start min thought lat lon latitude longitude price".split())
_CODE = re.compile(r"\b(?:sql|cql|jql|hql|graphql|promql|query language|syntax)\b", re.IGNORECASE)
_QUOTED_VALUES = re.compile(r"""['"]([\w./+-]{1,40})['"]""")
_EXAMPLE = re.compile(r"""(?:e\.g\.,?\s*|['"])([A-Za-z0-9][\w.-]{2,24})(?=['",)\s])""")
_UNIT = re.compile(r"\b(?:in|number of|count of|amount of)\s+(\w+)(?:\s+(\w+))?", re.IGNORECASE)
_STOP = frozenset(
    "the a an of to in on for and or is are be by with this that it its if as at from which what return "
    "returns default optional only use used when not no".split()
)


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    spec: dict[str, Any]
    required: bool
    types: frozenset[str]  # JSON types, anyOf flattened, null left out
    array: bool  # an array of strings or numbers
    kinds: frozenset[Kind]
    words: tuple[str, ...]  # the name's words in lower case, in order
    described: frozenset[str]  # the description's words in lower case (no stop words)
    units: frozenset[str]  # what its number counts or measures ("seconds", "results")
    role: Role | None
    enum: tuple[Any, ...]  # the enum, or the values its description lists in quotes
    shape: re.Pattern[str] | None  # a pattern its values match (the schema's, or one of its examples)

    @property
    def description(self) -> str:
        return str(self.spec.get("description") or "")

    @property
    def numeric(self) -> bool:
        return bool(self.types & {"integer", "number"}) and "string" not in self.types

    @property
    def texty(self) -> bool:
        return "string" in self.types or not self.types

    @property
    def head(self) -> str:
        return self.words[-1] if self.words else ""

    @property
    def code(self) -> bool:
        """Takes a query language (SQL, CQL, JQL, ...): plain words are no value for it."""
        return bool(_CODE.search(f"{self.name} {self.description}"))

    def has(self, *words: str) -> bool:
        return any(w in self.words for w in words)

    def anchors(self) -> frozenset[str]:
        """The words that, next to a value in the request, say the value is this parameter's."""
        own = {w for w in self.words if w not in GENERIC and w not in FIRST_WORDS | SECOND_WORDS}
        if not own:
            found = re.search(r"\b(\w+)\s+(?:name|id|key)\b", self.description.lower())
            if found and found.group(1) not in _STOP:
                own.add(found.group(1))
        return frozenset(own | {SYNONYMS[w] for w in own if w in SYNONYMS})


SYNONYMS = {
    "application": "app", "cols": "columns", "columns": "cols", "repository": "repo", "repo": "repository",
    "directory": "folder", "folder": "directory", "qty": "quantity",
}  # fmt: skip


def words_of(name: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _WORD.findall(name))


def _types(spec: dict[str, Any]) -> set[str]:
    declared = spec.get("type")
    types = {declared} if isinstance(declared, str) else set()
    if isinstance(declared, list):
        types = {t for t in declared if isinstance(t, str)}
    options = [o for key in ("anyOf", "oneOf") if isinstance(spec.get(key), list) for o in spec[key]]
    for option in options:
        if isinstance(option, dict):
            types |= _types(option)
    return types - {"null"}


def _shape(spec: dict[str, Any], kinds: frozenset[Kind]) -> re.Pattern[str] | None:
    if kinds & {"date", "datetime", "time", "timezone"}:
        return None
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except re.error:
            return None
        # a pattern any word fits ("^[a-zA-Z0-9_-]+$") says nothing about which word is the value
        return None if any(compiled.fullmatch(w) for w in ("create", "Hello", "my-list")) else compiled
    examples = [
        e for e in _EXAMPLE.findall(str(spec.get("description") or "")) if any(c.isdigit() for c in e)
    ]
    if not examples:
        return None
    pieces = []
    for example in examples:
        runs = re.findall(r"\d+|[A-Z]+|[a-z]+|.", example)
        pieces.append("".join(_run(r) for r in runs))
    return re.compile("^(?:" + "|".join(pieces) + ")$")


def _run(run: str) -> str:
    if run.isdigit():
        return rf"\d{{{len(run)}}}"
    if run.isalpha():
        return f"[A-Z]{{{len(run)}}}" if run.isupper() else f"[a-z]{{{len(run)}}}"
    return re.escape(run)


def _enum(spec: dict[str, Any], types: set[str], kinds: frozenset[Kind]) -> tuple[Any, ...]:
    items = spec.get("items")
    enum = spec.get("enum") or (items.get("enum") if isinstance(items, dict) else None)
    if isinstance(enum, list):
        return tuple(v for v in enum if isinstance(v, str | int) and not isinstance(v, bool))
    description = str(spec.get("description") or "")
    if kinds or "string" not in types or re.search(r"e\.g\.|example|such as", description, re.IGNORECASE):
        return ()
    values = _QUOTED_VALUES.findall(description)
    return tuple(dict.fromkeys(values)) if len(set(values)) >= 2 else ()


def _units(description: str) -> frozenset[str]:
    units = set()
    for match in _UNIT.finditer(description):
        units |= {w.lower() for w in match.groups() if w and w.lower() not in _STOP}
    return frozenset(units)


def parameters_of(input_schema: dict[str, Any]) -> list[Parameter]:
    """The top-level parameters of a tool's input schema, in the schema's order."""
    properties = input_schema.get("properties")
    required = input_schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    parameters = []
    for name, spec in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        types = _types(spec)
        raw_items = spec.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
        array = "array" in types and _types(items) <= {"string", "number", "integer"}
        flat = {**spec, "type": sorted((types | (_types(items) if array else set())) - {"array"})}
        if len(flat["type"]) == 1:
            flat["type"] = flat["type"][0]
        kinds = parameter_kinds({"properties": {str(name): flat}})
        words = words_of(str(name))
        role: Role | None = None
        if FIRST_WORDS & set(words):
            role = "first"
        elif SECOND_WORDS & set(words):
            role = "second"
        described = frozenset(
            w for w in re.findall(r"[a-z]+", str(spec.get("description") or "").lower()) if w not in _STOP
        )
        parameters.append(
            Parameter(
                name=str(name),
                spec=spec,
                required=name in required_names,
                types=frozenset((types - {"array"}) | _types(items)) if array else frozenset(types),
                array=array,
                kinds=kinds,
                words=words,
                described=described,
                units=_units(str(spec.get("description") or "")),
                role=role,
                enum=_enum(spec, types, kinds),
                shape=_shape(spec, kinds),
            )
        )
    return parameters


def is_count(parameter: Parameter) -> bool:
    """A parameter that says how many results come back (``limit``, ``max_count``, ``first``, ``head``)."""
    if not parameter.numeric or set(parameter.words) & NOT_COUNTS:
        return False
    if parameter.head in COUNT_HEADS:
        return True
    return bool(
        re.search(
            r"\b(?:max(?:imum)?|number)\b.*\b(?:return|results?|fetch|retrieve)\b",
            parameter.description,
            re.I,
        )
    )


def is_datetime(parameter: Parameter) -> bool:
    """Takes a date and a time (``format: date-time``, "Start time in ISO format"): no date alone."""
    if parameter.spec.get("format") == "date-time":
        return True
    text = parameter.description.lower()
    return "iso" in text and "time" in parameter.described and "date" not in text.replace("datetime", "")


def takes_dates(parameter: Parameter) -> bool:
    if parameter.numeric or not parameter.texty:
        return False
    if parameter.kinds & {"date", "datetime"} or parameter.has("month", "date", "day"):
        return True
    return "yyyy-mm-dd" in parameter.description.lower()
