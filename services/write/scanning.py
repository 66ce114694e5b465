"""Scanning tool definitions from a file: what ``tool-selector scan PATH`` does (no catalog database).

PATH is either a catalog folder (``servers.json`` + ``tools.json``, read and validated by the catalog
file reader: ids are ``server::tool`` for tools and the server name for a server's description) or a
JSON-lines file of tools, one object a line in the format of ``shared/benchmarks/poison/corpus.jsonl``:
``{"id", "server", "tool_name" (or "name"), "title", "description", "input_schema", "output_schema",
"annotations"}``, where only ``description`` is required (a ``title`` is read as MCP's
``annotations.title``, beside the one the annotations give); the id is the item's own ``id`` (else
``server::tool``, else ``line N``). Other keys (labels, notes) are ignored. The whole file is read and
checked before anything is scanned, and each file is held to the ``max_file_bytes`` limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from tool_selector.catalog_files.folder import Problems, decode_text, read_catalog_dir
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_bytes_limited
from tool_selector.core.names import tool_id
from tool_selector.trust.batch import Definition, scan_catalog
from tool_selector.trust.scanner import Verdict

if TYPE_CHECKING:
    from tool_selector.trust.intent import ReadsIntent

JSONL_HINT = (
    "Give a catalog folder (servers.json + tools.json) or a JSON-lines file with one tool a line: "
    '{"id", "server", "tool_name", "description", "input_schema"} (description required).'
)
_SCHEMAS = ("input_schema", "output_schema", "annotations")


class ScannedItem(BaseModel):
    """One scanned definition: a tool, or a server's description."""

    id: str
    kind: Literal["tool", "server"]
    verdict: Verdict
    reasons: list[str] = Field(default_factory=list)


class ScanReport(BaseModel):
    source: str
    format: Literal["catalog", "jsonl"]
    items: list[ScannedItem]

    def count(self, verdict: Verdict, kind: str | None = None) -> int:
        return sum(1 for i in self.items if i.verdict == verdict and (kind is None or i.kind == kind))


def _optional_text(item: Mapping[str, Any], key: str, problems: Problems, line: int) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.add(f"field {key} must be a string", line=line, field=key)
        return ""
    return value


def _definition(item: Any, line: int, problems: Problems) -> Definition | None:
    if not isinstance(item, dict):
        problems.add("is not a JSON object", line=line)
        return None
    if not isinstance(item.get("description"), str):
        problems.add("field description is missing or not a string", line=line, field="description")
        return None
    schemas: dict[str, Mapping[str, Any] | None] = {}
    for key in _SCHEMAS:
        value = item.get(key)
        if value is not None and not isinstance(value, dict):
            problems.add(f"field {key} must be an object or null", line=line, field=key)
            return None
        schemas[key] = value
    server = _optional_text(item, "server", problems, line)
    name = _optional_text(item, "tool_name", problems, line) or _optional_text(item, "name", problems, line)
    title = _optional_text(item, "title", problems, line)
    if title:  # a client shows a tool's title: it is read as the annotations' title is
        given_title = (schemas["annotations"] or {}).get("title")
        extra = {"title": title} if not given_title else {"tool_title": title}
        schemas["annotations"] = {**(schemas["annotations"] or {}), **extra}
    given = item.get("id")
    fallback = tool_id(server, name) if server and name else f"line {line}"
    return Definition(
        id=str(given) if given not in (None, "") else fallback,
        server=server,
        name=name,
        description=item["description"],
        input_schema=schemas["input_schema"],
        output_schema=schemas["output_schema"],
        annotations=schemas["annotations"],
    )


def read_jsonl_tools(path: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[Definition]:
    """The tools of a JSON-lines file; every problem is collected, and none is returned if any."""
    try:
        raw = read_bytes_limited(path, limit_bytes=limit_bytes, what="tools file")
    except OSError as exc:
        raise CatalogFileError(f"Cannot read {path}: {exc}.", hint=JSONL_HINT, path=str(path)) from exc
    problems, tools = Problems(), []
    for line, text in enumerate(decode_text(raw, str(path)).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            problems.add(f"is not valid JSON ({exc})", line=line)
            continue
        tool = _definition(item, line, problems)
        if tool is not None:
            tools.append(tool)
    if not tools and not problems.total:
        problems.add("holds no tools")
    problems.raise_if_any(f"JSON-lines file {path}", JSONL_HINT)
    return tools


def _catalog(folder: Path, limit_bytes: int) -> tuple[dict[str, str], list[Definition]]:
    servers, tools = read_catalog_dir(folder, limit_bytes=limit_bytes)
    definitions = [
        Definition(
            id=t.id,
            server=t.server,
            name=t.name,
            description=t.description,
            input_schema=t.input_schema,
            output_schema=t.output_schema,
            annotations=t.annotations,
        )
        for t in tools
    ]
    return {s.name: s.description for s in servers}, definitions


def scan_path(
    path: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES, intent: ReadsIntent | None = None
) -> ScanReport:
    """Scan the catalog folder or JSON-lines file at ``path``; see the module docstring. ``intent``: the
    learned check beside the rules (None: the rules alone)."""
    if not path.exists():
        raise CatalogFileError(f"{path} does not exist.", hint=JSONL_HINT, path=str(path))
    if path.is_dir():
        servers, tools = _catalog(path, limit_bytes)
        form: Literal["catalog", "jsonl"] = "catalog"
    elif path.name in ("servers.json", "tools.json"):
        raise CatalogFileError(
            f"{path} is one file of a catalog folder.",
            hint=f"Give its folder, {path.parent}.",
            path=str(path),
        )
    else:
        servers, tools, form = {}, read_jsonl_tools(path, limit_bytes=limit_bytes), "jsonl"
    scanned = scan_catalog(servers, tools, intent=intent)
    items = [
        ScannedItem(id=name, kind="server", verdict=r.verdict, reasons=r.reasons)
        for name, r in scanned.servers.items()
    ]
    items += [
        ScannedItem(id=t.id, kind="tool", verdict=r.verdict, reasons=r.reasons)
        for t, r in zip(tools, scanned.tools, strict=True)
    ]
    return ScanReport(source=str(path), format=form, items=items)
