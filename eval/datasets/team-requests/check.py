"""Checks the team-written requests (issue 41) and prints what they cover; samples and compares a second
writer's labels.

    .venv/bin/python eval/datasets/team-requests/check.py                 # every family: errors, coverage
    .venv/bin/python eval/datasets/team-requests/check.py --family demo   # one family
    .venv/bin/python eval/datasets/team-requests/check.py sample FAMILY --n 40 --seed 1 --out SAMPLE.jsonl
    .venv/bin/python eval/datasets/team-requests/check.py compare FAMILY LABELS.jsonl
    .venv/bin/python eval/datasets/team-requests/check.py export FAMILY OUT [--styles agent] [--catalog DIR]
    .venv/bin/python eval/datasets/team-requests/check.py cuts FAMILY OUT [--servers 10] [--catalogs 12]

Standard library only; it never runs the product. A family is a folder named after the catalog its
requests were written for (``SOURCES``: read only the catalog's servers.json and tools.json, never a
benchmark's queries). In it, batch files written by hand:

- ``requests-*.jsonl``: ``{"id", "tool": "SERVER::TOOL", "request", "style"}``, a request the tool does;
  ``style`` is one of STYLES (``agent``: as an agent phrases a tool search; the others as people type);
- ``near-*.jsonl``: ``{"id", "server", "request", "why"}``, a request in the server's own domain that
  none of its tools can do (``why``: what it lacks);
- in ``everyday/`` (no catalog): ``unserved-*.jsonl``: ``{"id", "request", "kind"}``, an everyday request
  that no tool catalog serves (advice, chit-chat, errands...).

Errors (exit 1): bad JSON or fields, an id used twice, a gold tool or server not in the catalog, the same
request twice (case and spaces ignored) anywhere in the set, a run of RUN words copied from any tool or
server text of the catalog. ``sample`` writes a blind sample for a second writer (id and request only);
``export`` writes a dataset folder of the benchmark format (the catalog's servers.json and tools.json,
and a queries.jsonl: each request with its gold tool, each unserved request (and with ``--near`` each
near request: its own server cannot do it, another server of the catalog may) unanswerable with
``expected_tier`` not_found) that ``tool-selector lab eval`` reads; ``--styles`` keeps those styles'
requests (default: every people's style; ``agent`` for the agent's), ``--catalog`` pairs the everyday
family with a catalog folder. ``compare`` reads the second writer's labels (``{"id", "tool"}``,
``"none"`` for a near or unserved request) and prints the agreement and every disagreement.
``cuts`` writes small catalogs of a family (``k<servers>-<n>/`` folders, the layout of the shared
``small/`` cuts) for fitting and judging the confidence: each holds its servers' people's requests
(answerable), their near requests (unanswerable, ``origin`` near: another server of so small a cut rarely
does them) and everyday requests (unanswerable, ``origin`` everyday; each family draws from its own
slice of the everyday set, so no two families share one).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SOURCES = {  # family -> the catalog folder its requests were written for
    "msc": REPO.parent / "shared" / "benchmarks" / "msc_bench_dev",
    "metatool": REPO.parent / "shared" / "benchmarks" / "metatool",
    "livemcpbench": REPO.parent / "shared" / "benchmarks" / "livemcpbench",
    "toolalpaca": REPO.parent / "shared" / "benchmarks" / "toolalpaca",
    "restbench": REPO.parent / "shared" / "benchmarks" / "restbench",
    "demo": REPO / "eval" / "datasets" / "gateway-demo",
}
EVERYDAY = "everyday"
STYLES = ("people", "chat", "terse", "args", "typo", "everyday", "agent")
KINDS = ("advice", "chitchat", "errand", "physical", "knowledge", "personal", "creative", "opinion")
RUN = 6  # words in a row copied from a tool's or server's text: refused
WORD = re.compile(r"[^\W_]+")  # letters and digits of any script (CJK too), split at underscores


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def runs(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


def read_rows(path: Path, errors: list[str]) -> list[dict[str, Any]]:
    rows = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append(f"{path.name}:{number}: not JSON ({exc})")
            continue
        if not isinstance(row, dict):
            errors.append(f"{path.name}:{number}: not an object")
            continue
        row["_where"] = f"{path.parent.name}/{path.name}:{number}"
        rows.append(row)
    return rows


class Catalog:
    def __init__(self, folder: Path) -> None:
        servers = json.loads((folder / "servers.json").read_text(encoding="utf-8"))
        tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
        self.servers = {s["name"] for s in servers}
        self.tools = {f"{t['server']}::{t['name']}" for t in tools}
        self.tools_of: dict[str, list[str]] = defaultdict(list)
        texts = []
        for t in tools:
            self.tools_of[t["server"]].append(t["name"])
            texts.append(f"{t['name']} {t.get('description') or ''}")
        texts += [f"{s['name']} {s.get('description') or ''} {s.get('summary') or ''}" for s in servers]
        self.copied: set[tuple[str, ...]] = set().union(*(runs(t) for t in texts))


def need(row: dict[str, Any], fields: tuple[str, ...], errors: list[str]) -> bool:
    for f in fields:
        if not isinstance(row.get(f), str) or not row[f].strip():
            errors.append(f"{row['_where']}: '{f}' must be a non-empty string")
            return False
    return True


def check_family(name: str, seen: dict[str, str], ids: set[str], errors: list[str]) -> dict[str, Any]:
    folder = HERE / name
    catalog = Catalog(SOURCES[name]) if name in SOURCES else None
    requests = [r for p in sorted(folder.glob("requests-*.jsonl")) for r in read_rows(p, errors)]
    near = [r for p in sorted(folder.glob("near-*.jsonl")) for r in read_rows(p, errors)]
    unserved = [r for p in sorted(folder.glob("unserved-*.jsonl")) for r in read_rows(p, errors)]
    styles: Counter[str] = Counter()
    per_tool: dict[str, Counter[str]] = defaultdict(Counter)
    per_server: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for row in requests + near + unserved:
        if not need(row, ("id", "request"), errors):
            continue
        if row["id"] in ids:
            errors.append(f"{row['_where']}: id {row['id']!r} used twice")
        ids.add(row["id"])
        key = " ".join(words(row["request"]))
        if key in seen:
            errors.append(f"{row['_where']}: the same request as {seen[key]}: {row['request']!r}")
        seen[key] = row["_where"]
        if catalog is not None:
            copied = runs(row["request"]) & catalog.copied
            if copied:
                errors.append(f"{row['_where']}: copied from the catalog: {' '.join(sorted(copied)[0])!r}")
    for row in requests:
        if catalog is None:
            errors.append(f"{row['_where']}: a request file in a folder without a catalog")
            break
        if not need(row, ("tool", "style"), errors):
            continue
        if row["tool"] not in catalog.tools:
            errors.append(f"{row['_where']}: no tool {row['tool']!r} in {SOURCES[name].name}")
        if row["style"] not in STYLES:
            errors.append(f"{row['_where']}: style {row['style']!r} is not one of {', '.join(STYLES)}")
        styles[row["style"]] += 1
        per_tool[row["tool"]]["agent" if row["style"] == "agent" else "people"] += 1
    for row in near:
        if catalog is None or not need(row, ("server", "why"), errors):
            continue
        if row["server"] not in catalog.servers:
            errors.append(f"{row['_where']}: no server {row['server']!r} in {SOURCES[name].name}")
        per_server[row["server"]] += 1
    for row in unserved:
        if need(row, ("kind",), errors) and row["kind"] not in KINDS:
            errors.append(f"{row['_where']}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        kinds[row.get("kind", "")] += 1
    summary: dict[str, Any] = {"requests": len(requests), "near": len(near), "unserved": len(unserved)}
    if catalog is not None:
        full = [t for t in catalog.tools if per_tool[t]["people"] >= 3 and per_tool[t]["agent"] >= 1]
        summary["tools covered (3 people + 1 agent)"] = f"{len(full)}/{len(catalog.tools)}"
        near_full = sum(per_server[s] >= 3 for s in catalog.servers)
        summary["servers with 3 near"] = f"{near_full}/{len(catalog.servers)}"
        summary["styles"] = dict(styles)
    if unserved:
        summary["kinds"] = dict(kinds)
    return summary


def families() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if p.is_dir() and (p.name in SOURCES or p.name == EVERYDAY))


def check(only: str | None) -> int:
    errors: list[str] = []
    seen: dict[str, str] = {}
    ids: set[str] = set()
    for name in families():  # duplicates are looked for across the whole set, so every family is read
        summary = check_family(name, seen, ids, errors)
        if only in (None, name):
            print(f"{name}: " + "; ".join(f"{k} {v}" for k, v in summary.items()))
    shown = [e for e in errors if only is None or e.startswith(f"{only}/")]
    for error in shown[:200]:
        print("ERROR", error)
    print(f"{len(shown)} errors" if shown else "OK: no errors")
    return 1 if shown else 0


def sample(family: str, n: int, seed: int) -> list[dict[str, str]]:
    folder = HERE / family
    rows = [r for p in sorted(folder.glob("*-*.jsonl")) for r in read_rows(p, [])]
    drawn = random.Random(seed).sample(rows, min(n, len(rows)))
    return [{"id": r["id"], "request": r["request"]} for r in drawn]


def compare(family: str, labels_path: Path) -> int:
    folder = HERE / family
    gold = {r["id"]: r for p in sorted(folder.glob("*-*.jsonl")) for r in read_rows(p, [])}
    labels = read_rows(labels_path, [])
    same, tool_same, differ = 0, 0, []
    for label in labels:
        row = gold.get(label.get("id", ""))
        if row is None:
            print(f"{label.get('id')}: no such request in {family}")
            continue
        first = row.get("tool") or f"none ({row.get('server') or 'nothing serves'})"
        second = label.get("tool") or "none"
        server_first = first.split("::")[0] if "::" in first else None
        server_second = second.split("::")[0] if "::" in second else None
        agree_server = server_first == server_second
        same += agree_server
        tool_same += first == second or (first.startswith("none") and second == "none")
        if not (first == second or (first.startswith("none") and second == "none")):
            differ.append(f"{row['id']}: {row['request']!r}\n    first:  {first}\n    second: {second}")
    n = max(len(labels), 1)
    print(f"relabelled {len(labels)} requests of {family}")
    print(f"same tool (or both none)  {tool_same}/{len(labels)} = {tool_same / n:.3f}")
    print(f"same server (or both none) {same}/{len(labels)} = {same / n:.3f}")
    if differ:
        print(f"\n{len(differ)} disagreements:\n" + "\n".join(differ))
    return 0


PEOPLE = tuple(s for s in STYLES if s != "agent")


def _capped(
    rows: list[dict[str, Any]], per_tool: int | None, most: int | None, seed: int
) -> list[dict[str, Any]]:
    """At most ``per_tool`` requests a tool and ``most`` in all, drawn by a seeded shuffle: every tool gets
    its first request before any gets a second (a training recipe's share of the team's requests)."""
    if per_tool is None and most is None:
        return rows
    rng = random.Random(f"{seed}:export")
    by_tool: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_tool[row["tool"]].append(row)
    tools = sorted(by_tool)
    rng.shuffle(tools)
    for tool in tools:
        rng.shuffle(by_tool[tool])
    rounds = per_tool if per_tool is not None else max(len(g) for g in by_tool.values())
    kept = [by_tool[t][r] for r in range(rounds) for t in tools if r < len(by_tool[t])]
    return kept[:most] if most is not None else kept


def export(
    family: str,
    out: Path,
    styles: tuple[str, ...],
    catalog: Path | None,
    near: bool = False,
    *,
    per_tool: int | None = None,
    most: int | None = None,
    seed: int = 41,
) -> int:
    folder = HERE / family
    source = catalog or SOURCES.get(family)
    if source is None:
        print(f"{family} has no catalog of its own: pass --catalog DIR")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name in ("servers.json", "tools.json"):
        (out / name).write_text((source / name).read_text(encoding="utf-8"), encoding="utf-8")
    lines = []
    rows = [
        r
        for p in sorted(folder.glob("requests-*.jsonl"))
        for r in read_rows(p, [])
        if r.get("style") in styles
    ]
    for row in _capped(rows, per_tool, most, seed):
        tool = row["tool"]
        lines.append(
            {
                "id": row["id"],
                "query": row["request"],
                "gold_servers": [tool.split("::")[0]],
                "gold_tools": [tool],
                "gold_tool_groups": [[tool]],
                "category": row["style"],
            }
        )
    unanswerable = [*folder.glob("unserved-*.jsonl"), *(folder.glob("near-*.jsonl") if near else ())]
    for path in sorted(unanswerable):
        for row in read_rows(path, []):
            category = "near" if "server" in row else f"unserved-{row.get('kind')}"
            lines.append(
                {
                    "id": row["id"],
                    "query": row["request"],
                    "gold_servers": [],
                    "gold_tools": [],
                    "gold_tool_groups": [],
                    "expected_tier": "not_found",
                    "category": category,
                }
            )
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (out / "queries.jsonl").write_text(text, encoding="utf-8")
    print(f"{len(lines)} requests written to {out}/queries.jsonl (catalog {source})")
    return 0


def everyday_slice(family: str) -> list[dict[str, Any]]:
    """The everyday requests a family's cuts draw from: every len(SOURCES)-th line from its own offset."""
    rows = [r for p in sorted((HERE / EVERYDAY).glob("unserved-*.jsonl")) for r in read_rows(p, [])]
    offset = sorted(SOURCES).index(family)
    return rows[offset :: len(SOURCES)]


