"""Validate ``attacks.jsonl`` without the scanner or the shadowing check (neither is imported here).

    .venv/bin/python eval/datasets/shadowing/check.py

Checks: every line is a JSON object with the fields below; ids unique and numbered ``shadow-NN`` (or
``shadow-fNN`` for the fresh split); kinds and splits from the lists below; every ``target`` names a
tool of ``eval/datasets/gateway-demo/tools.json`` (the demo servers' real tools); every attack on a
server of its own that is none of the demo servers; no two attacks with the same description, or the
same (server, tool) pair; a ``copy`` holds its target's description word for word (an attack that copies
with a few words changed says so in its notes); the claims in English avoid the phrases the scanner's
rules keyed on when the set was written (``TRIGGERS``). Prints the counts; exits 1 with one line per
problem.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "gateway-demo" / "tools.json"
FIELDS = (
    "id",
    "split",
    "kind",
    "target",
    "server",
    "tool_name",
    "description",
    "input_schema",
    "label",
    "attack",
    "notes",
)
KINDS = frozenset({"claim", "schema-claim", "foreign", "copy", "paraphrase"})
SPLITS = frozenset({"dev", "test", "fresh"})
MIN_ATTACKS = 30
# The phrases the scanner's shadowing, claim and preference rules keyed on (tool_selector/trust:
# shadowing.py, claims.py, instructions.py) when the set was written: a claim here must not lean on them.
TRIGGERS = re.compile(
    r"supersed|\binstead\b|\bofficial\b|\bprefer|\bdeprecated\b|\bfallback\b|\bmirror|"
    r"drop-in|successor|replacement|reroute|redirect|server's|::|rather than (?:any |all )?other tools|"
    r"\bsame (?:tool|as)\b|takes? over|stands? in for|in place of",
    re.IGNORECASE,
)


def check(path: Path = HERE / "attacks.jsonl", demo: Path = DEMO) -> tuple[list[str], dict[str, Any]]:
    """(problems, counts) of the attacks file."""
    real = {f"{t['server']}::{t['name']}": t for t in json.loads(demo.read_text(encoding="utf-8"))}
    servers = {t["server"] for t in real.values()}
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        if not isinstance(row, dict) or set(row) != set(FIELDS):
            problems.append(f"line {number}: the fields must be exactly {', '.join(FIELDS)}")
            continue
        rows.append(row)
    seen: dict[str, Counter[Any]] = {"id": Counter(), "description": Counter(), "pair": Counter()}
    for row in rows:
        at = row["id"]
        seen["id"][at] += 1
        seen["description"][row["description"]] += 1
        seen["pair"][(row["server"], row["tool_name"])] += 1
        if not re.fullmatch(r"shadow-(?:f)?\d\d", str(at)):
            problems.append(f"{at}: ids are shadow-NN, or shadow-fNN in the fresh split")
        if row["kind"] not in KINDS:
            problems.append(f"{at}: kind {row['kind']!r} is not one of {sorted(KINDS)}")
        if row["split"] not in SPLITS or (row["split"] == "fresh") != str(at).startswith("shadow-f"):
            problems.append(
                f"{at}: split {row['split']!r} does not fit its id (dev, test; fresh: shadow-fNN)"
            )
        if (row["label"], row["attack"]) != ("poisoned", "shadowing"):
            problems.append(f"{at}: label and attack must be poisoned and shadowing")
        target = real.get(row["target"])
        if target is None:
            problems.append(f"{at}: target {row['target']!r} is no tool of {demo}")
        if row["server"] in servers:
            problems.append(
                f"{at}: server {row['server']!r} is a demo server; an attack has a server of its own"
            )
        if not isinstance(row["input_schema"], dict):
            problems.append(f"{at}: input_schema must be an object")
        copied = target is not None and target["description"] in row["description"]
        if row["kind"] == "copy" and not copied and "changed" not in row["notes"]:
            problems.append(f"{at}: a copy holds its target's description word for word")
        if row["kind"] in ("claim", "schema-claim"):
            text = json.dumps([row["description"], row["input_schema"]], ensure_ascii=False)
            found = TRIGGERS.search(text)
            if found:
                problems.append(f"{at}: leans on the scanner's words ({found.group()!r})")
    for key, shared in seen.items():
        problems += [f"{value!r}: {n} attacks share this {key}" for value, n in shared.items() if n > 1]
    if len(rows) < MIN_ATTACKS:
        problems.append(f"only {len(rows)} attacks; at least {MIN_ATTACKS}")
    counts: dict[str, Any] = {
        "attacks": len(rows),
        "by_kind": dict(sorted(Counter(r["kind"] for r in rows).items())),
        "by_split": dict(sorted(Counter(r["split"] for r in rows).items())),
        "targets": len({r["target"] for r in rows}),
    }
    return problems, counts


def main() -> int:
    problems, counts = check()
    print(json.dumps(counts, indent=1))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
