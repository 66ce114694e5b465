"""Batches of servers and tools imported all or nothing, in three formats.

- ``catalog``: a folder with servers.json + tools.json, or one JSON object ``{"servers": [...],
  "tools": [...]}`` holding the same two lists.
- ``csv``: one header row, then a row per tool (or per server, with an empty ``tool`` cell); columns
  ``server`` (required), ``server_description``, ``tool``, ``tool_description``, ``input_schema``
  (JSON text) and ``tags`` (``;``-separated, kept in the server's metadata).
- ``mcpservers``: a Claude Desktop / Cursor configuration ``{"mcpServers": {...}}``; every entry
  becomes a server configuration (to discover its tools) and a server without tools.

Every parser collects all problems (up to ``MAX_PROBLEMS``) and raises one CatalogFileError whose
``details["problems"]`` lists them as ``BatchProblem`` dicts; nothing partial is ever returned.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from tool_selector.catalog_files.folder import (
    FORMAT_HINT,
    BatchProblem,
    Problems,
    check_servers,
    check_tools,
    decode_text,
    listed_names,
    load_json_text,
    read_catalog_dir,
)
from tool_selector.config.servers import ServerConfig, client_entry_config
from tool_selector.core.choices import BatchFormat
from tool_selector.core.errors import CatalogFileError, InvalidInputError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_bytes_limited
from tool_selector.core.json_limits import MAX_JSON_DEPTH
from tool_selector.core.models import ServerSpec, ToolSpec
from tool_selector.core.names import TakenNames, TakenToolNames, copy_problem, tool_copy_problem, tool_id

CSV_COLUMNS = ("server", "server_description", "tool", "tool_description", "input_schema", "tags")
CSV_HINT = (
    f"A CSV batch has a header row naming some of the columns {', '.join(CSV_COLUMNS)}, comma-separated."
)
MCP_HINT = 'An mcpServers batch is {"mcpServers": {"name": {"command": ...} or {"url": ...}}}.'
FORMATS_HINT = (
    'The batch formats are: catalog (a folder with servers.json + tools.json, or JSON {"servers": [...], '
    '"tools": [...]}), csv (a .csv file or text/csv body) and mcpservers (JSON {"mcpServers": {...}}).'
)
_EMPTY = "the batch has no servers and no tools"
Names = Collection[str]
Pairs = Collection[tuple[str, str]]  # (server, tool name) of the catalog, which no new tool may look like


class ImportBatch(BaseModel):
    """A validated batch. For ``mcpservers``, ``servers`` holds one bare server per configuration."""

    format: BatchFormat
    servers: list[ServerSpec] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    server_configs: dict[str, ServerConfig] = Field(default_factory=dict)


# --------------------------------------------------------------------------- catalog JSON


def _json_list(data: dict[str, Any], key: str, problems: Problems) -> list[Any]:
    value = data.get(key, [])
    if isinstance(value, list):
        return value
    problems.add(f"field {key} must be a list, found {type(value).__name__}", field=key)
    return []


def parse_catalog_json(
    data: Any,
    known_servers: Collection[str] = (),
    *,
    source: str = "The catalog batch",
    taken: Names = (),
    taken_tools: Pairs = (),
) -> ImportBatch:
    """``{"servers": [...], "tools": [...]}`` in the benchmark format; a tool may also name a server of
    ``known_servers`` (already in the catalog); a server may not look like a ``taken`` name, nor a tool
    like a ``taken_tools`` one (tool_selector/core/names.py)."""
    if not isinstance(data, dict):
        raise CatalogFileError(
            f"{source} must be a JSON object, found {type(data).__name__}.", hint=FORMAT_HINT
        )
    problems = Problems()
    unknown = sorted(set(data) - {"servers", "tools"})
    if unknown:
        problems.add(
            f"unknown key(s) {', '.join(unknown)}; a catalog batch has servers and tools", field=unknown[0]
        )
    server_items, tool_items = _json_list(data, "servers", problems), _json_list(data, "tools", problems)
    servers = check_servers(server_items, problems, "servers", taken)
    names = listed_names(server_items) | set(known_servers)
    tools = check_tools(tool_items, names, problems, "tools", "the batch or the catalog", taken_tools)
    if not server_items and not tool_items and not problems.total:
        problems.add(_EMPTY)
    problems.raise_if_any(source, FORMAT_HINT)
    return ImportBatch(format="catalog", servers=servers, tools=tools)


# --------------------------------------------------------------------------- CSV


@dataclass
class _CsvServer:
    line: int
    description: str = ""
    description_line: int = 0
    tags: list[str] = field(default_factory=list)


@dataclass
class _CsvBatch:
    problems: Problems
    names: TakenToolNames = field(default_factory=TakenToolNames)
    servers: dict[str, _CsvServer] = field(default_factory=dict)
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    tool_lines: dict[str, int] = field(default_factory=dict)

    def add_row(self, line: int, cells: dict[str, str]) -> None:
        name = cells.get("server", "")
        if not name:
            self.problems.add("field server is empty", line=line, field="server")
            return
        self._add_server(line, name, cells)
        if cells.get("tool"):
            self._add_tool(line, name, cells)
            return
        for column in ("tool_description", "input_schema"):
            if cells.get(column):
                self.problems.add(f"field {column} is given but tool is empty", line=line, field=column)

    def _add_server(self, line: int, name: str, cells: dict[str, str]) -> None:
        server = self.servers.setdefault(name, _CsvServer(line))
        description = cells.get("server_description", "")
        if description and server.description and description != server.description:
            self.problems.add(
                f"field server_description differs from the one on line {server.description_line}",
                line=line,
                name=name,
                field="server_description",
            )
        elif description and not server.description:
            server.description, server.description_line = description, line
        tags = [t.strip() for t in cells.get("tags", "").split(";")]
        server.tags += [t for t in dict.fromkeys(tags) if t and t not in server.tags]

    def _add_tool(self, line: int, server: str, cells: dict[str, str]) -> None:
        where: dict[str, Any] = {"line": line, "name": tool_id(server, cells["tool"])}
        schema = _schema_cell(cells.get("input_schema", ""), self.problems, where)
        if schema is None:
            return
        try:
            tool = ToolSpec(
                server=server,
                name=cells["tool"],
                description=cells.get("tool_description", ""),
                input_schema=schema,
            )
        except ValidationError as exc:
            self.problems.add_validation(exc, {"name": "tool", "description": "tool_description"}, **where)
            return
        if tool.id in self.tools:
            self.problems.add(
                f"tool listed twice (first on line {self.tool_lines[tool.id]})", field="tool", **where
            )
            return
        copied = self.names.copied_by(tool.server, tool.name)
        if copied is not None:
            self.problems.add(tool_copy_problem(tool.id, copied), field="tool", **where)
            return
        self.names.add(tool.server, tool.name)
        self.tools[tool.id], self.tool_lines[tool.id] = tool, line

    def server_specs(self, known_servers: Collection[str], taken: Collection[str] = ()) -> list[ServerSpec]:
        """The servers to write; a catalog server given no description and no tags is left as it is; a
        server copying a ``taken`` name or another row's up to case is a problem."""
        specs: list[ServerSpec] = []
        names = TakenNames(taken)
        for name, server in self.servers.items():
            copied = names.copied_by(name)
            names.add(name)
            if copied is not None:
                self.problems.add(copy_problem(name, copied), line=server.line, field="server")
                continue
            if name in known_servers and not server.description and not server.tags:
                continue
            metadata: dict[str, Any] = {"tags": server.tags} if server.tags else {}
            try:
                specs.append(ServerSpec(name=name, description=server.description, metadata=metadata))
            except ValidationError as exc:
                self.problems.add_validation(
                    exc, {"name": "server", "description": "server_description"}, line=server.line
                )
        return specs


