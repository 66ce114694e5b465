"""Readers of catalog files in the benchmark format: ``servers.json`` + ``tools.json`` in a folder.

``servers.json``: a list of ``{"name", "description", ...}`` (other keys are kept as metadata).
``tools.json``: a list of ``{"server", "name", "description", "input_schema"}``.

The item checks here are shared with the batch readers of ``batch.py``: every problem is collected
(up to ``MAX_PROBLEMS``) as a ``BatchProblem`` naming the file or list, the item and the field, and
one CatalogFileError reports them all. Nothing is returned unless every item is valid.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_bytes_limited
from tool_selector.core.models import ServerSpec, ToolSpec
from tool_selector.core.names import TakenNames, TakenToolNames, copy_problem, tool_copy_problem, tool_id

FORMAT_HINT = (
    "A catalog folder holds servers.json (a list of {name, description, ...}) and tools.json "
    "(a list of {server, name, description, input_schema})."
)
MAX_PROBLEMS = 200
_SHOWN = 5
_TOOL_KEYS = ("server", "name", "description", "input_schema", "annotations", "output_schema")


class BatchProblem(BaseModel):
    """One thing wrong with a catalog file or batch, and where it is."""

    section: str | None = None  # the list or file the item is in: "servers", "tools", ".../tools.json"
    line: int | None = None  # 1-based line of a CSV row
    item: int | None = None  # 0-based index in a JSON list
    name: str | None = None  # the server (mcpServers) or tool id the problem is about, when known
    field: str | None = None
    message: str

    def describe(self) -> str:
        """The problem as one line: where it is, then what is wrong."""
        parts = [self.section] if self.section else []
        parts += [f"{k} {v}" for k, v in (("line", self.line), ("item", self.item)) if v is not None]
        if self.name is not None:
            parts.append(
                f"({self.name})" if self.line is not None or self.item is not None else repr(self.name)
            )
        if not parts:
            return self.message
        separator = " " if self.message.startswith(("is ", "lists ")) else ": "
        return " ".join(parts) + separator + self.message


class Problems:
    """Collects problems; keeps the first MAX_PROBLEMS and counts them all."""

    def __init__(self) -> None:
        self.kept: list[BatchProblem] = []
        self.total = 0

    def add(self, message: str, **where: Any) -> None:
        self.total += 1
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(BatchProblem(message=message, **where))

    def add_validation(
        self, exc: ValidationError, renames: dict[str, str] | None = None, **where: Any
    ) -> None:
        """One problem per error; ``renames`` maps model fields to the names the file uses."""
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or None
            field = (renames or {}).get(field or "", field)
            self.add(f"field {field}: {err['msg']}" if field else err["msg"], field=field, **where)

    def raise_if_any(self, source: str, hint: str) -> None:
        if not self.total:
            return
        shown = "; ".join(p.describe() for p in self.kept[:_SHOWN])
        more = f" (and {self.total - _SHOWN} more)" if self.total > _SHOWN else ""
        plural = "problem" if self.total == 1 else "problems"
        raise CatalogFileError(
            f"{source} has {self.total} {plural}, so none of it is used: {shown}{more}.",
            hint=hint,
            problems=[p.model_dump() for p in self.kept],
            problem_count=self.total,
        )


def _server(item: Any, problems: Problems, where: dict[str, Any]) -> ServerSpec | None:
    if not isinstance(item, dict):
        problems.add("is not an object", **where)
        return None
    if "name" not in item:
        problems.add("field name is missing", field="name", **where)
        return None
    fields = {k: item[k] for k in ("name", "description") if k in item}
    metadata = {k: v for k, v in item.items() if k not in ("name", "description")}
    try:
        return ServerSpec(**fields, metadata=metadata)
    except ValidationError as exc:
        problems.add_validation(exc, **where)
        return None


def check_servers(
    items: Sequence[Any], problems: Problems, section: str, taken: Collection[str] = ()
) -> list[ServerSpec]:
    """Servers in the benchmark format; unknown keys become metadata; a name listed twice is a problem,
    and so is one that copies a ``taken`` name (servers in the catalog or the configuration) or another
    of the list up to case (tool_selector/core/names.py)."""
    servers: list[ServerSpec] = []
    seen: set[str] = set()
    names = TakenNames(taken)
    for index, item in enumerate(items):
        where: dict[str, Any] = {"section": section, "item": index}
        server = _server(item, problems, where)
        if server is None:
            continue
        copied = names.copied_by(server.name)
        if server.name in seen:
            problems.add(f"server {server.name!r} is listed twice", field="name", **where)
            continue
        if copied is not None:
            problems.add(copy_problem(server.name, copied), field="name", **where)
            continue
        seen.add(server.name)
        names.add(server.name)
        servers.append(server)
    return servers


def listed_names(items: Sequence[Any]) -> set[str]:
    """The names the items give, valid or not (so a tool is not blamed for its server's problem), as
    the models keep them (without whitespace around)."""
    return {
        item["name"].strip() for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)
    }


def _tool(item: Any, problems: Problems, where: dict[str, Any]) -> ToolSpec | None:
    if not isinstance(item, dict):
        problems.add("is not an object", **where)
        return None
    missing = [k for k in ("server", "name") if k not in item]
    if missing:
        problems.add(f"missing field(s) {', '.join(missing)}", field=missing[0], **where)
        return None
    known = {k: item[k] for k in _TOOL_KEYS if k in item}
    if known.get("input_schema") is None:
        known["input_schema"] = {}
    try:
        return ToolSpec(**known)
    except ValidationError as exc:
        problems.add_validation(exc, name=tool_id(str(item.get("server")), str(item.get("name"))), **where)
        return None


def check_tools(
    items: Sequence[Any],
    servers: Collection[str],
    problems: Problems,
    section: str,
    servers_source: str,
    taken_tools: Iterable[tuple[str, str]] = (),
) -> list[ToolSpec]:
    """Tools in the benchmark format; each must name one of ``servers``; an id listed twice is a problem,
    and so is a name that looks like another's (a ``taken_tools`` (server, name) pair of the catalog, or
    one earlier in the list: tool_selector/core/names.py)."""
    tools: list[ToolSpec] = []
    seen: set[str] = set()
    names = TakenToolNames(taken_tools)
    for index, item in enumerate(items):
        where: dict[str, Any] = {"section": section, "item": index}
        tool = _tool(item, problems, where)
        if tool is None:
            continue
        copied = names.copied_by(tool.server, tool.name)
        if tool.server not in servers:
            problems.add(
                f"tool {tool.id!r} names server {tool.server!r}, which is not in {servers_source}",
                field="server",
                **where,
            )
        elif tool.id in seen:
            problems.add(f"tool {tool.id!r} is listed twice", field="name", **where)
        elif copied is not None:
            problems.add(tool_copy_problem(tool.id, copied), field="name", **where)
        else:
            seen.add(tool.id)
            names.add(tool.server, tool.name)
            tools.append(tool)
    return tools


def decode_text(raw: bytes, source: str) -> str:
    """UTF-8 text (a leading BOM dropped); otherwise an error naming the line and column."""
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # the BOM spreadsheets write
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        column = len(raw[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise CatalogFileError(
            f"{source} is not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line}, column {column}.",
            hint="Save the file as UTF-8.",
            line=line,
            column=column,
        ) from exc


def load_json_text(text: str, source: str, hint: str) -> Any:
    """Parsed JSON; otherwise an error naming the line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogFileError(
            f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint=hint,
            line=exc.lineno,
            column=exc.colno,
        ) from exc
    except (ValueError, RecursionError) as exc:  # a huge integer, deep nesting
        raise CatalogFileError(f"{source} is not usable JSON: {exc}.", hint=hint) from exc


