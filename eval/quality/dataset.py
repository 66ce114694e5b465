"""Datasets in the benchmark format: ``servers.json`` + ``tools.json`` + ``queries.jsonl``.

The format is described in ``shared/benchmarks/README.md``. A query line looks like::

    {"id": "L1-101", "query": "...", "gold_servers": ["S"], "gold_tools": ["S::t"],
     "gold_tool_groups": [["S::t", "S::u"]], "level": 1}

``gold_tool_groups`` is a list of slots; each slot lists interchangeable tool ids and retrieving any
one of them fills the slot. An empty list means no tool can answer the query.

Design rule: the resolver never sees gold fields. The harness hands it only :func:`query_texts`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval.quality.choices import Phrasing
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited
from tool_selector.core.names import split_tool_id

logger = logging.getLogger(__name__)

SERVERS_FILE = "servers.json"
TOOLS_FILE = "tools.json"
QUERIES_FILE = "queries.jsonl"
AGENT_FILE = (
    "queries-agent.jsonl"  # the agent's phrasing of each request (eval/datasets/personal-setups/AGENT.md)
)


_FORMAT_HINT = (
    "A dataset folder holds servers.json (a list of {name, description}), tools.json "
    "(a list of {server, name, description, input_schema}) and queries.jsonl (one "
    "{id, query, gold_servers, gold_tools, gold_tool_groups} object a line), as described in "
    "shared/benchmarks/README.md."
)
_QUERY_HINT = (
    "Each non-blank line of queries.jsonl must be one JSON object with id (string), query (string), "
    "gold_servers (list of strings), gold_tools (list of 'server::tool' ids) and gold_tool_groups "
    "(list of slots, each a non-empty list of 'server::tool' ids); see shared/benchmarks/README.md."
)


class Query(BaseModel):
    """One line of ``queries.jsonl``. Unknown fields (``split``, ``category``, ...) are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    gold_servers: list[str]
    gold_tools: list[str]
    gold_tool_groups: list[list[str]]
    level: int | None = None
    expected_tier: str | None = None
    origin: str | None = Field(
        default=None, description="small catalogs: 'gold-removed' or 'no-gold' for an unanswerable request"
    )
    rephrases: str | None = Field(
        default=None, description="a line of queries-agent.jsonl: the id of the request it phrases"
    )

    @property
    def answerable(self) -> bool:
        """True when at least one tool can answer the query (the gold has at least one slot)."""
        return bool(self.gold_tool_groups)


@dataclass(frozen=True)
class DatasetPaths:
    """The three files of a dataset folder."""

    servers: Path
    tools: Path
    queries: Path


def is_tool_id(value: str) -> bool:
    """True for ``"server::tool"`` with both parts non-empty (split as tool_selector/core/names.py does)."""
    try:
        split_tool_id(value)
    except ValueError:
        return False
    return True


def check_dataset_dir(path: Path) -> DatasetPaths:
    """Return the paths of a dataset folder's three files, or raise CatalogFileError naming what is wrong."""
    if not path.exists():
        raise CatalogFileError(f"Dataset folder {path} does not exist.", hint=_FORMAT_HINT, path=str(path))
    if not path.is_dir():
        raise CatalogFileError(f"Dataset path {path} is not a directory.", hint=_FORMAT_HINT, path=str(path))
    paths = DatasetPaths(servers=path / SERVERS_FILE, tools=path / TOOLS_FILE, queries=path / QUERIES_FILE)
    missing = [p.name for p in (paths.servers, paths.tools, paths.queries) if not p.is_file()]
    if missing:
        raise CatalogFileError(
            f"Dataset folder {path} lacks {', '.join(missing)}.",
            hint=_FORMAT_HINT,
            path=str(path),
            missing=missing,
        )
    return paths


_ROOT_HINT = (
    "Give a dataset folder (servers.json, tools.json, queries.jsonl) or a small-catalog root: a folder "
    "of such dataset folders, as shared/benchmarks/make_subcatalogs.py writes them (k10-00/, k10-01/, ...)."
)


