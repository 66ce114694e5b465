"""Score the argument filler (tool_selector/route/arguments) on a set of requests labelled with the next
call's arguments, in the format of eval/datasets/argument-fill (its README):

    tool-selector lab fill-arguments DIR [--tools FILE ...] [--now 2026-11-20T10:00:00] [--errors]

DIR holds ``examples.jsonl`` (``{"id", "text", "tool": "server::tool", "expected": {...}, "missing": [...]}``,
optional ``now`` and ``phrasing``) and the ``tools.json`` its lines name; ``--tools`` adds catalogs. Printed:
per example, the share whose arguments and missing parameters are both exactly right (and arguments
alone); per parameter, of the values the labels expect how many were given exactly (accuracy) and of
the values given how many were right (precision), overall, by phrasing and by the kind of parameter;
the precision and recall of ``missing``; with ``--errors`` every example that is not exactly right.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tool_selector.core.errors import InvalidInputError
from tool_selector.route.arguments import fill_arguments
from tool_selector.route.arguments.parameters import Parameter, is_count, parameters_of, takes_dates

DEFAULT_NOW = datetime(2026, 11, 20, 10, 0)  # the set's "now" when a line gives none (a Friday)


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    tool: str
    expected: dict[str, Any]
    missing: list[str]
    now: datetime | None
    phrasing: str


def load(folder: Path, catalogs: list[Path]) -> tuple[list[Example], dict[str, dict[str, Any]]]:
    """The examples of a folder (or a .jsonl file) and the input schema of every tool they name."""
    lines_file = folder if folder.is_file() else folder / "examples.jsonl"
    if not lines_file.is_file():
        raise InvalidInputError(f"{lines_file} not found", hint="give a folder holding examples.jsonl")
    base = lines_file.parent
    schemas: dict[str, dict[str, Any]] = {}
    for catalog in [*catalogs, *([base / "tools.json"] if (base / "tools.json").is_file() else [])]:
        for tool in json.loads(catalog.read_text(encoding="utf-8")):
            schemas.setdefault(f"{tool['server']}::{tool['name']}", tool.get("input_schema") or {})
    examples = []
    for number, raw in enumerate(lines_file.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        row = json.loads(raw)
        if row.get("tool") not in schemas:
            raise InvalidInputError(
                f"{lines_file}:{number}: tool {row.get('tool')!r} is in no catalog",
                hint="put its tools.json beside examples.jsonl or pass --tools",
            )
        now = datetime.fromisoformat(row["now"]) if row.get("now") else None
        examples.append(
            Example(
                str(row.get("id", number)),
                row["text"],
                row["tool"],
                dict(row.get("expected") or {}),
                list(row.get("missing") or []),
                now,
                str(row.get("phrasing", "user")),
            )
        )
    return examples, schemas


def kind_of(parameter: Parameter) -> str:
    """A coarse kind for the per-parameter table."""
    if "timezone" in parameter.kinds or parameter.has("timezone"):
        return "time zone"
    if "time" in parameter.kinds and not takes_dates(parameter):
        return "time"
    if takes_dates(parameter):
        return "date"
    for kind, label in (("url", "url"), ("email", "email"), ("path", "path"), ("filename", "path")):
        if kind in parameter.kinds:
            return label
    if parameter.enum:
        return "enum"
    if parameter.numeric:
        return "count" if is_count(parameter) else "number"
    if parameter.kinds & {"id", "hash"}:
        return "id"
    return "text"


def _row() -> dict[str, int]:
    return {"examples": 0, "exact": 0, "arguments_exact": 0, "expected": 0, "given": 0, "right": 0}


def score(examples: list[Example], schemas: dict[str, dict[str, Any]], now: datetime) -> dict[str, Any]:
    total = _row()
    by_phrasing: dict[str, dict[str, int]] = defaultdict(_row)
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    missing = Counter[str]()
    errors = []
    for example in examples:
        filled = fill_arguments(example.text, schemas[example.tool], now=example.now or now)
        kinds = {p.name: kind_of(p) for p in parameters_of(schemas[example.tool])}
        got, want = filled.arguments, example.expected
        right = {k for k in want if k in got and got[k] == want[k]}
        arguments_exact = got == want
        exact = arguments_exact and set(filled.missing) == set(example.missing)
        for row in (total, by_phrasing[example.phrasing]):
            row["examples"] += 1
            row["exact"] += exact
            row["arguments_exact"] += arguments_exact
            row["expected"] += len(want)
            row["given"] += len(got)
            row["right"] += len(right)
        for name in set(want) | set(got):
            counter = by_kind[kinds.get(name, "text")]
            counter["expected"] += name in want
            counter["given"] += name in got
            counter["right"] += name in right
        missing["said"] += len(filled.missing)
        missing["labelled"] += len(example.missing)
        missing["right"] += len(set(filled.missing) & set(example.missing))
        if not exact:
            errors.append({"id": example.id, "text": example.text, "tool": example.tool,
                           "expected": want, "got": got, "missing": example.missing,
                           "said_missing": filled.missing, "sources": filled.sources})  # fmt: skip
    return {
        "total": total, "by_phrasing": dict(by_phrasing), "by_kind": {k: dict(v) for k, v in by_kind.items()},
        "missing": dict(missing), "errors": errors,
    }  # fmt: skip


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "-"


def render(report: dict[str, Any], *, errors: bool = False) -> str:
    lines = ["| rows | examples | exact (arguments and missing) | arguments exact | parameter accuracy | "
             "parameter precision |", "|---|---|---|---|---|---|"]  # fmt: skip
    rows = [("all", report["total"]), *sorted(report["by_phrasing"].items())]
    for name, row in rows:
        lines.append(
            f"| {name} | {row['examples']} | {_share(row['exact'], row['examples'])} | "
            f"{_share(row['arguments_exact'], row['examples'])} | {_share(row['right'], row['expected'])} | "
            f"{_share(row['right'], row['given'])} |"
        )
    lines += ["", "| parameter kind | expected | given | accuracy | precision |", "|---|---|---|---|---|"]
    for kind, row in sorted(report["by_kind"].items(), key=lambda kv: -kv[1].get("expected", 0)):
        expected, given, right = row.get("expected", 0), row.get("given", 0), row.get("right", 0)
        lines.append(
            f"| {kind} | {expected} | {given} | {_share(right, expected)} | {_share(right, given)} |"
        )
    missing = report["missing"]
    lines += ["", f"missing: precision {_share(missing.get('right', 0), missing.get('said', 0))}, "
              f"recall {_share(missing.get('right', 0), missing.get('labelled', 0))}"]  # fmt: skip
    if errors:
        lines += ["", f"{len(report['errors'])} examples not exactly right:"]
        for error in report["errors"]:
            lines.append(f"- {error['id']} [{error['tool']}] {error['text']!r}")
            lines.append(f"    expected {json.dumps(error['expected'], ensure_ascii=False)} "
                         f"missing {error['missing']}")  # fmt: skip
            lines.append(f"    got      {json.dumps(error['got'], ensure_ascii=False)} "
                         f"missing {error['said_missing']}")  # fmt: skip
    return "\n".join(lines)
