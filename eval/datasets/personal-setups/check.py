"""Check the personal-setups dataset without running the product on it.

    .venv/bin/python eval/datasets/personal-setups/check.py [--root DIR] [--benchmarks ../shared/benchmarks]

Checks: at least 6 setups (folders holding servers.json); 12-20 servers each, names unique; every server
entry names its ``source`` catalog (msc_bench_dev, livemcpbench, gateway-demo) and equals that catalog's
entry (name and description byte for byte, every other key too); every tool equals the source catalog's
tool (name, description, input_schema) and each server brings all of its catalog tools, none twice; at
least 80 requests per setup: 12-18 unanswerable with both kinds (everyday, near-domain), 8-12 ambiguous,
the rest plain; ids unique and ``<setup>-NNN``; category, expected_tier, ``ambiguous``, ``kind`` and
``style`` consistent; every gold tool id in the setup's tools.json; gold_tools the union of the slots and
gold_servers the servers of gold_tools; plain exactly one gold server, ambiguous at least two, unanswerable
no gold; no request text twice in the whole set; no request sharing a run of 8 or more consecutive words
with a tool description of its setup; at least 20 % of each setup's requests carrying a concrete argument
(a digit, a URL, a slash path, an @, or a quoted span). Prints a per-setup table; exits 1 with one line
per problem.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DEFAULT_BENCHMARKS = REPO.parent / "shared" / "benchmarks"

MIN_SETUPS = 6
SERVERS_RANGE = (12, 20)
MIN_REQUESTS = 80
UNANSWERABLE_RANGE = (12, 18)
AMBIGUOUS_RANGE = (8, 12)
MIN_CONCRETE_SHARE = 0.20
COPY_RUN = 8  # words in a row shared with a tool description that count as copying it

KINDS = {"everyday", "near-domain"}
STYLES = {"terse", "chatty", "typo", "args"}
KEYS = {"id", "query", "gold_servers", "gold_tools", "gold_tool_groups", "category", "expected_tier", "style"}
WORD = re.compile(r"[a-z0-9]+")


def _build_module() -> Any:
    """``build.py`` beside this script: where the catalogs live, what counts as a concrete argument and
    the tier of each category are defined once, there."""
    spec = importlib.util.spec_from_file_location("personal_setups_build", HERE / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BUILD = _build_module()
TIERS: dict[str, str] = _BUILD.TIER
CONCRETE: re.Pattern[str] = _BUILD.CONCRETE
catalog_dirs = _BUILD.catalog_dirs


def _load_catalogs(
    benchmarks: Path,
) -> dict[str, tuple[dict[str, Any], dict[tuple[str, str], Any], Counter[str]]]:
    out = {}
    for source, folder in catalog_dirs(benchmarks).items():
        servers, by_server = _BUILD.load_catalog(folder)
        tools = [t for listed in by_server.values() for t in listed]
        out[source] = (
            servers,
            {(t["server"], t["name"]): t for t in tools},
            Counter(t["server"] for t in tools),
        )
    return out


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def has_concrete_argument(text: str) -> bool:
    return CONCRETE.search(text) is not None


def check_catalog(
    name: str, folder: Path, catalogs: dict[str, Any]
) -> tuple[list[str], dict[str, str], set[str]]:
    """Problems of one setup's servers.json and tools.json; its server -> source map; its tool ids."""
    problems: list[str] = []
    servers = json.loads((folder / "servers.json").read_text(encoding="utf-8"))
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    sources: dict[str, str] = {}
    low, high = SERVERS_RANGE
    if not low <= len(servers) <= high:
        problems.append(f"{name}: {len(servers)} servers, expected {low}-{high}")
    for entry in servers:
        server = entry.get("name")
        source = entry.get("source")
        if server in sources:
            problems.append(f"{name}: server {server!r} listed twice")
            continue
        if source not in catalogs:
            problems.append(
                f"{name}: server {server!r} has source {source!r}, expected one of {sorted(catalogs)}"
            )
            continue
        sources[server] = source
        original = catalogs[source][0].get(server)
        if original is None:
            problems.append(f"{name}: server {server!r} is not in the {source} catalog")
            continue
        if entry.get("description") != original["description"]:
            problems.append(f"{name}: server {server!r} description differs from the {source} catalog")
        rest = {k: v for k, v in entry.items() if k != "source"}
        if rest != original:
            problems.append(f"{name}: server {server!r} entry differs from the {source} catalog entry")
    seen: Counter[str] = Counter()
    ids: set[str] = set()
    for tool in tools:
        server, tool_name = tool.get("server"), tool.get("name")
        tool_id = f"{server}::{tool_name}"
        if tool_id in ids:
            problems.append(f"{name}: tool {tool_id!r} listed twice")
            continue
        ids.add(tool_id)
        if server not in sources:
            problems.append(f"{name}: tool {tool_id!r} belongs to no server of the setup")
            continue
        seen[server] += 1
        original = catalogs[sources[server]][1].get((server, tool_name))
        if original is None:
            problems.append(f"{name}: tool {tool_id!r} is not in the {sources[server]} catalog")
        elif tool != original:
            differing = sorted(k for k in set(tool) | set(original) if tool.get(k) != original.get(k))
            problems.append(f"{name}: tool {tool_id!r} differs from the catalog in {differing}")
    for server, source in sources.items():
        expected = catalogs[source][2][server]
        if expected == 0:
            problems.append(f"{name}: server {server!r} has no tools in the {source} catalog")
        elif seen[server] != expected:
            problems.append(
                f"{name}: server {server!r} brings {seen[server]} of its {expected} catalog tools"
            )
    return problems, sources, ids


