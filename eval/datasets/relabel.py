"""A second labeller for team-written requests: draw a blind sample, then print where the two disagree.

    .venv/bin/python eval/datasets/relabel.py sample ROOT FILE --per-setup 10 --seed 1 --out SAMPLE.jsonl
    .venv/bin/python eval/datasets/relabel.py compare ROOT FILE LABELS.jsonl

Standard library only; it never runs the product. ``ROOT`` holds setup folders (each with servers.json,
tools.json and FILE, a jsonl of labelled requests), or is itself one dataset folder holding FILE.
``sample`` writes, for a stratified sample of each setup's lines (by ``expected_tier``), only what the
second labeller may see: ``id``, ``setup`` and the ``query`` text — never the labels, never the request
it was written from. The second labeller reads the setup's tools.json and writes LABELS.jsonl: one
object per sampled line with ``id``, ``expected_tier`` (activated / multiple_matches / not_found) and
``gold_servers`` (the servers that can do it; empty for not_found). ``compare`` prints the agreement on
the tier and on the servers, and every disagreement with both labels, and exits 0 (a disagreement is a
finding to read, not a failure).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]


def setups(root: Path, file: str) -> dict[str, list[dict[str, Any]]]:
    if (root / file).is_file():  # one dataset folder, not a root of setups
        return {root.name: read_lines(root / file)}
    found = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and (p / "servers.json").is_file()):
        if (folder / file).is_file():
            found[folder.name] = read_lines(folder / file)
    return found


def sample(root: Path, file: str, per_setup: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    drawn: list[dict[str, str]] = []
    for setup, rows in setups(root, file).items():
        by_tier: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_tier[str(row.get("expected_tier"))].append(row)
        share = {tier: max(1, round(per_setup * len(items) / len(rows))) for tier, items in by_tier.items()}
        for tier, items in sorted(by_tier.items()):
            for row in rng.sample(items, min(share[tier], len(items))):
                drawn.append({"id": row["id"], "setup": setup, "query": row["query"]})
    rng.shuffle(drawn)
    return drawn


def compare(root: Path, file: str, labels_path: Path) -> int:
    gold = {row["id"]: row for rows in setups(root, file).values() for row in rows}
    labels = read_lines(labels_path)
    tier_same = servers_same = 0
    disagreements = []
    for label in labels:
        row = gold.get(label["id"])
        if row is None:
            print(f"{label['id']}: no such line in {file}")
            continue
        same_tier = label.get("expected_tier") == row.get("expected_tier")
        same_servers = sorted(label.get("gold_servers") or []) == sorted(row.get("gold_servers") or [])
        tier_same += same_tier
        servers_same += same_servers
        if not (same_tier and same_servers):
            disagreements.append(
                f"{row['id']}: {row['query']!r}\n"
                f"    first:  {row.get('expected_tier')} {row.get('gold_servers')}\n"
                f"    second: {label.get('expected_tier')} {label.get('gold_servers')}"
                + (f"\n    why:    {label['why']}" if label.get("why") else "")
            )
    n = len(labels)
    print(f"relabelled {n} lines of {file}")
    print(f"tier agreement     {tier_same}/{n} = {tier_same / max(n, 1):.3f}")
    print(f"servers agreement  {servers_same}/{n} = {servers_same / max(n, 1):.3f}")
    if disagreements:
        print(f"\n{len(disagreements)} disagreements:")
        print("\n".join(disagreements))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("sample")
    s.add_argument("root", type=Path)
    s.add_argument("file")
    s.add_argument("--per-setup", type=int, default=10)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", type=Path, required=True)
    c = commands.add_parser("compare")
    c.add_argument("root", type=Path)
    c.add_argument("file")
    c.add_argument("labels", type=Path)
    args = parser.parse_args(argv)
    if args.command == "sample":
        drawn = sample(args.root, args.file, args.per_setup, args.seed)
        args.out.write_text(
            "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in drawn), encoding="utf-8"
        )
        print(f"{len(drawn)} lines written to {args.out}")
        return 0
    return compare(args.root, args.file, args.labels)


if __name__ == "__main__":
    sys.exit(main())
