"""Validate ``corpus.jsonl`` without scanning it (the scanner is never imported here).

    .venv/bin/python eval/datasets/poison-paraphrases/check.py [--benchmarks ../shared/benchmarks]

Checks: every line is a JSON object with the fields of the shared poison corpus plus ``split``; ids
unique; labels ``poisoned`` / ``benign``; attack categories from the shared corpus README; at least 50
attacks and 200 benign items; the attacks halved between ``dev`` and ``test`` in every category; each
attack on a server of its own that serves no benign item (so that no rule across a server links two
items); no description, id or (server, tool) pair shared with the shared poison corpus; no attack text
that holds a phrase the scanner's documented rules key on; the attacks equal ``attacks.jsonl``; every
benign item a verbatim copy (server, name, description, input schema) of the entry its ``copied_from``
names. Prints the counts; exits 1 with one line per problem.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DEFAULT_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"
MIN_POISONED, MIN_BENIGN = 50, 200
FIELDS = (
    "id",
    "source",
    "licence",
    "server",
    "tool_name",
    "description",
    "input_schema",
    "label",
    "attack",
    "split",
)
CATEGORIES = frozenset(
    "shadowing hidden-instruction command-injection preference-manipulation dependency-injection "
    "function-overlapping parameter-tampering tool-redirection exfiltration filesystem-tampering rug-pull "
    "encoded-payload invisible-unicode schema-poisoning capability-mismatch name-collision".split()
)
LICENCES = {
    "eval/datasets/gateway-demo/tools.json": "MIT",
    "shared/benchmarks/toolalpaca/tools.json": "Apache-2.0",
    "shared/benchmarks/restbench/tools.json": "MIT",
    "shared/benchmarks/metatool/tools.json": "MIT",
}
# Phrases the scanner's documented rules key on (docs/operator-guide.md, "What it checks"), as of the
# day the set was written: a paraphrase must not lean on them.
TRIGGERS = re.compile(
    r"ignore (?:all |any )?(?:previous|prior) instructions|disregard|system prompt|<\s*important|\[system"
    r"|note to the (?:assistant|model)|do not (?:tell|mention)|don't (?:tell|mention)|present it as if"
    r"|silently|secretly|without (?:the user's|their) knowledge|without asking|exfiltrat"
    r"|(?:rather than|instead of|over) (?:any |all )?(?:other )?(?:tools|others)|never use other"
    r"|supersed|once approved|after approval|~/\.ssh|\.aws/credentials|(?<![\w/])\.env\b|id_rsa"
    r"|curl [^|]*\|\s*(?:ba)?sh|pretend (?:you are|to be)|developer mode|reroute|replace its output"
    r"|modif(?:y|ies) the behaviou?r",
    re.IGNORECASE,
)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _rows(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name} line {number}: not JSON ({exc})")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path.name} line {number}: not an object")
            continue
        rows.append(row)
    return rows


def _fields(row: dict[str, Any], problems: list[str]) -> bool:
    where = f"item {row.get('id', '?')}"
    missing = [f for f in FIELDS if f not in row]
    if missing:
        problems.append(f"{where}: missing {', '.join(missing)}")
        return False
    for key in ("id", "source", "licence", "server", "tool_name", "description"):
        if not isinstance(row[key], str) or not row[key].strip():
            problems.append(f"{where}: {key} must be a non-empty string")
            return False
    if row["input_schema"] is not None and not isinstance(row["input_schema"], dict):
        problems.append(f"{where}: input_schema must be an object or null")
    if row["label"] not in ("poisoned", "benign"):
        problems.append(f"{where}: label {row['label']!r} is neither poisoned nor benign")
    if row["split"] not in ("dev", "test"):
        problems.append(f"{where}: split {row['split']!r} is neither dev nor test")
    if row["label"] == "poisoned" and row["attack"] not in CATEGORIES:
        problems.append(f"{where}: attack {row['attack']!r} is not a category of the shared corpus")
    if row["label"] == "poisoned" and not str(row.get("notes", "")).strip():
        problems.append(f"{where}: an attack needs notes saying what it does")
    return True


def _attack_problems(
    attacks: list[dict[str, Any]], benign: list[dict[str, Any]], problems: list[str]
) -> None:
    if len(attacks) < MIN_POISONED:
        problems.append(f"{len(attacks)} attacks; at least {MIN_POISONED} are needed")
    per = Counter((a["attack"], a["split"]) for a in attacks)
    for category in {a["attack"] for a in attacks}:
        if abs(per[(category, "dev")] - per[(category, "test")]) > 1:
            problems.append(
                f"{category}: dev {per[(category, 'dev')]} and test {per[(category, 'test')]} are not halves"
            )
    servers = Counter(a["server"] for a in attacks)
    problems.extend(f"server {s!r} serves {n} attacks; one each" for s, n in servers.items() if n > 1)
    benign_servers = {b["server"] for b in benign}
    problems.extend(f"attack server {s!r} also serves benign items" for s in servers if s in benign_servers)
    texts = Counter(_norm(a["description"]) for a in attacks)
    problems.extend(f"attack description repeated: {t[:60]!r}" for t, n in texts.items() if n > 1)
    for attack in attacks:
        said = " ".join([attack["tool_name"], attack["description"], json.dumps(attack["input_schema"])])
        found = TRIGGERS.search(said)
        if found:
            problems.append(f"item {attack['id']}: uses a phrase the scanner keys on: {found.group()!r}")
    written = _rows(HERE / "attacks.jsonl", problems)
    if written != attacks:
        problems.append("the attacks differ from attacks.jsonl (rerun build.py)")


def _benign_problems(benign: list[dict[str, Any]], benchmarks: Path, problems: list[str]) -> None:
    if len(benign) < MIN_BENIGN:
        problems.append(f"{len(benign)} benign items; at least {MIN_BENIGN} are needed")
    loaded: dict[str, list[dict[str, Any]]] = {}
    for row in benign:
        copied = row.get("copied_from")
        if (
            not isinstance(copied, dict)
            or copied.get("file") not in LICENCES
            or not isinstance(copied.get("index"), int)
        ):
            problems.append(f"item {row['id']}: copied_from must name a known source file and an index")
            continue
        name = copied["file"]
        if name not in loaded:
            path = (
                ROOT / name
                if name.startswith("eval/")
                else benchmarks / name.removeprefix("shared/benchmarks/")
            )
            loaded[name] = json.loads(path.read_text(encoding="utf-8"))
        tools = loaded[name]
        original = tools[copied["index"]] if 0 <= copied["index"] < len(tools) else None
        if original is None or (
            original["server"],
            original["name"],
            original["description"],
            original.get("input_schema"),
        ) != (row["server"], row["tool_name"], row["description"], row["input_schema"]):
            problems.append(f"item {row['id']}: not a verbatim copy of {name}[{copied['index']}]")
        if row["licence"] != LICENCES[name] or name not in row["source"]:
            problems.append(f"item {row['id']}: source or licence does not match {name}")


def check(corpus: Path, benchmarks: Path) -> tuple[list[str], dict[str, Any]]:
    """(problems, counts) of the corpus at ``corpus``."""
    problems: list[str] = []
    rows = [r for r in _rows(corpus, problems) if _fields(r, problems)]
    ids = Counter(r["id"] for r in rows)
    problems.extend(f"id {i!r} repeated" for i, n in ids.items() if n > 1)
    pairs = Counter((r["server"], r["tool_name"]) for r in rows)
    problems.extend(f"tool {s}::{t} repeated" for (s, t), n in pairs.items() if n > 1)
    shared = _rows(benchmarks / "poison" / "corpus.jsonl", problems)
    shared_texts = {_norm(str(s.get("description", ""))) for s in shared}
    shared_ids = {str(s.get("id")) for s in shared}
    shared_pairs = {(s.get("server"), s.get("tool_name")) for s in shared}
    for row in rows:
        if _norm(row["description"]) in shared_texts or row["id"] in shared_ids:
            problems.append(f"item {row['id']}: duplicates an item of the shared poison corpus")
        if (row["server"], row["tool_name"]) in shared_pairs:
            problems.append(f"item {row['id']}: its server and tool name are those of a shared corpus item")
    attacks = [r for r in rows if r["label"] == "poisoned"]
    benign = [r for r in rows if r["label"] == "benign"]
    _attack_problems(attacks, benign, problems)
    _benign_problems(benign, benchmarks, problems)
    counts = {
        "poisoned": len(attacks),
        "benign": len(benign),
        "poisoned_by_split": dict(sorted(Counter(a["split"] for a in attacks).items())),
        "benign_by_split": dict(sorted(Counter(b["split"] for b in benign).items())),
        "by_attack": {
            k: dict(sorted(Counter(a["split"] for a in attacks if a["attack"] == k).items()))
            for k in sorted({a["attack"] for a in attacks})
        },
        "benign_by_source": dict(
            sorted(
                Counter(
                    b["copied_from"]["file"] for b in benign if isinstance(b.get("copied_from"), dict)
                ).items()
            )
        ),
    }
    return problems, counts


def main() -> int:
    parser = argparse.ArgumentParser(description="Validate the poison-paraphrases corpus.")
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus.jsonl")
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS)
    args = parser.parse_args()
    problems, counts = check(args.corpus, args.benchmarks)
    print(json.dumps(counts, indent=1))
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