def dataset_folders(path: Path) -> list[Path]:
    """The dataset folders a path stands for: itself when it is one, else every dataset folder directly
    under it (a small-catalog root: ``k<servers>-<n>/`` folders beside ``all/``), sorted by name.

    Raises CatalogFileError when the path is missing or holds neither.
    """
    if not path.exists():
        raise CatalogFileError(f"Dataset folder {path} does not exist.", hint=_ROOT_HINT, path=str(path))
    if not path.is_dir():
        raise CatalogFileError(f"Dataset path {path} is not a directory.", hint=_ROOT_HINT, path=str(path))
    if (path / SERVERS_FILE).exists() or (path / TOOLS_FILE).exists():
        check_dataset_dir(path)
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and (p / SERVERS_FILE).is_file())
    if not found:
        raise CatalogFileError(
            f"{path} is neither a dataset folder nor a folder of dataset folders.",
            hint=_ROOT_HINT,
            path=str(path),
        )
    for folder in found:
        check_dataset_dir(folder)
    return found


@dataclass(frozen=True)
class DatasetArg:
    """One DATASET argument of eval or calibrate: its name and the dataset folders it stands for."""

    name: str
    folders: tuple[Path, ...]


def expand_datasets(paths: Iterable[Path]) -> list[DatasetArg]:
    """Each path as a DatasetArg named by its folder (``@<position>`` added when two names clash)."""
    args = [DatasetArg(p.resolve().name, tuple(dataset_folders(p))) for p in paths]
    names = [a.name for a in args]
    if len(set(names)) < len(names):
        args = [DatasetArg(f"{a.name}@{i}", a.folders) for i, a in enumerate(args)]
    return args


def named_datasets(arguments: Iterable[str | Path]) -> list[DatasetArg]:
    """``NAME=PATH`` or ``PATH`` arguments as DatasetArgs: arguments of one NAME form one dataset (a
    family: msc's 10-server cuts and its full catalog); a bare PATH is named by its folder as in
    :func:`expand_datasets`."""
    grouped: dict[str, list[Path]] = {}
    bare: list[Path] = []
    for argument in arguments:
        name, _, path = str(argument).rpartition("=")
        if name:
            grouped.setdefault(name, []).extend(dataset_folders(Path(path)))
        else:
            bare.append(Path(path))
    return [DatasetArg(name, tuple(folders)) for name, folders in grouped.items()] + expand_datasets(bare)