def _check_labels(where: str, line: dict[str, Any], tool_ids: set[str]) -> list[str]:
    """Problems of one request's category, tier, kind, style and gold lists."""
    problems: list[str] = []
    category = line["category"]
    if line["expected_tier"] != TIERS[category]:
        problems.append(f"{where}: expected_tier {line['expected_tier']!r} for a {category} request")
    if bool(line.get("ambiguous", False)) != (category == "ambiguous"):
        problems.append(f"{where}: 'ambiguous' must be true exactly for ambiguous requests")
    if category == "unanswerable" and line.get("kind") not in KINDS:
        problems.append(f"{where}: an unanswerable request needs kind everyday or near-domain")
    if category != "unanswerable" and "kind" in line:
        problems.append(f"{where}: only unanswerable requests carry a kind")
    if line["style"] not in STYLES:
        problems.append(f"{where}: style {line['style']!r} is not one of {sorted(STYLES)}")
    slots = line["gold_tool_groups"]
    slot_ids = {t for slot in slots for t in slot}
    if any(not slot for slot in slots):
        problems.append(f"{where}: empty slot in gold_tool_groups")
    unknown = sorted((slot_ids | set(line["gold_tools"])) - tool_ids)
    if unknown:
        problems.append(f"{where}: gold tool ids not in the setup's tools.json: {unknown}")
    if set(line["gold_tools"]) != slot_ids or len(line["gold_tools"]) != len(slot_ids):
        problems.append(f"{where}: gold_tools must list each tool of the slots once")
    gold_servers = {t.rsplit("::", 1)[0] for t in line["gold_tools"]}
    if set(line["gold_servers"]) != gold_servers or len(line["gold_servers"]) != len(gold_servers):
        problems.append(f"{where}: gold_servers {line['gold_servers']} are not the servers of gold_tools")
    if category == "plain" and (len(gold_servers) != 1 or not slots):
        problems.append(f"{where}: a plain request has exactly one gold server (has {sorted(gold_servers)})")
    if category == "ambiguous" and len(gold_servers) < 2:
        problems.append(f"{where}: an ambiguous request has two or more gold servers")
    if category == "unanswerable" and (slots or line["gold_tools"] or line["gold_servers"]):
        problems.append(f"{where}: an unanswerable request has empty gold lists")
    return problems


def _check_totals(name: str, total: int, counts: Counter[str], concrete: int) -> list[str]:
    problems: list[str] = []
    if total < MIN_REQUESTS:
        problems.append(f"{name}: {total} requests, expected at least {MIN_REQUESTS}")
    low, high = UNANSWERABLE_RANGE
    if not low <= counts["unanswerable"] <= high:
        problems.append(f"{name}: {counts['unanswerable']} unanswerable requests, expected {low}-{high}")
    if not counts["unanswerable:everyday"] or not counts["unanswerable:near-domain"]:
        problems.append(f"{name}: unanswerable requests need both kinds, everyday and near-domain")
    low, high = AMBIGUOUS_RANGE
    if not low <= counts["ambiguous"] <= high:
        problems.append(f"{name}: {counts['ambiguous']} ambiguous requests, expected {low}-{high}")
    if total and concrete / total < MIN_CONCRETE_SHARE:
        problems.append(
            f"{name}: {concrete / total:.0%} of requests carry a concrete argument, expected >= 20%"
        )
    return problems


