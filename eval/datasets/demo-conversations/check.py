#!/usr/bin/env python3
"""Standard-library checker for eval/datasets/demo-conversations.

Checks queries.jsonl and tasks.jsonl against the 52 real tools in
../gateway-demo/tools.json, prints a composition table and exits 1 with a
list of failures if any rule is broken.

Run:  cd /work/main && .venv/bin/python eval/datasets/demo-conversations/check.py
      (``--root DIR`` checks another copy of the folder; ``--tools FILE`` another tools file, by default
      DIR/../gateway-demo/tools.json)
"""

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TOOLS_FILE = Path("gateway-demo") / "tools.json"  # beside the dataset folder
QUERIES = "queries.jsonl"
TASKS = "tasks.jsonl"

QUERY_FIELDS = [
    "id",
    "conversation",
    "query",
    "agent_query",
    "gold_servers",
    "gold_tools",
    "gold_tool_groups",
    "expected_tier",
    "category",
    "gold_arguments",
    "missing_required",
]
CATEGORY_TIER = {
    "plain": "activated",
    "ambiguous": "multiple_matches",
    "unanswerable": "not_found",
}
KINDS = {"everyday", "near-domain"}
JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}
NGRAM = 6
CATEGORIES = ["plain", "ambiguous", "unanswerable"]

Row = dict[str, Any]


class Report:
    """The failures found so far, each as ``where: what``, in the order the checks ran."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def fail(self, where: object, msg: str) -> None:
        self.failures.append(f"{where}: {msg}")


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def ngrams(toks: list[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


def load_jsonl(path: Path, report: Report) -> list[Row]:
    rows: list[Row] = []
    if not path.exists():
        report.fail(path.name, "file is missing")
        return rows
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            report.fail(f"{path.name}:{n}", f"invalid JSON ({e})")
    return rows


def type_ok(value: object, schema: dict[str, Any]) -> bool:
    """Loose JSON-schema type check for one gold argument value."""
    types = schema.get("type")
    if types is None and "anyOf" in schema:
        types = [s.get("type") for s in schema["anyOf"] if s.get("type")]
    if types is None:
        return True
    if isinstance(types, str):
        types = [types]
    for t in types:
        py = JSON_TYPES.get(t)
        if py is None:
            continue
        if t in ("integer", "number") and isinstance(value, bool):
            continue
        if isinstance(value, py):
            return not ("enum" in schema and value not in schema["enum"])
    return False


# ---------------------------------------------------------------- tools ----
@dataclass(frozen=True)
class Catalog:
    """The real tools the lines are checked against, and the words a line must not copy from them."""

    tools: dict[str, Row]  # "server::name" -> the tool
    servers: list[str]
    description_grams: set[tuple[str, ...]]
    # multi-part tool names (git_status, read_text_file, get-sum), in the literal
    # form and with the separators written as spaces ("read text file")
    multi_names: set[str]


def load_catalog(path: Path) -> Catalog:
    tools_raw: list[Row] = json.loads(path.read_text(encoding="utf-8"))
    description_grams: set[tuple[str, ...]] = set()
    for t in tools_raw:
        description_grams |= ngrams(tokens(t.get("description", "")))
    multi_names: set[str] = set()
    for t in tools_raw:
        name = t["name"].lower()
        parts = [p for p in re.split(r"[_\-]", name) if p]
        if len(parts) >= 2:
            multi_names.add(name)
            multi_names.add(" ".join(parts))
    return Catalog(
        tools={f"{t['server']}::{t['name']}": t for t in tools_raw},
        servers=sorted({t["server"] for t in tools_raw}),
        description_grams=description_grams,
        multi_names=multi_names,
    )


def name_leaks(text: str, catalog: Catalog) -> list[str]:
    low = " " + " ".join(re.findall(r"[a-z0-9_\-']+", text.lower())) + " "
    hits = []
    for name in catalog.multi_names:
        if re.search(r"(?<![a-z0-9_\-])" + re.escape(name) + r"(?![a-z0-9_\-])", low):
            hits.append(name)
    return sorted(hits)


def shared_runs(text: str, catalog: Catalog) -> list[str]:
    grams = ngrams(tokens(text)) & catalog.description_grams
    return sorted(" ".join(g) for g in grams)


# -------------------------------------------------------------- queries ----
@dataclass
class Seen:
    """What earlier lines used: ids, and the normalised query and agent_query texts (-> first id)."""

    ids: set[object] = field(default_factory=set)
    queries: dict[str, object] = field(default_factory=dict)
    agent_queries: dict[str, object] = field(default_factory=dict)


def check_text(row: Row, seen: Seen, catalog: Catalog, report: Report) -> None:
    """The line's fields, its id, and its two texts: unique, of the right length, copying no tool."""
    rid = row.get("id", "?")
    for f in QUERY_FIELDS:
        if f not in row:
            report.fail(rid, f"missing field {f}")
    if rid in seen.ids:
        report.fail(rid, "duplicate id")
    seen.ids.add(rid)
    m = re.fullmatch(r"dc-(\d)-(\d\d)", str(rid))
    if not m or int(m.group(1)) != row.get("conversation"):
        report.fail(rid, "id does not match the pattern dc-<conversation>-<nn>")

    q, aq = row.get("query", ""), row.get("agent_query", "")
    nq, naq = " ".join(tokens(q)), " ".join(tokens(aq))
    if nq in seen.queries:
        report.fail(rid, f"duplicate query (same as {seen.queries[nq]})")
    seen.queries.setdefault(nq, rid)
    if naq in seen.agent_queries:
        report.fail(rid, f"duplicate agent_query (same as {seen.agent_queries[naq]})")
    seen.agent_queries.setdefault(naq, rid)
    n_words = len(aq.split())
    if not 3 <= n_words <= 12:
        report.fail(rid, f"agent_query has {n_words} words (want 3-12)")
    for label, text in (("query", q), ("agent_query", aq)):
        runs = shared_runs(text, catalog)
        if runs:
            report.fail(rid, f"{label} shares a {NGRAM}-word run with a tool description: {runs[0]!r}")
        leaks = name_leaks(text, catalog)
        if leaks:
            report.fail(rid, f"{label} contains tool name(s) {leaks}")


