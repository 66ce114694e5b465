"""How deep and how big the JSON of a definition may be: one limit for every door, and a safe read of
what was stored before it.

Every JSON value a tool definition carries (input schema, output schema, annotations) and a server's
metadata is nested at most ``MAX_JSON_DEPTH`` levels (``{}`` is one level, ``{"a": {}}`` two); a tool's
JSON values are at most ``SCHEMA_CHARS`` characters each as compact JSON. ``ToolSpec`` and
``ServerSpec`` (core/models.py) hold to it whatever made them: REST registration and PATCH, batch
import jobs, ``catalog import``, the sync's discovery and activation's live check. Bad input is
refused before anything is stored (422 / exit 2 or 3); a live server's tool over it is left out,
named in the sync's summary.

Why 64: the deepest schema of the benchmark catalogs here is 15 levels (msc_bench_dev); the JSON
parser of pydantic (jiter, which the mcp client uses too) refuses 200, and pydantic's serializer
(every REST answer) fails at 255 with "Maximum serialization depth exceeded", which made a stored
definition 260 levels deep a 500 on every route that showed it (issue 39).

A definition stored before the limit is read as it is stored but for a value over the depth limit,
which reads as ``withheld(...)``: a small object naming the limit and what to do, so every list that
shows it still answers.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

MAX_JSON_DEPTH = 64
SCHEMA_CHARS = 100_000  # the largest real input schema of the benchmark catalogs is 10,169
WITHHELD_KEY = "x-tool-selector-withheld"
LIMITS_DOC = "docs/operator-guide.md, 'Limits'"


def json_depth(value: Any, stop: int = MAX_JSON_DEPTH) -> int:
    """How many containers (objects, arrays) ``value`` nests, counted without recursion; it stops
    counting past ``stop`` (the answer is then ``stop + 1``)."""
    if not isinstance(value, dict | list):
        return 0
    deepest = 1
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > deepest:
            deepest = depth
            if deepest > stop:
                return stop + 1
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def json_chars(value: Any) -> int:
    """The size of ``value`` as compact JSON, in characters (call it within the depth limit only)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def depth_problem(value: Any, what: str) -> str | None:
    """What is too deep about ``value``, with what to do; None within the limit."""
    if json_depth(value) <= MAX_JSON_DEPTH:
        return None
    return (
        f"the {what} is nested more than {MAX_JSON_DEPTH} levels deep; at most {MAX_JSON_DEPTH} are "
        f"accepted: flatten it (or use $ref definitions) and send it again"
    )


def json_problem(value: Any, what: str, max_chars: int | None = SCHEMA_CHARS) -> str | None:
    """What is over a limit in ``value`` (depth first: a value too deep cannot even be measured
    safely), with what to do; None when it is within both."""
    if value is None:
        return None
    problem = depth_problem(value, what)
    if problem is not None or max_chars is None:
        return problem
    size = json_chars(value)
    if size > max_chars:
        return (
            f"the {what} is {size:,} characters as JSON; at most {max_chars:,} are accepted: shorten it "
            "and send it again"
        )
    return None


def limited_json(what: str, max_chars: int | None = SCHEMA_CHARS) -> AfterValidator:
    """A pydantic after-validator refusing a JSON value over the depth limit (and ``max_chars``)."""

    def check(value: Any) -> Any:
        problem = json_problem(value, what, max_chars)
        if problem is not None:
            raise PydanticCustomError("json_limit", "{problem}", {"problem": problem})
        return value

    return AfterValidator(check)


RULE = f"a JSON object nested at most {MAX_JSON_DEPTH} levels, at most {SCHEMA_CHARS:,} characters"
InputSchema = Annotated[dict[str, Any], limited_json("input_schema"), Field(description=RULE)]
OutputSchema = Annotated[dict[str, Any], limited_json("output_schema"), Field(description=RULE)]
Annotations = Annotated[dict[str, Any], limited_json("annotations"), Field(description=RULE)]
ShallowMetadata = Annotated[
    dict[str, Any],
    limited_json("metadata", max_chars=None),
    Field(description=f"a JSON object nested at most {MAX_JSON_DEPTH} levels"),
]


# -- reading what was stored before the limit -----------------------------------------------------


def withheld(what: str, repair: str) -> dict[str, str]:
    """What a stored value over the depth limit reads as: the limit and what to do."""
    return {
        WITHHELD_KEY: f"this {what} is nested more than {MAX_JSON_DEPTH} levels deep, over the limit "
        f"({LIMITS_DOC}); it was stored before the limit and is not shown. {repair}"
    }


def is_withheld(value: Any) -> bool:
    return isinstance(value, dict) and WITHHELD_KEY in value


def may_be_too_deep(text: str) -> bool:
    """Whether stored JSON text could nest more than the limit (fewer brackets than that cannot)."""
    return text.count("{") + text.count("[") > MAX_JSON_DEPTH


def read_json(text: str, what: str, repair: str) -> Any:
    """Stored JSON text, parsed; a value nested over the limit reads as ``withheld``."""
    if not may_be_too_deep(text):
        return json.loads(text)
    try:
        value = json.loads(text)
    except RecursionError:
        return withheld(what, repair)
    return withheld(what, repair) if json_depth(value) > MAX_JSON_DEPTH else value


def shown_definition(definition: Any, repair: str) -> Any:
    """A stored definition (an object of fields) with each field over the depth limit withheld."""
    if not isinstance(definition, dict):
        return definition
    return {
        key: withheld(key, repair) if json_depth(value) > MAX_JSON_DEPTH else value
        for key, value in definition.items()
    }


def withheld_fields(definition: Any) -> list[str]:
    """The fields of a definition read as ``withheld``."""
    if not isinstance(definition, dict):
        return []
    return [key for key, value in definition.items() if is_withheld(value)]