def check_queries(
    name: str, folder: Path, tool_ids: set[str], descriptions: list[str], seen_texts: dict[str, str]
) -> tuple[list[str], dict[str, Any]]:
    """Problems of one setup's queries.jsonl (``seen_texts`` carries the texts of earlier setups)."""
    problems: list[str] = []
    lines = [
        json.loads(raw)
        for raw in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if raw.strip()
    ]
    description_grams: set[tuple[str, ...]] = set()
    for text in descriptions:
        description_grams |= _ngrams(text, COPY_RUN)
    counts: Counter[str] = Counter()
    styles: Counter[str] = Counter()
    servers_used: set[str] = set()
    concrete = 0
    ids: set[str] = set()
    for line in lines:
        qid = line.get("id", "?")
        where = f"{name} {qid}"
        missing = KEYS - set(line)
        if missing:
            problems.append(f"{where}: missing {sorted(missing)}")
            continue
        if qid in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(qid)
        if not re.fullmatch(rf"{re.escape(name)}-\d{{3}}", qid):
            problems.append(f"{where}: id should be '{name}-NNN'")
        text = line["query"]
        key = " ".join(text.casefold().split())
        if key in seen_texts:
            problems.append(f"{where}: request text also used by {seen_texts[key]}")
        seen_texts[key] = where
        copied = _ngrams(text, COPY_RUN) & description_grams
        if copied:
            problems.append(f"{where}: shares '{' '.join(sorted(copied)[0])}' with a tool description")
        concrete += has_concrete_argument(text)
        category = line["category"]
        if category not in TIERS:
            problems.append(f"{where}: category {category!r} is not one of {sorted(TIERS)}")
            continue
        problems += _check_labels(where, line, tool_ids)
        counts[category] += 1
        if category == "unanswerable":
            counts[f"unanswerable:{line.get('kind')}"] += 1
        styles[line["style"]] += 1
        servers_used |= set(line["gold_servers"])
    problems += _check_totals(name, len(lines), counts, concrete)
    summary = {
        "requests": len(lines),
        "plain": counts["plain"],
        "everyday": counts["unanswerable:everyday"],
        "near_domain": counts["unanswerable:near-domain"],
        "ambiguous": counts["ambiguous"],
        "concrete_share": concrete / len(lines) if lines else 0.0,
        "styles": dict(styles),
        "servers_in_gold": len(servers_used),
    }
    return problems, summary


def setup_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "servers.json").is_file())


def check(
    root: Path = HERE, benchmarks: Path = DEFAULT_BENCHMARKS
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """All problems of the dataset under ``root`` and a summary per setup."""
    catalogs = _load_catalogs(benchmarks)
    problems: list[str] = []
    summaries: dict[str, dict[str, Any]] = {}
    folders = setup_folders(root)
    if len(folders) < MIN_SETUPS:
        problems.append(f"{len(folders)} setups, expected at least {MIN_SETUPS}")
    seen_texts: dict[str, str] = {}
    for folder in folders:
        name = folder.name
        for file in ("servers.json", "tools.json", "queries.jsonl"):
            if not (folder / file).is_file():
                problems.append(f"{name}: {file} is missing")
        if problems and problems[-1].endswith("is missing"):
            continue
        found, sources, tool_ids = check_catalog(name, folder, catalogs)
        problems += found
        tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
        found, summary = check_queries(name, folder, tool_ids, [t["description"] for t in tools], seen_texts)
        problems += found
        summary["servers"] = len(sources)
        summary["tools"] = len(tool_ids)
        summary["by_source"] = dict(Counter(sources.values()))
        summaries[name] = summary
    return problems, summaries


def table(summaries: dict[str, dict[str, Any]]) -> str:
    head = (
        "| setup | servers | tools | requests | plain | unanswerable (everyday / near-domain) | ambiguous "
        "| concrete args | servers in gold |"
    )
    rows = [head, "|" + "---|" * 9]
    for name, s in summaries.items():
        rows.append(
            f"| {name} | {s['servers']} | {s['tools']} | {s['requests']} | {s['plain']} "
            f"| {s['everyday'] + s['near_domain']} ({s['everyday']} / {s['near_domain']}) | {s['ambiguous']} "
            f"| {s['concrete_share']:.0%} | {s['servers_in_gold']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the dataset folder (default: this script's)")
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS, help="shared/benchmarks")
    args = parser.parse_args(argv)
    problems, summaries = check(args.root, args.benchmarks)
    print(table(summaries))
    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"- {problem}", file=sys.stderr)
        return 1
    print(f"\nOK: {len(summaries)} setups, {sum(s['requests'] for s in summaries.values())} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
