#!/usr/bin/env python3
"""Standard-library checker for eval/datasets/demo-conversations.

Checks queries.jsonl and tasks.jsonl against the 52 real tools in
../gateway-demo/tools.json, prints a composition table and exits 1 with a
list of failures if any rule is broken.

Run:  cd /work/main && .venv/bin/python eval/datasets/demo-conversations/check.py
"""
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS_PATH = HERE.parent / "gateway-demo" / "tools.json"
QUERIES_PATH = HERE / "queries.jsonl"
TASKS_PATH = HERE / "tasks.jsonl"

QUERY_FIELDS = [
    "id", "conversation", "query", "agent_query", "gold_servers", "gold_tools",
    "gold_tool_groups", "expected_tier", "category", "gold_arguments",
    "missing_required",
]
CATEGORY_TIER = {
    "plain": "activated",
    "ambiguous": "multiple_matches",
    "unanswerable": "not_found",
}
KINDS = {"everyday", "near-domain"}
JSON_TYPES = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict,
}
NGRAM = 6

failures = []


def fail(where, msg):
    failures.append(f"{where}: {msg}")


def tokens(text):
    return re.findall(r"[a-z0-9']+", text.lower())


def ngrams(toks, n=NGRAM):
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def load_jsonl(path):
    rows = []
    if not path.exists():
        fail(path.name, "file is missing")
        return rows
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            fail(f"{path.name}:{n}", f"invalid JSON ({e})")
    return rows


def type_ok(value, schema):
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
            if "enum" in schema and value not in schema["enum"]:
                return False
            return True
    return False


# ---------------------------------------------------------------- tools ----
tools_raw = json.loads(TOOLS_PATH.read_text(encoding="utf-8"))
TOOLS = {f"{t['server']}::{t['name']}": t for t in tools_raw}
SERVERS = sorted({t["server"] for t in tools_raw})
DESC_NGRAMS = set()
for t in tools_raw:
    DESC_NGRAMS |= ngrams(tokens(t.get("description", "")))
# multi-part tool names (git_status, read_text_file, get-sum), in the literal
# form and with the separators written as spaces ("read text file")
MULTI_NAMES = set()
for t in tools_raw:
    name = t["name"].lower()
    parts = [p for p in re.split(r"[_\-]", name) if p]
    if len(parts) >= 2:
        MULTI_NAMES.add(name)
        MULTI_NAMES.add(" ".join(parts))


def name_leaks(text):
    low = " " + " ".join(re.findall(r"[a-z0-9_\-']+", text.lower())) + " "
    hits = []
    for name in MULTI_NAMES:
        if re.search(r"(?<![a-z0-9_\-])" + re.escape(name) + r"(?![a-z0-9_\-])", low):
            hits.append(name)
    return sorted(hits)


def shared_runs(text):
    grams = ngrams(tokens(text)) & DESC_NGRAMS
    return sorted(" ".join(g) for g in grams)


# -------------------------------------------------------------- queries ----
queries = load_jsonl(QUERIES_PATH)
seen_ids, seen_q, seen_aq = set(), {}, {}
by_conv = defaultdict(list)

for row in queries:
    rid = row.get("id", "?")
    for f in QUERY_FIELDS:
        if f not in row:
            fail(rid, f"missing field {f}")
    if rid in seen_ids:
        fail(rid, "duplicate id")
    seen_ids.add(rid)
    conv = row.get("conversation")
    by_conv[conv].append(row)
    m = re.fullmatch(r"dc-(\d)-(\d\d)", str(rid))
    if not m or int(m.group(1)) != conv:
        fail(rid, "id does not match the pattern dc-<conversation>-<nn>")

    q, aq = row.get("query", ""), row.get("agent_query", "")
    nq, naq = " ".join(tokens(q)), " ".join(tokens(aq))
    if nq in seen_q:
        fail(rid, f"duplicate query (same as {seen_q[nq]})")
    seen_q.setdefault(nq, rid)
    if naq in seen_aq:
        fail(rid, f"duplicate agent_query (same as {seen_aq[naq]})")
    seen_aq.setdefault(naq, rid)
    n_words = len(aq.split())
    if not 3 <= n_words <= 12:
        fail(rid, f"agent_query has {n_words} words (want 3-12)")
    for label, text in (("query", q), ("agent_query", aq)):
        runs = shared_runs(text)
        if runs:
            fail(rid, f"{label} shares a {NGRAM}-word run with a tool description: {runs[0]!r}")
        leaks = name_leaks(text)
        if leaks:
            fail(rid, f"{label} contains tool name(s) {leaks}")

    cat, tier = row.get("category"), row.get("expected_tier")
    gs, gt, gg = row.get("gold_servers", []), row.get("gold_tools", []), row.get("gold_tool_groups", [])
    args, missing = row.get("gold_arguments", {}), row.get("missing_required", [])
    if cat not in CATEGORY_TIER:
        fail(rid, f"unknown category {cat!r}")
    elif CATEGORY_TIER[cat] != tier:
        fail(rid, f"category {cat} needs tier {CATEGORY_TIER[cat]}, got {tier}")
    if cat == "unanswerable":
        if gs or gt or gg:
            fail(rid, "unanswerable line must have empty gold lists")
        if row.get("kind") not in KINDS:
            fail(rid, f"unanswerable line needs kind in {sorted(KINDS)}")
    elif "kind" in row:
        fail(rid, "kind is only for unanswerable lines")
    if cat != "plain" and (args or missing):
        fail(rid, "gold_arguments / missing_required are only filled on plain lines")

    for t in gt + [t for slot in gg for t in slot]:
        if t not in TOOLS:
            fail(rid, f"unknown tool {t}")
    if cat in ("plain", "ambiguous"):
        if not gt or not gg or any(not slot for slot in gg):
            fail(rid, "answerable line needs gold_tools and non-empty slots")
        tool_servers = sorted({t.split("::")[0] for t in gt})
        if sorted(gs) != tool_servers:
            fail(rid, f"gold_servers {gs} != servers of gold_tools {tool_servers}")
        slot_tools = {t for slot in gg for t in slot}
        for t in gt:
            if t not in slot_tools:
                fail(rid, f"gold tool {t} is in no slot of gold_tool_groups")
        for t in slot_tools:
            if t.split("::")[0] not in gs:
                fail(rid, f"slot tool {t} is on a server not in gold_servers")
        if cat == "plain" and len(gs) != 1:
            fail(rid, "plain (activated) line must have exactly one gold server")
        if cat == "ambiguous" and len(gs) < 2:
            fail(rid, "ambiguous (multiple_matches) line needs two or more servers")

    if not isinstance(args, dict) or not isinstance(missing, list):
        fail(rid, "gold_arguments must be an object and missing_required a list")
        continue
    if gt and gt[0] in TOOLS:
        schema = TOOLS[gt[0]].get("input_schema", {})
        props, required = schema.get("properties", {}), schema.get("required", [])
        for k, v in args.items():
            if k not in props:
                fail(rid, f"gold_arguments key {k!r} is not a parameter of {gt[0]}")
            elif not type_ok(v, props[k]):
                fail(rid, f"gold_arguments[{k!r}]={v!r} does not fit the schema of {gt[0]}")
        for k in missing:
            if k not in required:
                fail(rid, f"missing_required {k!r} is not a required parameter of {gt[0]}")
            if k in args:
                fail(rid, f"missing_required {k!r} is also given in gold_arguments")
    elif args or missing:
        fail(rid, "gold_arguments / missing_required given without a gold tool")