def check_gold(row: Row, catalog: Catalog, report: Report) -> None:
    """Category, tier and the gold servers, tools and slots agree with each other and the catalog."""
    rid = row.get("id", "?")
    cat, tier = row.get("category"), row.get("expected_tier")
    gs, gt, gg = row.get("gold_servers", []), row.get("gold_tools", []), row.get("gold_tool_groups", [])
    args, missing = row.get("gold_arguments", {}), row.get("missing_required", [])
    if cat not in CATEGORY_TIER:
        report.fail(rid, f"unknown category {cat!r}")
    elif CATEGORY_TIER[cat] != tier:
        report.fail(rid, f"category {cat} needs tier {CATEGORY_TIER[cat]}, got {tier}")
    if cat == "unanswerable":
        if gs or gt or gg:
            report.fail(rid, "unanswerable line must have empty gold lists")
        if row.get("kind") not in KINDS:
            report.fail(rid, f"unanswerable line needs kind in {sorted(KINDS)}")
    elif "kind" in row:
        report.fail(rid, "kind is only for unanswerable lines")
    if cat != "plain" and (args or missing):
        report.fail(rid, "gold_arguments / missing_required are only filled on plain lines")

    for t in gt + [t for slot in gg for t in slot]:
        if t not in catalog.tools:
            report.fail(rid, f"unknown tool {t}")
    if cat in ("plain", "ambiguous"):
        if not gt or not gg or any(not slot for slot in gg):
            report.fail(rid, "answerable line needs gold_tools and non-empty slots")
        tool_servers = sorted({t.split("::")[0] for t in gt})
        if sorted(gs) != tool_servers:
            report.fail(rid, f"gold_servers {gs} != servers of gold_tools {tool_servers}")
        slot_tools = {t for slot in gg for t in slot}
        for t in gt:
            if t not in slot_tools:
                report.fail(rid, f"gold tool {t} is in no slot of gold_tool_groups")
        for t in slot_tools:
            if t.split("::")[0] not in gs:
                report.fail(rid, f"slot tool {t} is on a server not in gold_servers")
        if cat == "plain" and len(gs) != 1:
            report.fail(rid, "plain (activated) line must have exactly one gold server")
        if cat == "ambiguous" and len(gs) < 2:
            report.fail(rid, "ambiguous (multiple_matches) line needs two or more servers")


def check_arguments(row: Row, catalog: Catalog, report: Report) -> None:
    """gold_arguments and missing_required fit the input schema of the first gold tool."""
    rid = row.get("id", "?")
    gt = row.get("gold_tools", [])
    args, missing = row.get("gold_arguments", {}), row.get("missing_required", [])
    if not isinstance(args, dict) or not isinstance(missing, list):
        report.fail(rid, "gold_arguments must be an object and missing_required a list")
        return
    if gt and gt[0] in catalog.tools:
        schema = catalog.tools[gt[0]].get("input_schema", {})
        props, required = schema.get("properties", {}), schema.get("required", [])
        for k, v in args.items():
            if k not in props:
                report.fail(rid, f"gold_arguments key {k!r} is not a parameter of {gt[0]}")
            elif not type_ok(v, props[k]):
                report.fail(rid, f"gold_arguments[{k!r}]={v!r} does not fit the schema of {gt[0]}")
        for k in missing:
            if k not in required:
                report.fail(rid, f"missing_required {k!r} is not a required parameter of {gt[0]}")
            if k in args:
                report.fail(rid, f"missing_required {k!r} is also given in gold_arguments")
    elif args or missing:
        report.fail(rid, "gold_arguments / missing_required given without a gold tool")