def catalog_size(paths: DatasetPaths, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> int:
    """How many servers a dataset's catalog has (read from servers.json, at most ``limit_bytes``)."""
    try:
        servers = json.loads(read_text_limited(paths.servers, limit_bytes=limit_bytes, what="catalog file"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogFileError(
            f"{paths.servers} cannot be read as JSON: {exc}.", hint=_FORMAT_HINT, path=str(paths.servers)
        ) from exc
    if not isinstance(servers, list):
        raise CatalogFileError(
            f"{paths.servers} must hold a JSON list of servers.", hint=_FORMAT_HINT, path=str(paths.servers)
        )
    return len(servers)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_validation_error(exc: ValidationError) -> str:
    """One readable sentence per pydantic error: missing field, or wrong type / value."""
    parts: list[str] = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "missing":
            parts.append(f"missing field '{loc}'")
        else:
            parts.append(f"field '{loc}' is wrong: {err['msg']} (got {_short(err['input'])})")
    return "; ".join(parts)


def _bad_gold_ids(query: Query) -> Iterable[str]:
    for value in query.gold_tools:
        if not is_tool_id(value):
            yield f"gold_tools has {value!r}, which is not a 'server::tool' id"
    for index, slot in enumerate(query.gold_tool_groups):
        if not slot:
            yield f"gold_tool_groups slot {index} is empty (a slot lists at least one tool id)"
        for value in slot:
            if not is_tool_id(value):
                yield f"gold_tool_groups slot {index} has {value!r}, which is not a 'server::tool' id"


def load_queries(path: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> list[Query]:
    """Read ``queries.jsonl`` (at most ``limit_bytes``: the ``max_file_bytes`` setting); blank lines are
    skipped.

    Raises CatalogFileError naming the file and the line for broken JSON, a line that is not an
    object, a missing field, a field of the wrong type, a malformed gold tool id, an empty slot or a
    duplicate id; and naming the file when it is missing, unreadable or holds no query.
    """
    try:
        lines = read_text_limited(path, limit_bytes=limit_bytes, what="query file").split("\n")
    except FileNotFoundError:
        raise CatalogFileError(
            f"Query file {path} does not exist.", hint=_FORMAT_HINT, path=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogFileError(
            f"Query file {path} cannot be read: {exc}.", hint=_FORMAT_HINT, path=str(path)
        ) from exc

    queries: list[Query] = []
    first_line: dict[str, int] = {}
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        where = f"{path}, line {lineno}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CatalogFileError(
                f"{where}: broken JSON ({exc.msg} at column {exc.colno}).",
                hint=_QUERY_HINT,
                path=str(path),
                line=lineno,
            ) from None
        if not isinstance(data, dict):
            raise CatalogFileError(
                f"{where}: expected a JSON object, got {type(data).__name__}.",
                hint=_QUERY_HINT,
                path=str(path),
                line=lineno,
            )
        try:
            query = Query.model_validate(data)
        except ValidationError as exc:
            raise CatalogFileError(
                f"{where}: {_describe_validation_error(exc)}.",
                hint=_QUERY_HINT,
                path=str(path),
                line=lineno,
            ) from None
        problems = list(_bad_gold_ids(query))
        if problems:
            raise CatalogFileError(
                f"{where} (id {query.id!r}): {'; '.join(problems)}.",
                hint=_QUERY_HINT,
                path=str(path),
                line=lineno,
            )
        if query.id in first_line:
            raise CatalogFileError(
                f"{where}: duplicate id {query.id!r} (first seen on line {first_line[query.id]}).",
                hint="Query ids must be unique within a file.",
                path=str(path),
                line=lineno,
                id=query.id,
            )
        first_line[query.id] = lineno
        queries.append(query)

    if not queries:
        raise CatalogFileError(
            f"Query file {path} is empty: it holds no query.", hint=_QUERY_HINT, path=str(path)
        )
    logger.debug("loaded %d queries from %s", len(queries), path)
    return queries


def query_texts(queries: Iterable[Query]) -> list[tuple[str, str]]:
    """The only view of the queries the resolver may receive: ``(id, query text)`` pairs, no gold."""
    return [(q.id, q.query) for q in queries]


@dataclass(frozen=True)
class Asked:
    """One request as the resolver receives it: its id, the query it resolves, and the person's own
    words beside it (``request``, with ``--phrasing both``) or None. No gold."""

    id: str
    query: str
    request: str | None = None


def phrased_file(folder: Path, phrasing: Phrasing) -> Path:
    """The query file a phrasing reads: queries.jsonl for ``user``, queries-agent.jsonl otherwise."""
    return folder / (QUERIES_FILE if phrasing == "user" else AGENT_FILE)


def has_phrasing(folder: Path, phrasing: Phrasing) -> bool:
    """True when the dataset folder holds the query file the phrasing reads."""
    return phrased_file(folder, phrasing).is_file()


def load_phrased(
    paths: DatasetPaths, phrasing: Phrasing = "user", *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> tuple[list[Query], list[Asked]]:
    """The labelled queries of a dataset folder in one phrasing, and what the resolver is given for each.

    ``user``: queries.jsonl as it is. ``agent``: queries-agent.jsonl (ids ``<id>-a``, the same labels).
    ``both``: the agent's lines, each resolved with its query and, as the request, the person's words of
    the line it ``rephrases``. Raises CatalogFileError naming the folder when it has no agent phrasing,
    or an agent line that names no request of queries.jsonl."""
    if phrasing == "user":
        queries = load_queries(paths.queries, limit_bytes=limit_bytes)
        return queries, [Asked(q.id, q.query) for q in queries]
    folder = paths.queries.parent
    agent_file = phrased_file(folder, phrasing)
    if not agent_file.is_file():
        raise CatalogFileError(
            f"Dataset folder {folder} has no {AGENT_FILE}, so it cannot be read in the agent's phrasing.",
            hint="Read it with --phrasing user (the shared benchmarks have people's words only), or write "
            "one line per request of queries.jsonl (eval/datasets/personal-setups/AGENT.md).",
            path=str(agent_file),
        )
    queries = load_queries(agent_file, limit_bytes=limit_bytes)
    if phrasing == "agent":
        return queries, [Asked(q.id, q.query) for q in queries]
    people = {q.id: q.query for q in load_queries(paths.queries, limit_bytes=limit_bytes)}
    unknown = [q.id for q in queries if q.rephrases not in people]
    if unknown:
        raise CatalogFileError(
            f"{agent_file}: {len(unknown)} lines name no request of {QUERIES_FILE} in 'rephrases', e.g. "
            f"{unknown[0]!r}.",
            hint="Give every agent line, in 'rephrases', the id of the request of queries.jsonl it phrases "
            "(check_agent.py checks it).",
            path=str(agent_file),
        )
    return queries, [Asked(q.id, q.query, people[q.rephrases or ""]) for q in queries]
