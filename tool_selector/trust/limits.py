"""How big a definition may be: the caps a registration, a patch and an import are held to, and the cap
on a description an agent is shown.

Every door (REST registration and PATCH, import jobs, ``catalog import``, the sync's discovery,
activation's live check) holds each JSON value of a tool (input and output schema, annotations) to
``MAX_JSON_DEPTH`` levels and ``SCHEMA_CHARS`` characters as compact JSON, and a server's metadata to
the same depth: ``ToolSpec`` and ``ServerSpec`` apply tool_selector/core/json_limits.py themselves.

Written through the REST API (create and PATCH alike, and every item of an import): besides, a
description of at most ``DESCRIPTION_CHARS`` characters and metadata of at most ``METADATA_CHARS``; an
import of at most ``BATCH_TOOLS`` tools. A request over a cap is refused whole (422) with what was too
big.

Discovered tools (an upstream's ``tools/list``) are stored with the description the server sent,
whatever its length: a sync must not fail on one long description, and the pinned hash must cover what
the server said; a tool over the JSON limits is left out, and the sync's summary names it. What an
agent is shown of any description is cut to ``DESCRIPTION_CHARS`` (``cut``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import Field

from tool_selector.core.errors import InvalidInputError
from tool_selector.core.json_limits import (  # the JSON limits of every door live there
    MAX_JSON_DEPTH,
    SCHEMA_CHARS,
    json_problem,
    limited_json,
)
from tool_selector.core.models import ServerSpec, ToolSpec

DESCRIPTION_CHARS = 20_000  # the longest real descriptions are a few thousand (livemcpbench: 3,866)
METADATA_CHARS = 20_000
BATCH_TOOLS = 20_000  # msc_bench_dev, the largest catalog here, has 2,375


# the caps as field types, for request models (create and PATCH alike)
CappedDescription = Annotated[str, Field(max_length=DESCRIPTION_CHARS)]
CappedMetadata = Annotated[dict[str, Any], limited_json("metadata", METADATA_CHARS)]


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
        if (problem := json_problem(server.metadata, "metadata", METADATA_CHARS)) is not None:
            problems.append(f"server {server.name!r}: {problem}")
    count = 0
    for tool in tools:
        count += 1
        if len(tool.description) > DESCRIPTION_CHARS:
            problems.append(f"tool {tool.id!r}: description of {len(tool.description):,} characters")
        # its JSON values were held to the depth and size limits when the ToolSpec was made
    if max_tools is not None and count > max_tools:
        problems.append(f"{count:,} tools in one request")
    return problems


LIMITS_HINT = (
    f"Descriptions are accepted up to {DESCRIPTION_CHARS:,} characters, metadata up to {METADATA_CHARS:,}, "
    f"each schema up to {SCHEMA_CHARS:,} as JSON, every JSON value nested up to {MAX_JSON_DEPTH} levels, "
    f"and {BATCH_TOOLS:,} tools per import: shorten the text or split the batch."
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