def check_queries(queries: list[Row], catalog: Catalog, report: Report) -> None:
    seen = Seen()
    for row in queries:
        check_text(row, seen, catalog, report)
        check_gold(row, catalog, report)
        check_arguments(row, catalog, report)


# ---------------------------------------------------------------- tasks ----
def check_tasks(tasks: list[Row], catalog: Catalog, report: Report) -> None:
    task_ids = set()
    for row in tasks:
        tid = row.get("id", "?")
        for f in ("id", "task", "steps", "done_when"):
            if f not in row:
                report.fail(tid, f"missing field {f}")
        if tid in task_ids:
            report.fail(tid, "duplicate id")
        task_ids.add(tid)
        if not re.fullmatch(r"task-\d\d", str(tid)):
            report.fail(tid, "id does not match task-<nn>")
        steps = row.get("steps", [])
        if not 1 <= len(steps) <= 4:
            report.fail(tid, f"{len(steps)} steps (want 1-4)")
        for s in steps:
            if s.get("tool") not in catalog.tools:
                report.fail(tid, f"unknown step tool {s.get('tool')}")
            if not s.get("why"):
                report.fail(tid, "step without a why")


# ---------------------------------------------------------------- table ----
def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(title)
    print("  " + line.format(*header))
    for r in rows:
        print("  " + line.format(*[str(x) for x in r]))
    print()


def print_composition(queries: list[Row], tasks: list[Row], catalog: Catalog) -> None:
    by_conv: dict[Any, list[Row]] = defaultdict(list)
    for r in queries:
        by_conv[r.get("conversation")].append(r)
    rows: list[list[Any]] = []
    for conv in sorted(k for k in by_conv if k is not None):
        c = Counter(r.get("category") for r in by_conv[conv])
        rows.append([conv] + [c[k] for k in CATEGORIES] + [len(by_conv[conv])])
    tot = Counter(r.get("category") for r in queries)
    rows.append(["all"] + [tot[k] for k in CATEGORIES] + [len(queries)])
    table("queries.jsonl by conversation and category", ["conversation", *CATEGORIES, "total"], rows)

    tiers = Counter(r.get("expected_tier") for r in queries)
    kinds = Counter(r.get("kind") for r in queries if r.get("category") == "unanswerable")
    table(
        "tiers and unanswerable kinds",
        ["label", "count"],
        [[f"tier {k}", v] for k, v in sorted(tiers.items())]
        + [[f"kind {k}", v] for k, v in sorted(kinds.items())],
    )
    print_servers(queries, tasks, catalog)


def print_servers(queries: list[Row], tasks: list[Row], catalog: Catalog) -> None:
    srows: list[list[Any]] = []
    for s in catalog.servers:
        plain = sum(1 for r in queries if r.get("category") == "plain" and s in r.get("gold_servers", []))
        amb = sum(1 for r in queries if r.get("category") == "ambiguous" and s in r.get("gold_servers", []))
        first = sum(1 for r in queries if r.get("gold_tools") and r["gold_tools"][0].startswith(s + "::"))
        in_tasks = sum(
            1 for t in tasks if any(st.get("tool", "").startswith(s + "::") for st in t.get("steps", []))
        )
        srows.append([s, plain, amb, first, in_tasks])
    table(
        "servers (lines naming the server; tasks using it)",
        ["server", "plain", "ambiguous", "first_gold_tool", "tasks"],
        srows,
    )

    used = {t for r in queries for t in r.get("gold_tools", [])} | {
        s.get("tool") for t in tasks for s in t.get("steps", [])
    }
    print(f"tools used as gold or task step: {len(used & set(catalog.tools))} of {len(catalog.tools)}")
    steps = sum(len(t.get("steps", [])) for t in tasks)
    cross = sum(1 for t in tasks if len({s.get("tool", "").split("::")[0] for s in t.get("steps", [])}) > 1)
    print(f"tasks: {len(tasks)}, steps: {steps}, cross-server tasks: {cross}")
    with_args = sum(1 for r in queries if r.get("gold_arguments"))
    with_missing = sum(1 for r in queries if r.get("missing_required"))
    print(f"plain lines with gold_arguments: {with_args}, with missing_required: {with_missing}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the dataset folder (queries, tasks)")
    parser.add_argument("--tools", type=Path, default=None, help="default: ROOT/../gateway-demo/tools.json")
    args = parser.parse_args(argv)
    catalog = load_catalog(args.tools or args.root.parent / TOOLS_FILE)
    report = Report()
    queries = load_jsonl(args.root / QUERIES, report)
    check_queries(queries, catalog, report)
    tasks = load_jsonl(args.root / TASKS, report)
    check_tasks(tasks, catalog, report)
    print_composition(queries, tasks, catalog)
    if report.failures:
        print(f"FAILED: {len(report.failures)} problem(s)")
        for f in report.failures:
            print("  - " + f)
        return 1
    print("OK: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
