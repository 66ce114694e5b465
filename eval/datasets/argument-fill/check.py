"""Check the argument-fill set (``examples.jsonl`` beside its ``tools.json``).

    .venv/bin/python eval/datasets/argument-fill/check.py [--root DIR] [--sources FILE ...] [--write-tools]

Standard library only; it reads the set and the catalogs it was written over, never the product. Checks:

- every line is a JSON object with ``id``, ``text``, ``tool`` (``server::tool``), ``expected`` (an object)
  and ``missing`` (a list); optional ``phrasing`` (``user`` or ``agent``), ``now`` (ISO date-time) and
  ``note``; no other key;
- ids are unique, and no text is written twice for the same tool;
- the tool is in ``tools.json``, and ``tools.json`` holds exactly the tools the lines name, each with the
  schema its source catalog lists (the demo servers' and the personal setups' ``tools.json``);
- every expected key is a parameter of the tool's schema, and its value has the parameter's JSON type
  (an integer for ``integer``, a list for ``array``, one of the ``enum`` when there is one);
- ``missing`` names required parameters only, none of them expected, no duplicates, and every required
  parameter is either expected or missing.

``--write-tools`` rewrites ``tools.json`` from the sources (after the examples change). Prints the
composition; exits 1 listing each failure with the id and the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATASETS = HERE.parent
SOURCES = [DATASETS / "gateway-demo" / "tools.json", *sorted(DATASETS.glob("personal-setups/*/tools.json"))]
KEYS = {"id", "text", "tool", "expected", "missing"}
OPTIONAL = {"phrasing", "now", "note"}
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
    "object": (dict,), "null": (type(None),),
}  # fmt: skip


def catalog(paths: list[Path]) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for path in paths:
        for tool in json.loads(path.read_text(encoding="utf-8")):
            tools.setdefault(f"{tool['server']}::{tool['name']}", tool)
    return tools


def declared_types(spec: dict[str, Any]) -> set[str]:
    declared = spec.get("type")
    types = {declared} if isinstance(declared, str) else set(declared or ())
    for option in spec.get("anyOf", []) + spec.get("oneOf", []):
        if isinstance(option, dict):
            types |= declared_types(option)
    return types


def value_problem(value: Any, spec: dict[str, Any]) -> str | None:
    types = declared_types(spec)
    if types:
        fits = any(
            isinstance(value, JSON_TYPES[t]) and not (isinstance(value, bool) and t in ("integer", "number"))
            for t in types
            if t in JSON_TYPES
        )
        if not fits:
            return f"{value!r} is not of type {sorted(types)}"
    if "enum" in spec and value not in spec["enum"]:
        return f"{value!r} is not one of {spec['enum']}"
    return None


def check_line(row: dict[str, Any], tools: dict[str, dict[str, Any]]) -> list[str]:
    problems = [f"missing key {k}" for k in sorted(KEYS - row.keys())]
    problems += [f"unknown key {k}" for k in sorted(row.keys() - KEYS - OPTIONAL)]
    if problems:
        return problems
    if not isinstance(row["text"], str) or not row["text"].strip():
        problems.append("empty text")
    if row.get("phrasing", "user") not in ("user", "agent"):
        problems.append(f"phrasing {row['phrasing']!r} is neither user nor agent")
    if "now" in row:
        try:
            datetime.fromisoformat(row["now"])
        except (TypeError, ValueError):
            problems.append(f"now {row['now']!r} is not an ISO date-time")
    tool = tools.get(row["tool"])
    if tool is None:
        return [*problems, f"tool {row['tool']} is not in tools.json"]
    schema = tool.get("input_schema") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    expected, missing = row["expected"], row["missing"]
    if not isinstance(expected, dict) or not isinstance(missing, list):
        return [*problems, "expected must be an object and missing a list"]
    for name, value in expected.items():
        if name not in properties:
            problems.append(f"expected {name} is not a parameter of {row['tool']}")
        elif (problem := value_problem(value, properties[name])) is not None:
            problems.append(f"expected {name}: {problem}")
    if len(set(missing)) != len(missing):
        problems.append("missing names a parameter twice")
    problems += [f"missing {m} is not a required parameter" for m in missing if m not in required]
    problems += [f"missing {m} is also expected" for m in missing if m in expected]
    unaccounted = sorted(required - set(expected) - set(missing))
    if unaccounted:
        problems.append(f"required {unaccounted} neither expected nor missing")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--sources", type=Path, nargs="*", default=SOURCES)
    parser.add_argument("--write-tools", action="store_true")
    args = parser.parse_args(argv)
    lines = (args.root / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(raw) for raw in lines if raw.strip()]
    sources = catalog(args.sources)
    used = sorted({row.get("tool", "") for row in rows})
    if args.write_tools:
        chosen = [sources[name] for name in used if name in sources]
        text = json.dumps(chosen, indent=1, ensure_ascii=False)
        (args.root / "tools.json").write_text(text + "\n", encoding="utf-8")
    tools = catalog([args.root / "tools.json"])
    failures = [f"tools.json: {name} is named by no example" for name in sorted(set(tools) - set(used))]
    for name, tool in tools.items():
        if name in sources and sources[name].get("input_schema") != tool.get("input_schema"):
            failures.append(f"tools.json: {name} differs from its source catalog")
        elif name not in sources:
            failures.append(f"tools.json: {name} is in no source catalog")
    ids = Counter(row.get("id") for row in rows)
    failures += [f"{i}: id used {n} times" for i, n in ids.items() if n > 1]
    texts = Counter((row.get("tool"), row.get("text")) for row in rows)
    failures += [f"{t[1]!r}: written twice for {t[0]}" for t, n in texts.items() if n > 1]
    for row in rows:
        failures += [f"{row.get('id')}: {problem}" for problem in check_line(row, tools)]
    servers = Counter(str(row.get("tool", "")).split("::")[0] for row in rows)
    print(f"{len(rows)} examples over {len(used)} tools of {len(servers)} servers")
    print("phrasing:", dict(Counter(row.get("phrasing", "user") for row in rows)))
    print("with a missing parameter:", sum(1 for row in rows if row.get("missing")))
    print("expected values:", sum(len(row.get("expected", {})) for row in rows))
    print("with a note (traps and rules):", sum(1 for row in rows if row.get("note")))
    if failures:
        print("\n".join(["FAILED:", *failures]), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
