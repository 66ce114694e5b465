"""How big a definition may be: the caps a registration, a patch and an import are held to, and the cap
on a description an agent is shown.

Written through the REST API (create and PATCH alike, and every item of an import): a description
of at most ``DESCRIPTION_CHARS`` characters, metadata of at most ``METADATA_CHARS`` and each schema
(input, output, annotations) of at most ``SCHEMA_CHARS`` as compact JSON; an import of at most
``BATCH_TOOLS`` tools. A request over a cap is refused whole (422) with what was too big.

Discovered tools (an upstream's ``tools/list``) are stored as the server sent them, whatever their
size: a sync must not fail on one long description, and the pinned hash must cover what the server
said. What an agent is shown of any description is cut to ``DESCRIPTION_CHARS`` (``cut``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from tool_selector.core.errors import InvalidInputError
from tool_selector.core.models import ServerSpec, ToolSpec

DESCRIPTION_CHARS = 20_000  # the longest real descriptions are a few thousand (livemcpbench: 3,866)
METADATA_CHARS = 20_000
SCHEMA_CHARS = 100_000  # the largest real input schema of the benchmark catalogs is 10,169
BATCH_TOOLS = 20_000  # msc_bench_dev, the largest catalog here, has 2,375


def json_chars(value: Any) -> int:
    """The size of ``value`` as compact JSON, in characters."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def capped_json(limit: int, what: str) -> Callable[[Any], Any]:
    """A pydantic after-validator refusing a JSON value longer than ``limit`` characters."""

    def check(value: Any) -> Any:
        size = json_chars(value) if value is not None else 0
        if size > limit:
            raise ValueError(f"{what} is {size:,} characters as JSON; at most {limit:,} are accepted")
        return value

    return check


# the caps as field types, for request models (create and PATCH alike)
CappedDescription = Annotated[str, Field(max_length=DESCRIPTION_CHARS)]
CappedMetadata = Annotated[dict[str, Any], AfterValidator(capped_json(METADATA_CHARS, "metadata"))]
CappedSchema = Annotated[dict[str, Any], AfterValidator(capped_json(SCHEMA_CHARS, "the schema"))]


def cut(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text`` cut to ``limit`` characters (the last one an ellipsis) when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def oversize(
    servers: Iterable[ServerSpec], tools: Iterable[ToolSpec], *, max_tools: int | None = BATCH_TOOLS
) -> list[str]:
    """What is over a cap in a batch: one line per problem (an empty list when all is within).
    ``max_tools`` caps a request's tools (None: a catalog folder on the operator's disk, held to
    ``max_file_bytes`` instead)."""
    problems = []
    for server in servers:
        if len(server.description) > DESCRIPTION_CHARS:
            problems.append(f"server {server.name!r}: description of {len(server.description):,} characters")
        if (size := json_chars(server.metadata)) > METADATA_CHARS:
            problems.append(f"server {server.name!r}: metadata of {size:,} characters")
    count = 0
    for tool in tools:
        count += 1
        if len(tool.description) > DESCRIPTION_CHARS:
            problems.append(f"tool {tool.id!r}: description of {len(tool.description):,} characters")
        for field in ("input_schema", "output_schema", "annotations"):
            value = getattr(tool, field, None)
            if value is not None and (size := json_chars(value)) > SCHEMA_CHARS:
                problems.append(f"tool {tool.id!r}: {field} of {size:,} characters")
    if max_tools is not None and count > max_tools:
        problems.append(f"{count:,} tools in one request")
    return problems


LIMITS_HINT = (
    f"Descriptions are accepted up to {DESCRIPTION_CHARS:,} characters, metadata up to {METADATA_CHARS:,}, "
    f"each schema up to {SCHEMA_CHARS:,} as JSON, and {BATCH_TOOLS:,} tools per import: shorten the "
    "text or split the batch."
)


def refuse_oversize(
    servers: Iterable[ServerSpec], tools: Iterable[ToolSpec], *, max_tools: int | None = BATCH_TOOLS
) -> None:
    """InvalidInputError (422) naming what is over a cap, when anything is."""
    problems = oversize(servers, tools, max_tools=max_tools)
    if problems:
        raise InvalidInputError(
            f"The batch is over the size limits ({len(problems)} problems): " + "; ".join(problems[:5]) + ".",
            hint=LIMITS_HINT,
            too_big=problems[:100],
        )
