"""Use case: how many tokens the gateway saves an agent, query by query.

    all tools loaded   the tools/list an agent gets when every configured server is wired in directly:
                       every tool's name, description and input schema, as JSON
    through gateway    the gateway's own five tool definitions + the resolve_intent call and its answer
                       + on "activated", the definitions of the tools the answer names, which the client
                       then lists (activation adds those, not the whole power)

Counted with the Claude tokenizer of ``tool_selector/core/tokens.py``. The answer is built exactly as the
gateway builds it (``services/gateway/answer.resolve_answer``) from the catalog's tools, as a first request
of a session and without starting any server. One query at a time: ``tool-selector lab conversation``
measures a whole conversation, which is what an agent pays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import types
from pydantic import BaseModel

from services.gateway.answer import Facts, GatewayAnswer, Started, resolve_answer
from services.gateway.service import filler, namespaced, render_answer
from services.gateway.tools import gateway_tools
from services.resolve.read_path import ReadPath
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited
from tool_selector.core.models import Decision
from tool_selector.core.tokens import TOKENIZER_NAME, count_tokens
from tool_selector.route.tiers import PowerInfo


class TokenLine(BaseModel):
    query: str
    status: str
    power: str | None
    gateway_tokens: int
    all_tools_tokens: int
    saved: float


class TokenReport(BaseModel):
    tokenizer: str
    servers: int
    tools: int
    all_tools_tokens: int
    gateway_definitions_tokens: int
    lines: list[TokenLine]
    total_gateway_tokens: int
    total_all_tools_tokens: int
    saved: float


def _tools_list_json(tools: Sequence[dict[str, Any]]) -> str:
    return json.dumps({"tools": list(tools)}, ensure_ascii=False)


def power_definitions(info: PowerInfo, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """A power's tools (or those ``names`` names) as a client lists them from the gateway (namespaced,
    schema as given)."""
    return [
        {"name": namespaced(info.name, t.name), "description": t.description, "inputSchema": t.input_schema}
        for t in info.tools
        if names is None or t.name in names
    ]


def _mcp_tools(info: PowerInfo) -> list[types.Tool]:
    return [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in info.tools
    ]


def all_tools_tokens(powers: dict[str, PowerInfo]) -> int:
    tools = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
        for info in powers.values()
        for t in info.tools
    ]
    return count_tokens(_tools_list_json(tools))


def gateway_definitions_tokens() -> int:
    """The gateway's five tools as the model sees them (name, description, schema; clients keep
    ``_meta``, where the hints also live, to themselves)."""
    tools = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in gateway_tools()
    ]
    return count_tokens(_tools_list_json(tools))


def read_queries(path: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[str]:
    """One query a line: plain text, or JSON objects with a "query" field (queries.jsonl); the file is at
    most ``limit_bytes`` (the ``max_file_bytes`` setting)."""
    try:
        text = read_text_limited(path, limit_bytes=limit_bytes, what="queries file")
        lines = [line.strip() for line in text.splitlines()]
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogFileError(
            f"Cannot read the queries file {path}: {exc}.",
            hint="Give a text file with one query a line, or a queries.jsonl of a benchmark folder.",
        ) from exc
    queries = []
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        if line.startswith("{"):
            try:
                value = json.loads(line).get("query")
            except (json.JSONDecodeError, AttributeError):
                value = None
            if not isinstance(value, str) or not value.strip():
                raise CatalogFileError(
                    f"Line {number} of {path} is a JSON object without a text 'query' field.",
                    hint='Write {"query": "..."} a line, or plain text a line.',
                )
            queries.append(value.strip())
        else:
            queries.append(line)
    if not queries:
        raise CatalogFileError(f"{path} holds no queries.", hint="Write one query a line.")
    return queries


def first_answer(powers: Mapping[str, PowerInfo], decision: Decision, query: str) -> GatewayAnswer:
    """resolve_intent's answer to ``query`` as the first request of a session, every power runnable and
    started without error, built from the catalog's tools (no server is started)."""
    info = powers.get(decision.power or "") if decision.status == "activated" else None
    started = Started(name=info.name, tools=_mcp_tools(info), already=False) if info is not None else None
    return resolve_answer(
        decision, Facts(runnable=powers.keys(), may_call=True, started=started, fill=filler(query))
    )


def account_tokens(read_path: ReadPath, queries: Sequence[str]) -> TokenReport:
    powers = read_path.snapshot().powers
    baseline = all_tools_tokens(powers)
    own = gateway_definitions_tokens()
    lines = []
    for query in queries:
        decision = read_path.decide(query).decision
        call = json.dumps({"name": "resolve_intent", "arguments": {"query": query}}, ensure_ascii=False)
        answer = first_answer(powers, decision, query)
        seen = own + count_tokens(call) + count_tokens(render_answer(answer.as_json()))
        info = powers.get(answer.power or "")
        if info is not None and answer.shown:
            seen += count_tokens(_tools_list_json(power_definitions(info, answer.shown)))
        lines.append(
            TokenLine(
                query=query,
                status=decision.status,
                power=decision.power,
                gateway_tokens=seen,
                all_tools_tokens=baseline,
                saved=round(1 - seen / baseline, 4) if baseline else 0.0,
            )
        )
    total_seen = sum(line.gateway_tokens for line in lines)
    total_all = baseline * len(lines)
    return TokenReport(
        tokenizer=TOKENIZER_NAME,
        servers=len(powers),
        tools=sum(len(info.tools) for info in powers.values()),
        all_tools_tokens=baseline,
        gateway_definitions_tokens=own,
        lines=lines,
        total_gateway_tokens=total_seen,
        total_all_tools_tokens=total_all,
        saved=round(1 - total_seen / total_all, 4) if total_all else 0.0,
    )
