"""Catalogs of a chosen size for ``tool-selector lab bench-scale``, in the benchmark format, built from the
shared benchmarks.

A catalog of N tools holds, in this order:

1. msc_bench_dev's whole catalog as it is (491 servers, 2,375 tools): its queries are the ones scored,
   so its servers are never renamed, cut or copied. A size below its tool count gives it alone.
2. The other catalogs' servers as distractors (livemcpbench's, then metatool's), in file order.
3. When more are needed, copies of those distractor servers under new names (``<name> (copy 2)``, then
   ``(copy 3)``, ...), round after round, until the size is reached.

The last server taken is cut to its first tools so that the catalog holds exactly N tools. A distractor
server whose name another catalog already uses (19 of livemcpbench's are msc servers too) is renamed
``<name> (<catalog>)``; tool names are made unique within their server the same way. Everything is
deterministic. ``queries.jsonl`` is msc_bench_dev's, copied unchanged: queries are only resolved, never
indexed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.quality.dataset import QUERIES_FILE, SERVERS_FILE, TOOLS_FILE, check_dataset_dir
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited

SCORED = "msc_bench_dev"
DISTRACTORS = ("livemcpbench", "metatool")


@dataclass(frozen=True)
class _Server:
    """One server of a source catalog, with its tools (dicts as in tools.json)."""

    source: str
    entry: dict[str, Any]
    tools: list[dict[str, Any]]

    @property
    def name(self) -> str:
        return str(self.entry["name"])


@dataclass
class ScaleCatalog:
    """What a built catalog holds, said plainly: where its tools come from."""

    folder: Path
    requested: int
    tools: int = 0
    servers: int = 0
    scored_tools: int = 0
    scored_servers: int = 0
    distractor_tools: int = 0
    distractor_servers: int = 0
    copy_tools: int = 0
    copy_servers: int = 0
    cut_server: str | None = None
    first_scored_server: str = ""
    renamed: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """One sentence on the composition, for the printed output."""
        text = (
            f"{self.tools:,} tools on {self.servers:,} servers: msc_bench_dev's {self.scored_tools:,} tools "
            f"({self.scored_servers} servers) as they are, {self.distractor_tools:,} distractor tools from "
            f"{' and '.join(DISTRACTORS)} ({self.distractor_servers} servers), and {self.copy_tools:,} "
            f"distractor copies ({self.copy_servers:,} copied servers renamed '<name> (copy k)')"
        )
        if self.cut_server is not None:
            text += f"; the last server, {self.cut_server!r}, keeps only its first tools to reach the size"
        return text + "."

    def summary(self) -> dict[str, Any]:
        return {
            "requested_tools": self.requested,
            "tools": self.tools,
            "servers": self.servers,
            "msc_tools": self.scored_tools,
            "msc_servers": self.scored_servers,
            "distractor_tools": self.distractor_tools,
            "distractor_servers": self.distractor_servers,
            "copy_tools": self.copy_tools,
            "copy_servers": self.copy_servers,
            "cut_server": self.cut_server,
            "renamed_servers": len(self.renamed),
            "composition": self.describe(),
        }


def _read_list(path: Path) -> list[dict[str, Any]]:
    try:
        value = json.loads(read_text_limited(path, limit_bytes=DEFAULT_MAX_FILE_BYTES, what="catalog file"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogFileError(f"{path} cannot be read as JSON: {exc}.", path=str(path)) from exc
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise CatalogFileError(f"{path} must hold a JSON list of objects.", path=str(path))
    return value


def read_catalog(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A benchmark folder's servers.json and tools.json, as they are."""
    paths = check_dataset_dir(folder)
    return _read_list(paths.servers), _read_list(paths.tools)


def load_servers(folder: Path) -> list[_Server]:
    """A benchmark folder's servers in file order, each with its tools in file order."""
    servers, tools = read_catalog(folder)
    by_server: dict[str, list[dict[str, Any]]] = {str(s["name"]): [] for s in servers}
    for tool in tools:
        by_server.setdefault(str(tool["server"]), []).append(tool)
    return [_Server(folder.name, s, by_server[str(s["name"])]) for s in servers]


class _Names:
    """Names taken so far, compared without case: ``unique`` returns ``name`` when it is free, else
    ``<name> (<label>)``, ``<name> (<label> 2)``, ..."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def unique(self, name: str, label: str) -> str:
        candidate, n = name, 0
        while candidate.casefold() in self._taken:
            n += 1
            candidate = f"{name} ({label})" if n == 1 else f"{name} ({label} {n})"
        self._taken.add(candidate.casefold())
        return candidate


def _with_tools(server: _Server, name: str, count: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The server under ``name`` with its first ``count`` tools, tool names unique within it."""
    names = _Names()
    tools = [
        {**tool, "server": name, "name": names.unique(str(tool["name"]), "duplicate")}
        for tool in server.tools[:count]
    ]
    return {**server.entry, "name": name}, tools


def _rounds(pool: list[_Server]) -> Iterator[tuple[int, int, _Server]]:
    """(round, position, server): the distractors as they are (round 1), then copy 2 of each, copy 3
    of each, ..."""
    k = 1
    while pool:
        for position, server in enumerate(pool):
            yield k, position, server
        k += 1


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def build_scale_catalog(benchmarks: Path, size: int, out: Path) -> ScaleCatalog:
    """Write a catalog of ``size`` tools (at least msc_bench_dev's whole catalog) into ``out``.

    Raises CatalogFileError when a source folder is missing or unreadable.
    """
    servers, tools = read_catalog(benchmarks / SCORED)  # as they are, in file order
    pool = [s for source in DISTRACTORS for s in load_servers(benchmarks / source) if s.tools]
    built = ScaleCatalog(folder=out, requested=size)
    names = _Names()
    for entry in servers:
        names.unique(str(entry["name"]), SCORED)  # msc names are taken first, as they are
    built.scored_servers, built.scored_tools = len(servers), len(tools)
    built.first_scored_server = str(servers[0]["name"]) if servers else ""
    remaining = size - len(tools)
    first_names: dict[int, str] = {}  # a distractor's name in round 1 (renamed when it clashed)
    for k, position, server in _rounds(pool):
        if remaining <= 0:
            break
        if k == 1:
            name = first_names[position] = names.unique(server.name, server.source)
            if name != server.name:
                built.renamed[f"{server.source}/{server.name}"] = name
        else:
            name = names.unique(f"{first_names[position]} (copy {k})", server.source)
        count = min(len(server.tools), remaining)
        entry, taken = _with_tools(server, name, count)
        servers.append(entry)
        tools.extend(taken)
        if k == 1:
            built.distractor_servers += 1
            built.distractor_tools += count
        else:
            built.copy_servers += 1
            built.copy_tools += count
        if count < len(server.tools):
            built.cut_server = name
        remaining -= count
    built.servers, built.tools = len(servers), len(tools)
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / SERVERS_FILE, servers)
    _write_json(out / TOOLS_FILE, tools)
    shutil.copyfile(benchmarks / SCORED / QUERIES_FILE, out / QUERIES_FILE)
    return built