def cuts(
    family: str, out: Path, servers: int, catalogs: int, seed: int, answerable: int, near: int, everyday: int
) -> int:
    if family not in SOURCES:
        print(f"{family} has no catalog: cuts are made of one of {', '.join(sorted(SOURCES))}")
        return 2
    source = SOURCES[family]
    all_servers = json.loads((source / "servers.json").read_text(encoding="utf-8"))
    all_tools = json.loads((source / "tools.json").read_text(encoding="utf-8"))
    folder = HERE / family
    requests = [
        r for p in sorted(folder.glob("requests-*.jsonl")) for r in read_rows(p, []) if r["style"] in PEOPLE
    ]
    nears = [r for p in sorted(folder.glob("near-*.jsonl")) for r in read_rows(p, [])]
    unserved = everyday_slice(family)
    rng = random.Random(seed)
    rng.shuffle(unserved)
    names = sorted(s["name"] for s in all_servers)
    rng.shuffle(names)
    groups = [names[i : i + servers] for i in range(0, len(names), servers)][:catalogs]
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for n, group in enumerate(groups, start=1):
        keep = set(group)
        name = f"k{servers}-{n}"
        dest = out / name
        dest.mkdir(parents=True, exist_ok=True)
        for file, rows in (("servers.json", all_servers), ("tools.json", all_tools)):
            kept = [r for r in rows if (r.get("server") or r.get("name")) in keep]
            (dest / file).write_text(json.dumps(kept, ensure_ascii=False, indent=1), encoding="utf-8")
        mine = [r for r in requests if r["tool"].split("::")[0] in keep]
        lines = []
        for r in rng.sample(mine, min(answerable, len(mine))):
            tool = r["tool"]
            lines.append(
                {
                    "id": f"{name}:{r['id']}",
                    "query": r["request"],
                    "gold_servers": [tool.split("::")[0]],
                    "gold_tools": [tool],
                    "gold_tool_groups": [[tool]],
                    "category": r["style"],
                }
            )
        theirs = [r for r in nears if r["server"] in keep]
        drawn = rng.sample(theirs, min(near, len(theirs))) + [
            unserved.pop() for _ in range(min(everyday, len(unserved)))
        ]
        for r in drawn:
            origin = "near" if "server" in r else "everyday"
            lines.append(
                {
                    "id": f"{name}:{r['id']}",
                    "query": r["request"],
                    "gold_servers": [],
                    "gold_tools": [],
                    "gold_tool_groups": [],
                    "expected_tier": "not_found",
                    "origin": origin,
                    "category": origin,
                }
            )
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (dest / "queries.jsonl").write_text(text, encoding="utf-8")
        total += len(lines)
    print(f"{len(groups)} cuts of {family}, {total} requests, written to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--family")
    commands = parser.add_subparsers(dest="command")
    s = commands.add_parser("sample")
    s.add_argument("family")
    s.add_argument("--n", type=int, default=40)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", type=Path, required=True)
    c = commands.add_parser("compare")
    c.add_argument("family")
    c.add_argument("labels", type=Path)
    e = commands.add_parser("export")
    e.add_argument("family")
    e.add_argument("out", type=Path)
    e.add_argument("--styles", default=",".join(PEOPLE))
    e.add_argument("--catalog", type=Path)
    e.add_argument("--near", action="store_true", help="also the near requests (their server cannot do them)")
    e.add_argument("--per-tool", type=int, help="at most this many requests a tool (seeded draw)")
    e.add_argument("--max", type=int, dest="most", help="at most this many tool requests in all")
    e.add_argument("--seed", type=int, default=41)
    k = commands.add_parser("cuts")
    k.add_argument("family")
    k.add_argument("out", type=Path)
    k.add_argument("--servers", type=int, default=10)
    k.add_argument("--catalogs", type=int, default=12)
    k.add_argument("--seed", type=int, default=41)
    k.add_argument("--answerable", type=int, default=30, help="people's requests a cut, at most")
    k.add_argument("--near", type=int, default=12, help="near requests a cut, at most")
    k.add_argument("--everyday", type=int, default=6, help="everyday requests a cut")
    args = parser.parse_args(argv)
    if args.command == "cuts":
        return cuts(
            args.family,
            args.out,
            args.servers,
            args.catalogs,
            args.seed,
            args.answerable,
            args.near,
            args.everyday,
        )
    if args.command == "export":
        return export(
            args.family,
            args.out,
            tuple(args.styles.split(",")),
            args.catalog,
            args.near,
            per_tool=args.per_tool,
            most=args.most,
            seed=args.seed,
        )
    if args.command == "sample":
        drawn = sample(args.family, args.n, args.seed)
        text = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in drawn)
        args.out.write_text(text, encoding="utf-8")
        print(f"{len(drawn)} requests written to {args.out}")
        return 0
    if args.command == "compare":
        return compare(args.family, args.labels)
    return check(args.family)


if __name__ == "__main__":
    sys.exit(main())