def _load_json_list(path: Path, limit_bytes: int) -> list[Any]:
    if not path.exists():
        raise CatalogFileError(f"Missing catalog file {path}.", hint=FORMAT_HINT, path=str(path))
    try:
        raw = read_bytes_limited(path, limit_bytes=limit_bytes, what="catalog file")
    except OSError as exc:
        raise CatalogFileError(f"Cannot read {path}: {exc}.", hint=FORMAT_HINT, path=str(path)) from exc
    data = load_json_text(decode_text(raw, str(path)), str(path), FORMAT_HINT)
    if not isinstance(data, list):
        raise CatalogFileError(
            f"{path} must hold a JSON list, found {type(data).__name__}.", hint=FORMAT_HINT, path=str(path)
        )
    return data


def read_catalog_dir(
    folder: Path,
    known_servers: Collection[str] = frozenset(),
    *,
    limit_bytes: int = DEFAULT_MAX_FILE_BYTES,
    taken: Collection[str] = (),
    taken_tools: Iterable[tuple[str, str]] = (),
    replaces_listed: bool = True,
) -> tuple[list[ServerSpec], list[ToolSpec]]:
    """Read and validate a catalog folder; nothing is returned unless every item is valid.

    A tool may name a server of ``servers.json`` or one of ``known_servers`` (already in the catalog).
    A server may not look like a ``taken`` name (catalogued or configured), nor a tool like a
    ``taken_tools`` one (tool_selector/core/names.py): with ``replaces_listed`` (``catalog import``, where
    a listed server gets exactly the folder's tools), the stored tools of the servers it lists do not
    count. Each file may hold at most ``limit_bytes`` (the
    ``max_file_bytes`` setting).
    """
    if not folder.exists():
        raise CatalogFileError(f"Catalog folder {folder} does not exist.", hint=FORMAT_HINT, path=str(folder))
    if not folder.is_dir():
        raise CatalogFileError(f"{folder} is not a folder.", hint=FORMAT_HINT, path=str(folder))
    servers_path, tools_path = folder / "servers.json", folder / "tools.json"
    server_items = _load_json_list(servers_path, limit_bytes)
    tool_items = _load_json_list(tools_path, limit_bytes)
    problems = Problems()
    servers = check_servers(server_items, problems, str(servers_path), taken)
    listed = listed_names(server_items)
    names = listed | set(known_servers)
    where = servers_path.name + (" or the catalog" if known_servers else "")
    staying = [(server, name) for server, name in taken_tools if not replaces_listed or server not in listed]
    tools = check_tools(tool_items, names, problems, str(tools_path), where, staying)
    if not server_items and not (known_servers and tool_items):
        problems.add("lists no servers", section=str(servers_path))
    problems.raise_if_any(f"Catalog folder {folder}", FORMAT_HINT)
    return servers, tools