# ---------------------------------------------------------------- tasks ----
tasks = load_jsonl(TASKS_PATH)
task_ids = set()
for row in tasks:
    tid = row.get("id", "?")
    for f in ("id", "task", "steps", "done_when"):
        if f not in row:
            fail(tid, f"missing field {f}")
    if tid in task_ids:
        fail(tid, "duplicate id")
    task_ids.add(tid)
    if not re.fullmatch(r"task-\d\d", str(tid)):
        fail(tid, "id does not match task-<nn>")
    steps = row.get("steps", [])
    if not 1 <= len(steps) <= 4:
        fail(tid, f"{len(steps)} steps (want 1-4)")
    for s in steps:
        if s.get("tool") not in TOOLS:
            fail(tid, f"unknown step tool {s.get('tool')}")
        if not s.get("why"):
            fail(tid, "step without a why")

# ---------------------------------------------------------------- table ----
def table(title, header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(title)
    print("  " + line.format(*header))
    for r in rows:
        print("  " + line.format(*[str(x) for x in r]))
    print()


cats = ["plain", "ambiguous", "unanswerable"]
rows = []
for conv in sorted(k for k in by_conv if k is not None):
    c = Counter(r.get("category") for r in by_conv[conv])
    rows.append([conv] + [c[k] for k in cats] + [len(by_conv[conv])])
tot = Counter(r.get("category") for r in queries)
rows.append(["all"] + [tot[k] for k in cats] + [len(queries)])
table("queries.jsonl by conversation and category",
      ["conversation"] + cats + ["total"], rows)

tiers = Counter(r.get("expected_tier") for r in queries)
kinds = Counter(r.get("kind") for r in queries if r.get("category") == "unanswerable")
table("tiers and unanswerable kinds", ["label", "count"],
      [[f"tier {k}", v] for k, v in sorted(tiers.items())]
      + [[f"kind {k}", v] for k, v in sorted(kinds.items())])

srows = []
for s in SERVERS:
    plain = sum(1 for r in queries if r.get("category") == "plain" and s in r.get("gold_servers", []))
    amb = sum(1 for r in queries if r.get("category") == "ambiguous" and s in r.get("gold_servers", []))
    first = sum(1 for r in queries if r.get("gold_tools") and r["gold_tools"][0].startswith(s + "::"))
    in_tasks = sum(1 for t in tasks if any(st.get("tool", "").startswith(s + "::") for st in t.get("steps", [])))
    srows.append([s, plain, amb, first, in_tasks])
table("servers (lines naming the server; tasks using it)",
      ["server", "plain", "ambiguous", "first_gold_tool", "tasks"], srows)

used = {t for r in queries for t in r.get("gold_tools", [])} | \
       {s.get("tool") for t in tasks for s in t.get("steps", [])}
print(f"tools used as gold or task step: {len(used & set(TOOLS))} of {len(TOOLS)}")
print(f"tasks: {len(tasks)}, steps: {sum(len(t.get('steps', [])) for t in tasks)}, "
      f"cross-server tasks: {sum(1 for t in tasks if len({s.get('tool', '').split('::')[0] for s in t.get('steps', [])}) > 1)}")
with_args = sum(1 for r in queries if r.get("gold_arguments"))
with_missing = sum(1 for r in queries if r.get("missing_required"))
print(f"plain lines with gold_arguments: {with_args}, with missing_required: {with_missing}")
print()

if failures:
    print(f"FAILED: {len(failures)} problem(s)")
    for f in failures:
        print("  - " + f)
    sys.exit(1)
print("OK: all checks passed")
