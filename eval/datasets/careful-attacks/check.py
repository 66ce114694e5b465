"""Check the careful-attacks set without the scanner (the scanner is never imported here).

    .venv/bin/python eval/datasets/careful-attacks/check.py [--benchmarks ../shared/benchmarks]
    .venv/bin/python eval/datasets/careful-attacks/check.py FILE.jsonl ... [--against DIR ...]   # a new batch

With no files: attacks.jsonl and benign.jsonl, and the set's minimums (60 attacks of each of the eight
kinds, 600 benign items). The writers ran it on each batch before the next (``--against`` the batches
written before).

Checks per line: a JSON object with the fields of its kind (attack or benign, told by the "label"
field); the attack kind or the benign domain from the fixed lists; a non-empty description; an
input_schema that is an object of JSON-Schema shape; ids unique across every file given and every file
under --against folders; no two items whose texts are near copies (same normalised text, or 60 % of
their 5-word shingles shared); no run of 9 or more consecutive words copied from a real tool text
(the shared benchmarks' catalogs, the shared poison corpus, the team's earlier poison-paraphrases
set). Prints counts and one line per problem; exits 1 on any problem.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[2].parent / "shared" / "benchmarks"
EARLIER = HERE.parent / "poison-paraphrases" / "corpus.jsonl"
MIN_PER_KIND, MIN_BENIGN = 60, 600
KINDS = (
    "credential-harvesting",
    "orders-about-other-tools",
    "exfiltration",
    "hidden-instructions",
    "parameter-tampering",
    "preference-manipulation",
    "schema-poisoning",
    "shadowing",
)
DOMAINS = ("credentials", "files", "payments", "mail", "other-tools", "shell", "data", "security", "accounts")
WHERE = ("description", "schema", "title", "instructions", "split", "annotations")
TECHNIQUES = ("paraphrase", "indirection", "schema", "split", "language", "plain")
ATTACK_FIELDS = (
    "id",
    "label",
    "kind",
    "server",
    "tool_name",
    "description",
    "input_schema",
    "where",
    "technique",
    "language",
    "notes",
)
BENIGN_FIELDS = ("id", "label", "domain", "server", "tool_name", "description", "input_schema", "why_risky")
OPTIONAL = ("title", "server_instructions", "annotations", "batch", "author")
RUN = 9


def words(text: str) -> list[str]:
    """Words in any script; a run of CJK characters is cut into single characters."""
    out: list[str] = []
    for w in re.findall(r"\w+", text.lower()):
        if re.search(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", w):
            out.extend(w)
        else:
            out.append(w)
    return out


def schema_text(schema: Any) -> str:
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, str) and k in ("description", "title", "default", "const"):
                    out.append(v)
                elif isinstance(v, list) and k == "enum":
                    out.extend(str(x) for x in v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return " ".join(out)


def item_text(row: dict[str, Any]) -> str:
    parts = [
        row.get("title") or "",
        row.get("description") or "",
        schema_text(row.get("input_schema")),
        row.get("server_instructions") or "",
        json.dumps(row.get("annotations") or {}),
    ]
    return " ".join(p for p in parts if p)


@functools.cache
def real_runs(bench: Path) -> set[tuple[str, ...]]:
    texts: list[str] = []
    for name in ("msc_bench_dev", "metatool", "livemcpbench", "toolalpaca", "restbench"):
        path = bench / name / "tools.json"
        if path.exists():
            for tool in json.loads(path.read_text()):
                texts.append(tool.get("description") or "")
                texts.append(schema_text(tool.get("input_schema")))
    for path in (bench / "poison" / "corpus.jsonl", EARLIER):
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    texts.append(row.get("description") or "")
                    texts.append(schema_text(row.get("input_schema")))
    runs: set[tuple[str, ...]] = set()
    for text in texts:
        w = words(text)
        for i in range(len(w) - RUN + 1):
            runs.add(tuple(w[i : i + RUN]))
    return runs


def shingles(text: str) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + 5]) for i in range(max(len(w) - 4, 1))}


Row = tuple[str, int, dict[str, Any], bool]  # (file, line, item, is one of the files checked)


def read_rows(files: list[Path], earlier: list[Path], problems: list[str]) -> list[Row]:
    rows: list[Row] = []
    for path, new in [(p, True) for p in files] + [(p, False) for p in earlier]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{path.name}:{n}: not JSON ({exc})")
                continue
            if not isinstance(row, dict):
                problems.append(f"{path.name}:{n}: not an object")
                continue
            rows.append((path.name, n, row, new))
    return rows


def check_item(row: dict[str, Any], where: str, counts: Counter[str], problems: list[str]) -> None:
    """The item's own fields (format, kind or domain, schema shape)."""
    label = row.get("label")
    need = ATTACK_FIELDS if label == "poisoned" else BENIGN_FIELDS if label == "benign" else None
    if need is None:
        problems.append(f"{where}: label must be 'poisoned' or 'benign'")
        return
    missing = [f for f in need if f not in row]
    extra = [f for f in row if f not in need and f not in OPTIONAL]
    if missing:
        problems.append(f"{where}: missing fields {missing}")
    if extra:
        problems.append(f"{where}: unknown fields {extra}")
    if label == "poisoned":
        for name, allowed in (("kind", KINDS), ("where", WHERE), ("technique", TECHNIQUES)):
            if row.get(name) not in allowed:
                problems.append(f"{where}: {name} {row.get(name)!r} not in {allowed}")
        counts[f"attack {row.get('kind')}"] += 1
    else:
        if row.get("domain") not in DOMAINS:
            problems.append(f"{where}: domain {row.get('domain')!r} not in {DOMAINS}")
        counts[f"benign {row.get('domain')}"] += 1
    if not str(row.get("description") or "").strip():
        problems.append(f"{where}: empty description")
    schema = row.get("input_schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append(f"{where}: input_schema must be a JSON-Schema object with type 'object'")


def check_copies(rows: list[Row], runs: set[tuple[str, ...]], problems: list[str]) -> None:
    """Ids used twice; runs of RUN words copied from a real tool; items that copy another item."""
    ids: Counter[str] = Counter(str(r.get("id")) for _, _, r, _ in rows)
    every = []
    for name, n, row, _ in rows:
        text = item_text(row)
        every.append((f"{name}:{n} ({row.get('id')})", " ".join(words(text)), shingles(text)))
    for (_, _, row, new), (where, norm, sh) in zip(rows, every, strict=True):
        if not new:
            continue
        if ids[str(row.get("id"))] > 1:
            problems.append(f"{where}: id used more than once")
        w = words(item_text(row))
        copied = next(
            (tuple(w[i : i + RUN]) for i in range(len(w) - RUN + 1) if tuple(w[i : i + RUN]) in runs), None
        )
        if copied:
            problems.append(f"{where}: copies a real tool text: '{' '.join(copied)}'")
        for other, onorm, osh in every:
            if other == where:
                continue
            if onorm == norm:
                problems.append(f"{where}: same text as {other}")
                break
            if sh and osh and len(sh & osh) / min(len(sh), len(osh)) >= 0.6:
                problems.append(f"{where}: near copy of {other}")
                break


def check_whole(rows: list[Row], counts: Counter[str], problems: list[str]) -> None:
    for kind in KINDS:
        if counts[f"attack {kind}"] < MIN_PER_KIND:
            problems.append(f"{kind}: {counts[f'attack {kind}']} attacks, fewer than {MIN_PER_KIND}")
    if sum(v for k, v in counts.items() if k.startswith("benign")) < MIN_BENIGN:
        problems.append(f"fewer than {MIN_BENIGN} benign items")
    for name, label in (("attacks.jsonl", "poisoned"), ("benign.jsonl", "benign")):
        wrong = [r.get("id") for n, _, r, _ in rows if n == name and r.get("label") != label]
        if wrong:
            problems.append(f"{name}: items labelled other than {label}: {wrong[:5]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--against", nargs="*", type=Path, default=[], help="folders of earlier batches")
    ap.add_argument("--benchmarks", type=Path, default=BENCH)
    args = ap.parse_args(argv)
    whole = not args.files
    files = [p.resolve() for p in (args.files or [HERE / "attacks.jsonl", HERE / "benign.jsonl"])]
    if not (args.benchmarks / "msc_bench_dev" / "tools.json").is_file():
        print(f"no benchmarks at {args.benchmarks}: pass --benchmarks", file=sys.stderr)
        return 2
    earlier = [p.resolve() for d in args.against for p in sorted(d.rglob("*.jsonl"))]
    problems: list[str] = []
    rows = read_rows(files, [p for p in earlier if p not in files], problems)
    counts: Counter[str] = Counter()
    for name, n, row, new in rows:
        if new:
            check_item(row, f"{name}:{n} ({row.get('id')})", counts, problems)
    check_copies(rows, real_runs(args.benchmarks), problems)
    if whole:
        check_whole(rows, counts, problems)
    for k, v in sorted(counts.items()):
        print(f"{k}: {v}")
    print(f"{sum(1 for r in rows if r[3])} items checked, {len(problems)} problems")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