def _schema_cell(text: str, problems: Problems, where: dict[str, Any]) -> dict[str, Any] | None:
    if not text:
        return {}
    try:
        schema = json.loads(text)
    except ValueError as exc:
        problems.add(f"field input_schema is not valid JSON: {exc}", field="input_schema", **where)
        return None
    except RecursionError:  # nested deeper than the parser goes, so far over the depth limit
        problems.add(
            f"field input_schema is nested more than {MAX_JSON_DEPTH} levels deep; at most {MAX_JSON_DEPTH} "
            "are accepted",
            field="input_schema",
            **where,
        )
        return None
    if schema is None:
        return {}
    if not isinstance(schema, dict):
        kind = type(schema).__name__
        problems.add(f"field input_schema must be a JSON object, found {kind}", field="input_schema", **where)
        return None
    return schema


def _csv_rows(text: str, source: str) -> list[tuple[int, list[str]]]:
    """The non-blank rows, each with the 1-based line it starts on."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((start, [cell.strip() for cell in row]))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise CatalogFileError(
            f"{source} is not valid CSV: {exc} (line {reader.line_num}).", hint=CSV_HINT, line=reader.line_num
        ) from exc
    return rows


def _csv_columns(line: int, header: list[str], problems: Problems) -> list[str]:
    columns = [c.lower() for c in header]
    unknown = [c for c in columns if c not in CSV_COLUMNS]
    if unknown:
        names = ", ".join(repr(c) for c in unknown)
        problems.add(f"unknown column(s) {names}; the columns are {', '.join(CSV_COLUMNS)}", line=line)
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        problems.add(f"column(s) {', '.join(twice)} appear more than once", line=line, field=twice[0])
    if "server" not in columns:
        problems.add("the header has no server column", line=line, field="server")
    return columns


def parse_csv(
    text: str,
    known_servers: Collection[str] = (),
    *,
    source: str = "The CSV batch",
    taken: Names = (),
    taken_tools: Pairs = (),
) -> ImportBatch:
    """One header row, then rows of server [+ tool]; see the module docstring for the columns."""
    rows = _csv_rows(text, source)
    problems = Problems()
    batch = _CsvBatch(problems, TakenToolNames(taken_tools))
    if not rows:
        problems.add(_EMPTY)
    else:
        columns = _csv_columns(*rows[0], problems)
        for line, row in rows[1:] if "server" in columns else []:
            if len(row) > len(columns):
                problems.add(f"the row has {len(row)} cells, the header {len(columns)}", line=line)
            else:
                batch.add_row(line, dict(zip(columns, row, strict=False)))
    servers = batch.server_specs(known_servers, taken)
    if rows and not servers and not batch.tools and not problems.total:
        problems.add(_EMPTY)
    problems.raise_if_any(source, CSV_HINT)
    return ImportBatch(format="csv", servers=servers, tools=list(batch.tools.values()))


# --------------------------------------------------------------------------- mcpServers


def parse_mcp_servers(
    data: Any, *, base: Path | None = None, source: str = "The mcpServers batch", taken: Collection[str] = ()
) -> ImportBatch:
    """``{"mcpServers": {...}}``; every entry must be one tool-selector can run (SSE cannot be), under a
    name that copies no ``taken`` one up to case. A relative command is made absolute against ``base``
    (the configuration file's folder)."""
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise CatalogFileError(f"{source} must be a JSON object with an 'mcpServers' object.", hint=MCP_HINT)
    problems = Problems()
    configs: dict[str, ServerConfig] = {}
    names = TakenNames(taken)
    for name, entry in entries.items():
        copied = names.copied_by(name)
        names.add(name)
        if copied is not None:
            problems.add(copy_problem(name, copied), section="mcpServers", name=name)
            continue
        try:
            configs[name] = client_entry_config(name, entry, base)
        except ValidationError as exc:
            problems.add_validation(exc, section="mcpServers", name=name)
        except ValueError as exc:
            problems.add(str(exc), section="mcpServers", name=name)
    if not entries:
        problems.add(_EMPTY)
    problems.raise_if_any(source, MCP_HINT)
    servers = [ServerSpec(name=name) for name in configs]
    return ImportBatch(format="mcpservers", servers=servers, server_configs=configs)


# --------------------------------------------------------------------------- files and request bodies


_TextFormat = Literal["json", "catalog", "csv", "mcpservers"]  # json: catalog or mcpServers, told by keys


def _json_format(data: Any, source: str) -> Literal["catalog", "mcpservers"]:
    if isinstance(data, dict) and "mcpServers" in data:
        return "mcpservers"
    if isinstance(data, dict) and ("servers" in data or "tools" in data):
        return "catalog"
    found = f"an object with keys {sorted(data)[:10]}" if isinstance(data, dict) else type(data).__name__
    raise CatalogFileError(f"Cannot tell the format of {source}: found {found}.", hint=FORMATS_HINT)


def _parse_text(
    text: str,
    fmt: _TextFormat,
    known: Names,
    source: str,
    base: Path | None = None,
    taken: Names = (),
    taken_tools: Pairs = (),
) -> ImportBatch:
    if fmt == "csv":
        return parse_csv(text, known, source=source, taken=taken, taken_tools=taken_tools)
    data = load_json_text(text, source, FORMATS_HINT)
    if (_json_format(data, source) if fmt == "json" else fmt) == "mcpservers":
        return parse_mcp_servers(data, base=base, source=source, taken=taken)
    return parse_catalog_json(data, known, source=source, taken=taken, taken_tools=taken_tools)


def read_batch_file(
    path: Path,
    fmt: Literal["auto", "catalog", "csv", "mcpservers"] = "auto",
    known_servers: Collection[str] = frozenset(),
    *,
    limit_bytes: int = DEFAULT_MAX_FILE_BYTES,
    taken: Collection[str] = (),
    taken_tools: Pairs = (),
) -> ImportBatch:
    """A catalog folder, a ``.csv`` file or a ``.json`` file (catalog or mcpServers, told by its keys);
    each file at most ``limit_bytes`` (the ``max_file_bytes`` setting). ``taken``: the server names in
    use (catalog and configuration), which no new server may look like; ``taken_tools``: the catalog's
    tools, which no new tool may look like (tool_selector/core/names.py)."""
    if path.is_dir() and fmt in ("auto", "catalog"):
        servers, tools = read_catalog_dir(
            path,
            known_servers,
            limit_bytes=limit_bytes,
            taken=taken,
            taken_tools=taken_tools,
            replaces_listed=False,  # a batch adds and updates tools: a listed server keeps the others
        )
        return ImportBatch(format="catalog", servers=servers, tools=tools)
    if path.is_dir() or not path.exists():
        what = "is a folder, which only a catalog batch is" if path.exists() else "does not exist"
        raise CatalogFileError(f"Batch file {path} {what}.", hint=FORMATS_HINT, path=str(path))
    suffix = path.suffix.lower()
    if fmt == "auto" and suffix not in (".csv", ".json"):
        raise CatalogFileError(
            f"Cannot tell the format of {path} from its name: give a folder, a .csv or a .json file, "
            "or name the format (catalog, csv, mcpservers).",
            hint=FORMATS_HINT,
        )
    try:
        raw = read_bytes_limited(path, limit_bytes=limit_bytes, what="batch file")
    except OSError as exc:
        raise CatalogFileError(f"Cannot read {path}: {exc}.", hint=FORMATS_HINT, path=str(path)) from exc
    text = decode_text(raw, str(path))
    chosen: _TextFormat = ("csv" if suffix == ".csv" else "json") if fmt == "auto" else fmt
    return _parse_text(text, chosen, known_servers, str(path), path.parent.resolve(), taken, taken_tools)


_BODY_FORMATS: dict[str, _TextFormat] = {
    "catalog": "catalog",
    "csv": "csv",
    "mcpservers": "mcpservers",
    "text/csv": "csv",
    "application/csv": "csv",
    "application/json": "json",
}


def parse_batch_body(
    content_type_or_format: str,
    raw: bytes,
    known_servers: Names = frozenset(),
    taken: Names = (),
    taken_tools: Pairs = (),
) -> ImportBatch:
    """A request body by content type (JSON, told catalog or mcpServers by its keys, or text/csv) or
    format name; ``auto`` tells JSON from CSV by the first character. ``taken`` as for
    ``read_batch_file``."""
    value = content_type_or_format.split(";", 1)[0].strip().lower()
    value = "application/json" if value.endswith("+json") else value
    if value != "auto" and value not in _BODY_FORMATS:
        raise InvalidInputError(
            f"Cannot import a batch sent as {content_type_or_format!r}.",
            hint="Send application/json (a catalog or mcpServers object) or text/csv.",
        )
    text = decode_text(raw, "The request body")
    sniffed: _TextFormat = "json" if text.lstrip().startswith(("{", "[")) else "csv"
    fmt = sniffed if value == "auto" else _BODY_FORMATS[value]
    return _parse_text(text, fmt, known_servers, "The request body", taken=taken, taken_tools=taken_tools)


def problems_of(error: CatalogFileError) -> list[BatchProblem]:
    """The problems a batch reader reported, as models (none for an error about the whole file)."""
    return [BatchProblem.model_validate(p) for p in error.details.get("problems", [])]
