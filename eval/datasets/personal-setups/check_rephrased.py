"""Check the second phrasings of the personal-setups requests (``<setup>/queries-rephrased.jsonl``).

    .venv/bin/python eval/datasets/personal-setups/check_rephrased.py [--root DIR]

Standard library only; it reads the setup folders and nothing else (it never runs the product).
For every setup folder under the root (a folder holding servers.json), it checks that
``queries-rephrased.jsonl`` has:

- exactly as many lines as ``queries.jsonl``;
- at each position, ``rephrases`` equal to the original's id and ``id`` equal to that id + ``-r``;
- every other field (gold_servers, gold_tools, gold_tool_groups, category, expected_tier, ambiguous,
  kind, style, ...) equal to the original's, and no field missing or added except ``rephrases``;
- a non-empty ``query`` that differs from the original;
- no run of 4 consecutive word tokens shared with the original (tokens:
  ``re.findall(r"[a-z0-9']+", text.lower())``, arguments included);
- no run of 8 consecutive word tokens shared with any tool description of the setup (tools.json);
- where the original contains a digit, a set of digit-containing tokens different from the original's
  (the concrete arguments were changed).

And, to keep the copied labels honest:

- no tool name of the setup in the text (a multi-part name such as ``git_add`` or ``npmSize`` as a
  substring, a one-word name such as ``fetch`` or ``search`` as a whole token);
- ``style`` still true of the new text by the rule of ``build.py`` (``args`` when it carries a concrete
  argument, else ``terse`` up to 7 words, else ``chatty``); ``typo`` lines are not machine-checked;
- no rephrased text twice in the whole set, and none equal to any original request.

Prints a table per setup (lines, checked, failures); exits 1 listing each failure with id and reason.
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
REPHRASED = "queries-rephrased.jsonl"
OWN_FIELDS = {"id", "query", "rephrases"}
COPY_WITH_ORIGINAL = 4  # consecutive tokens shared with the original request that count as copying it
COPY_WITH_TOOL = 8  # consecutive tokens shared with a tool description that count as copying it

TOKEN = re.compile(r"[a-z0-9']+")
# build.py's rule for a concrete argument: a digit, a URL, a slash path, an e-mail/handle, a quoted span.
CONCRETE = re.compile(r"\d|https?://|www\.|\S/\S|@|\"[^\"]+\"|“[^”]+”|(?:^|[\s(])'[^']+'(?=$|[\s.,;:!?)])")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def digit_tokens(text: str) -> set[str]:
    return {w for w in tokens(text) if any(c.isdigit() for c in w)}


def style_of(text: str) -> str:
    if CONCRETE.search(text):
        return "args"
    return "terse" if len(text.split()) <= 7 else "chatty"


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]


def tool_name_hit(query: str, names: list[str]) -> str | None:
    low = query.lower()
    words = set(tokens(query))
    for name in names:
        lname = name.lower()
        if re.fullmatch(r"[a-z0-9]+", name):  # a one-word name: a whole token
            if lname in words:
                return name
        elif re.search(r"(?<![a-z0-9])" + re.escape(lname) + r"(?![a-z0-9])", low):
            return name
    return None


def check_setup(  # noqa: PLR0915 (one check after another, in the order REPHRASED.md lists them)
    folder: Path, seen: dict[str, str], originals: set[str]
) -> tuple[int, int, list[str]]:
    """(lines, checked, failures) of one setup."""
    failures: list[str] = []
    original_path, rephrased_path = folder / ORIGINAL, folder / REPHRASED
    if not rephrased_path.is_file():
        return 0, 0, [f"{folder.name}: {REPHRASED} is missing"]
    originals_rows = read_lines(original_path)
    rows = read_lines(rephrased_path)
    if len(rows) != len(originals_rows):
        failures.append(f"{folder.name}: {len(rows)} lines, {ORIGINAL} has {len(originals_rows)}")
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    names = sorted({t["name"] for t in tools})
    description_grams: set[tuple[str, ...]] = set()
    for tool in tools:
        description_grams |= ngrams(tokens(tool.get("description") or ""), COPY_WITH_TOOL)

    checked = 0
    for position, (orig, row) in enumerate(zip(originals_rows, rows, strict=False), start=1):
        checked += 1
        rid = row.get("id", f"{folder.name} line {position}")
        where = f"{rid}"

        def fail(reason: str, where: str = where) -> None:
            failures.append(f"{where}: {reason}")

        if row.get("rephrases") != orig["id"]:
            fail(
                f"rephrases {row.get('rephrases')!r} is not the original id {orig['id']!r} at line {position}"
            )
        if row.get("id") != orig["id"] + "-r":
            fail(f"id {row.get('id')!r} is not {orig['id'] + '-r'!r}")
        for key in sorted((set(orig) | set(row)) - OWN_FIELDS):
            if key not in row:
                fail(f"field {key!r} missing")
            elif key not in orig:
                fail(f"field {key!r} not in the original")
            elif row[key] != orig[key]:
                fail(f"field {key!r} differs from the original ({row[key]!r} != {orig[key]!r})")

        query = row.get("query")
        if not isinstance(query, str) or not query.strip():
            fail("query is empty")
            continue
        if " ".join(query.lower().split()) == " ".join(orig["query"].lower().split()):
            fail("query is the original text")
        shared = ngrams(tokens(query), COPY_WITH_ORIGINAL) & ngrams(tokens(orig["query"]), COPY_WITH_ORIGINAL)
        if shared:
            fail(
                f"shares {COPY_WITH_ORIGINAL} words in a row with the original: "
                f"{' '.join(sorted(shared)[0])!r}"
            )
        copied = ngrams(tokens(query), COPY_WITH_TOOL) & description_grams
        if copied:
            fail(
                f"shares {COPY_WITH_TOOL} words in a row with a tool description: "
                f"{' '.join(sorted(copied)[0])!r}"
            )
        if re.search(r"\d", orig["query"]) and digit_tokens(query) == digit_tokens(orig["query"]):
            fail(f"same digit-bearing arguments as the original: {sorted(digit_tokens(query))}")
        hit = tool_name_hit(query, names)
        if hit:
            fail(f"names the tool {hit!r}")
        style = orig.get("style")
        if style in {"args", "terse", "chatty"} and style_of(query) != style:
            fail(f"style {style!r} no longer true of the text (it reads as {style_of(query)!r})")
        key = " ".join(query.lower().split())
        if key in seen:
            fail(f"same text as {seen[key]}")
        seen[key] = rid
        if key in originals:
            fail("same text as an original request")
    return len(rows), checked, failures


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
        lines, checked, failures = check_setup(folder, seen, originals)
        table.append((folder.name, lines, checked, len(failures)))
        problems.extend(failures)
    print("| setup | lines | checked | failures |")
    print("|---|---|---|---|")
    for name, lines, checked, failed in table:
        print(f"| {name} | {lines} | {checked} | {failed} |")
    total = [sum(col) for col in zip(*(row[1:] for row in table), strict=True)]
    print(f"| all | {total[0]} | {total[1]} | {total[2]} |")
    if problems:
        print()
        for problem in problems:
            print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
