"""Check the agent's phrasings of the personal-setups requests (``<setup>/queries-agent.jsonl``).

    .venv/bin/python eval/datasets/personal-setups/check_agent.py [--root DIR]

Standard library only; it reads the setup folders and nothing else (it never runs the product).
Each line is what an agent passes to ``resolve_intent(query=...)`` for the person's request of the same
position in ``queries.jsonl``: the capability needed, action and object, in the agent's words. For every
setup folder under the root (a folder holding servers.json), it checks that ``queries-agent.jsonl`` has:

- exactly as many lines as ``queries.jsonl``;
- at each position, ``rephrases`` equal to the original's id and ``id`` equal to that id + ``-a``;
- ``phrasing`` equal to ``agent``;
- every other field (gold_servers, gold_tools, gold_tool_groups, category, expected_tier, ambiguous,
  kind, style, ...) equal to the original's, and no field missing or added except ``rephrases`` and
  ``phrasing`` (the labels are the original's: the same need);
- a non-empty ``query`` of 2 to 16 words that differs from the original;
- no run of 5 consecutive word tokens shared with any tool description of the setup (tools.json;
  tokens: ``re.findall(r"[a-z0-9']+", text.lower())``): an agent's words, not the catalog's;
- no multi-part tool name of the setup in the text (``git_add``, ``npmSize``, ``list-issues``); one-word
  names (``fetch``, ``search``) are common verbs an agent uses and are allowed;
- no agent phrasing twice in the whole set, and none equal to any original request.

Prints a table per setup (lines, checked, failures, with arguments: lines carrying a concrete argument by
the rule of ``check_rephrased.py``); exits 1 listing each failure with id and reason.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ORIGINAL = "queries.jsonl"
AGENT = "queries-agent.jsonl"
OWN_FIELDS = {"id", "query", "rephrases", "phrasing"}
COPY_WITH_TOOL = 5  # consecutive tokens shared with a tool description that count as copying it
MIN_WORDS, MAX_WORDS = 2, 16

TOKEN = re.compile(r"[a-z0-9']+")
CONCRETE = re.compile(r"\d|https?://|www\.|\S/\S|@|\"[^\"]+\"|“[^”]+”|(?:^|[\s(])'[^']+'(?=$|[\s.,;:!?)])")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]


def multipart_name_hit(query: str, names: list[str]) -> str | None:
    low = query.lower()
    for name in names:
        if re.fullmatch(r"[a-z0-9]+", name):  # one word: a verb an agent may use
            continue
        if re.search(r"(?<![a-z0-9])" + re.escape(name.lower()) + r"(?![a-z0-9])", low):
            return name
    return None


def description_grams(tools: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    grams: set[tuple[str, ...]] = set()
    for tool in tools:
        grams |= ngrams(tokens(tool.get("description") or ""), COPY_WITH_TOOL)
    return grams


def label_problems(orig: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Why the line's id, phrasing and labels are not its original's (the same need)."""
    reasons = []
    if row.get("rephrases") != orig["id"]:
        reasons.append(f"rephrases {row.get('rephrases')!r} is not the original id {orig['id']!r}")
    if row.get("id") != orig["id"] + "-a":
        reasons.append(f"id {row.get('id')!r} is not {orig['id'] + '-a'!r}")
    if row.get("phrasing") != "agent":
        reasons.append("phrasing is not 'agent'")
    for key in sorted((set(orig) | set(row)) - OWN_FIELDS):
        if key not in row:
            reasons.append(f"field {key!r} missing")
        elif key not in orig:
            reasons.append(f"field {key!r} not in the original")
        elif row[key] != orig[key]:
            reasons.append(f"field {key!r} differs from the original ({row[key]!r} != {orig[key]!r})")
    return reasons


def text_problems(query: str, original: str, grams: set[tuple[str, ...]], names: list[str]) -> list[str]:
    """Why the agent's text is not its own words: its length, the original's text, a tool's words or name."""
    reasons = []
    words = len(query.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        reasons.append(f"{words} words (an agent's query has {MIN_WORDS} to {MAX_WORDS})")
    if " ".join(query.lower().split()) == " ".join(original.lower().split()):
        reasons.append("query is the original text")
    copied = ngrams(tokens(query), COPY_WITH_TOOL) & grams
    if copied:
        run = " ".join(sorted(copied)[0])
        reasons.append(f"shares {COPY_WITH_TOOL} words in a row with a tool description: {run!r}")
    hit = multipart_name_hit(query, names)
    if hit:
        reasons.append(f"names the tool {hit!r}")
    return reasons


def check_setup(folder: Path, seen: dict[str, str], originals: set[str]) -> tuple[int, int, int, list[str]]:
    """(lines, checked, with arguments, failures) of one setup."""
    failures: list[str] = []
    path = folder / AGENT
    if not path.is_file():
        return 0, 0, 0, [f"{folder.name}: {AGENT} is missing"]
    originals_rows = read_lines(folder / ORIGINAL)
    rows = read_lines(path)
    if len(rows) != len(originals_rows):
        failures.append(f"{folder.name}: {len(rows)} lines, {ORIGINAL} has {len(originals_rows)}")
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    names = sorted({t["name"] for t in tools})
    grams = description_grams(tools)
    checked = with_args = 0
    for position, (orig, row) in enumerate(zip(originals_rows, rows, strict=False), start=1):
        checked += 1
        where = str(row.get("id", f"{folder.name} line {position}"))
        reasons = label_problems(orig, row)
        query = row.get("query")
        if not isinstance(query, str) or not query.strip():
            reasons.append("query is empty")
        else:
            reasons += text_problems(query, orig["query"], grams, names)
            key = " ".join(query.lower().split())
            if key in seen:
                reasons.append(f"same text as {seen[key]}")
            seen[key] = where
            if key in originals:
                reasons.append("same text as an original request")
            with_args += bool(CONCRETE.search(query))
        failures += [f"{where}: {reason}" for reason in reasons]
    return len(rows), checked, with_args, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="folder holding the setup folders")
    args = parser.parse_args(argv)
    folders = sorted(p for p in args.root.iterdir() if p.is_dir() and (p / "servers.json").is_file())
    if not folders:
        print(f"no setup folders under {args.root}")
        return 1
    originals = {
        " ".join(row["query"].lower().split()) for folder in folders for row in read_lines(folder / ORIGINAL)
    }
    seen: dict[str, str] = {}
    table, problems = [], []
    for folder in folders:
        lines, checked, with_args, failures = check_setup(folder, seen, originals)
        table.append((folder.name, lines, checked, with_args, len(failures)))
        problems.extend(failures)
    print("| setup | lines | checked | with arguments | failures |")
    print("|---|---|---|---|---|")
    for name, lines, checked, with_args, failed in table:
        print(f"| {name} | {lines} | {checked} | {with_args} | {failed} |")
    total = [sum(col) for col in zip(*(row[1:] for row in table), strict=True)]
    print(f"| all | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    if problems:
        print()
        for problem in problems:
            print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
