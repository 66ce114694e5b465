"""Readers of catalog files in the benchmark format: ``servers.json`` + ``tools.json`` in a folder.

``servers.json``: a list of ``{"name", "description", ...}`` (other keys are kept as metadata).
``tools.json``: a list of ``{"server", "name", "description", "input_schema"}``.
Every problem is reported as a CatalogFileError naming the file, the item and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tool_selector.errors import CatalogFileError
from tool_selector.models import ServerSpec, ToolSpec

FORMAT_HINT = (
    "A catalog folder holds servers.json (a list of {name, description, ...}) and tools.json "
    "(a list of {server, name, description, input_schema})."
)


def _load_json_list(path: Path) -> list[Any]:
    if not path.is_file():
        raise CatalogFileError(f"Missing catalog file {path}.", hint=FORMAT_HINT, path=str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise CatalogFileError(f"{path} is not UTF-8 text: {exc}.", hint=FORMAT_HINT, path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise CatalogFileError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint=FORMAT_HINT,
            path=str(path),
            line=exc.lineno,
        ) from exc
    if not isinstance(data, list):
        raise CatalogFileError(
            f"{path} must hold a JSON list, found {type(data).__name__}.", hint=FORMAT_HINT, path=str(path)
        )
    return data


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"field {'.'.join(str(p) for p in err['loc']) or '(item)'}: {err['msg']}" for err in exc.errors()
    )


def read_catalog_dir(folder: Path) -> tuple[list[ServerSpec], list[ToolSpec]]:
    """Read and validate a catalog folder; nothing is returned unless every item is valid."""
    if not folder.exists():
        raise CatalogFileError(f"Catalog folder {folder} does not exist.", hint=FORMAT_HINT, path=str(folder))
    if not folder.is_dir():
        raise CatalogFileError(f"{folder} is not a folder.", hint=FORMAT_HINT, path=str(folder))
    servers_path, tools_path = folder / "servers.json", folder / "tools.json"
    servers: list[ServerSpec] = []
    seen_servers: set[str] = set()
    for index, item in enumerate(_load_json_list(servers_path)):
        if not isinstance(item, dict):
            raise CatalogFileError(f"{servers_path} item {index} is not an object.", hint=FORMAT_HINT)
        fields = {k: item[k] for k in ("name", "description") if k in item}
        metadata = {k: v for k, v in item.items() if k not in ("name", "description")}
        try:
            server = ServerSpec(**fields, metadata=metadata)
        except ValidationError as exc:
            raise CatalogFileError(
                f"{servers_path} item {index}: {_describe(exc)}.", hint=FORMAT_HINT, item=index
            ) from exc
        if "name" not in item:
            raise CatalogFileError(f"{servers_path} item {index}: field name is missing.", hint=FORMAT_HINT)
        if server.name in seen_servers:
            raise CatalogFileError(
                f"{servers_path} item {index}: server {server.name!r} is listed twice.", hint=FORMAT_HINT
            )
        seen_servers.add(server.name)
        servers.append(server)
    tools: list[ToolSpec] = []
    seen_tools: set[str] = set()
    for index, item in enumerate(_load_json_list(tools_path)):
        if not isinstance(item, dict):
            raise CatalogFileError(f"{tools_path} item {index} is not an object.", hint=FORMAT_HINT)
        missing = [k for k in ("server", "name") if k not in item]
        if missing:
            raise CatalogFileError(
                f"{tools_path} item {index}: missing field(s) {', '.join(missing)}.", hint=FORMAT_HINT
            )
        known = {
            k: item[k] for k in ("server", "name", "description", "input_schema", "annotations") if k in item
        }
        if known.get("input_schema") is None:
            known["input_schema"] = {}
        try:
            tool = ToolSpec(**known)
        except ValidationError as exc:
            raise CatalogFileError(
                f"{tools_path} item {index} ({item.get('server')}::{item.get('name')}): {_describe(exc)}.",
                hint=FORMAT_HINT,
                item=index,
            ) from exc
        if tool.server not in seen_servers:
            raise CatalogFileError(
                f"{tools_path} item {index}: tool {tool.id!r} names server {tool.server!r}, "
                f"which is not in {servers_path.name}.",
                hint="Add the server to servers.json or fix the tool's server field.",
            )
        if tool.id in seen_tools:
            raise CatalogFileError(f"{tools_path} item {index}: tool {tool.id!r} is listed twice.")
        seen_tools.add(tool.id)
        tools.append(tool)
    if not servers:
        raise CatalogFileError(f"{servers_path} lists no servers.", hint=FORMAT_HINT)
    return servers, tools
