"""Build the personal-setups dataset: six people's own MCP setups and the requests they type.

    .venv/bin/python eval/datasets/personal-setups/build.py [--benchmarks ../shared/benchmarks] [--out DIR]

Writes, for each setup of ``setups.py``, ``<setup>/servers.json`` and ``<setup>/tools.json`` (each chosen
server's catalog entry and all its tools, copied verbatim from the catalog it names, plus a ``source`` key
on the server entry) and ``<setup>/queries.jsonl`` (the team's hand-written requests and labels). The
requests and labels live in ``setups.py``; this script only turns them into the benchmark format. It
never reads any benchmark's queries, only the servers.json and tools.json catalogs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DEFAULT_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"


def load_setups() -> dict[str, dict[str, Any]]:
    """The SETUPS of ``setups.py`` beside this script (the hand-written data)."""
    spec = importlib.util.spec_from_file_location("personal_setups_data", HERE / "setups.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setups: dict[str, dict[str, Any]] = module.SETUPS
    return setups


TIER = {"plain": "activated", "unanswerable": "not_found", "ambiguous": "multiple_matches"}
KIND = {"e": "everyday", "n": "near-domain"}

# A concrete argument: a digit, a URL, a slash path, an e-mail/handle, or a quoted span.
CONCRETE = re.compile(r"\d|https?://|www\.|\S/\S|@|\"[^\"]+\"|“[^”]+”|(?:^|[\s(])'[^']+'(?=$|[\s.,;:!?)])")


def catalog_dirs(benchmarks: Path) -> dict[str, Path]:
    """The three catalogs a setup may take servers from, by the name written in ``source``."""
    return {
        "msc_bench_dev": benchmarks / "msc_bench_dev",
        "livemcpbench": benchmarks / "livemcpbench",
        "gateway-demo": ROOT / "eval" / "datasets" / "gateway-demo",
    }


def load_catalog(folder: Path) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    servers = json.loads((folder / "servers.json").read_text(encoding="utf-8"))
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    by_server: dict[str, list[dict[str, Any]]] = {}
    for tool in tools:
        by_server.setdefault(tool["server"], []).append(tool)
    return {s["name"]: s for s in servers}, by_server


def style_of(text: str, typo: bool) -> str:
    if typo:
        return "typo"
    if CONCRETE.search(text):
        return "args"
    return "terse" if len(text.split()) <= 7 else "chatty"


def build_setup(name: str, spec: dict[str, Any], catalogs: dict[str, Path], root: Path = HERE) -> None:
    alias: dict[str, tuple[str, str]] = spec["servers"]
    loaded = {src: load_catalog(path) for src, path in catalogs.items()}
    servers_out: list[dict[str, Any]] = []
    tools_out: list[dict[str, Any]] = []
    tool_ids: set[str] = set()
    for source, server in alias.values():
        entries, tools = loaded[source]
        entry = dict(entries[server])
        entry["source"] = source
        servers_out.append(entry)
        for tool in tools.get(server, []):
            tools_out.append(dict(tool))
            tool_ids.add(f"{server}::{tool['name']}")

    def tool_id(ref: str) -> str:
        short, _, tool = ref.partition("/")
        server = alias[short][1]
        full = f"{server}::{tool}"
        if full not in tool_ids:
            raise SystemExit(f"{name}: {ref} ({full}) is not a tool of the setup")
        return full

    lines: list[dict[str, Any]] = []
    for number, item in enumerate(spec["queries"], start=1):
        category, text, rest = item[0], item[1], item[2:]
        typo = text.startswith("~")
        text = text.lstrip("~")
        line: dict[str, Any] = {"id": f"{name}-{number:03d}", "query": text}
        if category == "u":
            groups: list[list[str]] = []
        else:
            groups = [[tool_id(ref) for ref in slot.split("|")] for slot in rest]
        gold_tools = sorted({t for slot in groups for t in slot})
        line["gold_servers"] = sorted({t.rsplit("::", 1)[0] for t in gold_tools})
        line["gold_tools"] = gold_tools
        line["gold_tool_groups"] = groups
        cat = {"p": "plain", "u": "unanswerable", "a": "ambiguous"}[category]
        line["category"] = cat
        line["expected_tier"] = TIER[cat]
        if cat == "ambiguous":
            line["ambiguous"] = True
        if cat == "unanswerable":
            line["kind"] = KIND[rest[0]]
        line["style"] = style_of(text, typo)
        lines.append(line)

    out = root / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "servers.json").write_text(json.dumps(servers_out, indent=2, ensure_ascii=False) + "\n", "utf-8")
    (out / "tools.json").write_text(json.dumps(tools_out, indent=2, ensure_ascii=False) + "\n", "utf-8")
    (out / "queries.jsonl").write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), "utf-8"
    )
    print(f"{name}: {len(servers_out)} servers, {len(tools_out)} tools, {len(lines)} requests")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS)
    parser.add_argument("--out", type=Path, default=HERE, help="where to write the setup folders")
    args = parser.parse_args(argv)
    catalogs = catalog_dirs(args.benchmarks)
    for name, spec in load_setups().items():
        build_setup(name, spec, catalogs, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
