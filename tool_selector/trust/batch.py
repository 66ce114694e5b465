"""A whole catalog through the scanner: its servers' descriptions, its tools, and one rule across them.

The rule: a server caught serving poison is not trusted with its other tools. When a server's own
description is quarantined, or one of its tools is, each of its other tools gets a flag-strength
finding ("its server 'shady' is quarantined for tool 'x'"), combined with its own findings as
``scanner.verdict_of`` combines any two: a clean sibling becomes ``flagged``, a flagged one
``quarantine``. Tools without a server (a JSON-lines item that names none) are judged alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tool_selector.trust.findings import Finding
from tool_selector.trust.scanner import ScanContext, ScanResult, read_text_findings, tool_findings, verdict_of

if TYPE_CHECKING:
    from tool_selector.trust.intent import ReadsIntent


@dataclass(frozen=True)
class Definition:
    """One tool to scan; ``server`` and ``name`` are "" when the source does not give them."""

    id: str
    server: str
    name: str
    description: str
    input_schema: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CatalogScan:
    """The verdicts on a catalog: per server description (by server name) and per tool (in order)."""

    servers: dict[str, ScanResult]
    tools: list[ScanResult]


def scan_catalog(
    servers: Mapping[str, str], tools: Sequence[Definition], *, intent: ReadsIntent | None = None
) -> CatalogScan:
    """Scan ``servers`` (name -> description) and ``tools`` with the catalog's names as context; with
    ``intent``, each tool also through the learned check of what it asks the model to do (a server's own
    text is read by the rules alone: the check was fitted on tool definitions)."""
    from tool_selector.trust.intent import definition_pieces

    context = ScanContext.from_tools((t.server, t.name) for t in tools if t.server and t.name)
    server_findings = {
        name: read_text_findings(text, field="server description") for name, text in servers.items()
    }
    tool_readings = [
        definition_pieces(t.name, t.description, t.input_schema, t.annotations)
        for t in (tools if intent is not None else ())
    ]
    findings = [
        tool_findings(
            t.server, t.name, t.description, t.input_schema, t.output_schema, t.annotations, context=context
        )
        for t in tools
    ]
    if intent is not None:
        intent.read_all(tool_readings)  # in parallel, one model session per worker
        for index, pieces in enumerate(tool_readings):
            findings[index] = findings[index] + intent.findings(pieces)
    server_results = {name: verdict_of(found) for name, found in server_findings.items()}
    verdicts = [verdict_of(f) for f in findings]
    culprits: dict[str, list[str]] = defaultdict(list)
    for name, result in server_results.items():
        if result.held:
            culprits[name].append("its own description")
    for tool, verdict in zip(tools, verdicts, strict=True):
        if tool.server and verdict.held:
            culprits[tool.server].append(f"tool {tool.name or tool.id!r}")
    for index, tool in enumerate(tools):
        others = [c for c in culprits.get(tool.server, []) if c != f"tool {tool.name or tool.id!r}"]
        if tool.server and others and not verdicts[index].held:
            reason = f"its server {tool.server!r} is quarantined for {others[0]}"
            if len(others) > 1:
                reason += f" and {len(others) - 1} more"
            verdicts[index] = verdict_of([*findings[index], Finding("server", "flag", reason)])
    return CatalogScan(servers=server_results, tools=verdicts)
