"""Build ``corpus.jsonl``: the hand-written attacks of ``attacks.jsonl`` and real benign tool definitions
copied verbatim from named sources (see README.md).

    .venv/bin/python eval/datasets/poison-paraphrases/build.py [--benchmarks ../shared/benchmarks]

Standard library only; the output is the same on every run. ``check.py`` validates the result.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DEFAULT_BENCHMARKS = ROOT.parent / "shared" / "benchmarks"

# (short name, file relative to the repository root or the benchmarks folder, licence, provenance)
SOURCES: tuple[tuple[str, str, str, str], ...] = (
    (
        "demo",
        "eval/datasets/gateway-demo/tools.json",
        "MIT",
        "the 7 real demo MCP servers, listed live (mcp-server-time/-git 2026.10.19, "
        "mcp-server-fetch 2026.10.24 "
        "from PyPI; @modelcontextprotocol/server-everything/-filesystem/-memory/-sequential-thinking "
        "2026.8.31 "
        "from npm)",
    ),
    ("toolalpaca", "toolalpaca/tools.json", "Apache-2.0", "tangqiaoyu/ToolAlpaca@1890699 eval sets"),
    ("restbench", "restbench/tools.json", "MIT", "Yifan-Song793/RestGPT@d990128 TMDB and Spotify specs"),
    ("metatool", "metatool/tools.json", "MIT", "HowieHwong/MetaTool@35e81bb ChatGPT plugins"),
)


def source_file(relative: str, benchmarks: Path) -> Path:
    return ROOT / relative if relative.startswith("eval/") else benchmarks / relative


def source_label(relative: str) -> str:
    """The path written into each item: repository-relative, or under ``shared/benchmarks``."""
    return relative if relative.startswith("eval/") else f"shared/benchmarks/{relative}"


def benign_rows(benchmarks: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for short, relative, licence, provenance in SOURCES:
        tools = json.loads(source_file(relative, benchmarks).read_text(encoding="utf-8"))
        for index, tool in enumerate(tools):
            if not tool["description"].strip():
                continue  # one ToolAlpaca function has none: not a description to judge
            rows.append(
                {
                    "id": f"pb-{short}-{index + 1:03d}",
                    "source": f"{provenance}: {source_label(relative)}[{index}]",
                    "licence": licence,
                    "server": tool["server"],
                    "tool_name": tool["name"],
                    "description": tool["description"],
                    "input_schema": tool.get("input_schema"),
                    "label": "benign",
                    "attack": "",
                    "split": "dev" if index % 2 == 0 else "test",
                    "copied_from": {"file": source_label(relative), "index": index},
                }
            )
    return rows


def attack_rows() -> list[dict[str, Any]]:
    text = (HERE / "attacks.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def build(benchmarks: Path) -> str:
    rows = attack_rows() + benign_rows(benchmarks)
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS)
    args = parser.parse_args()
    (HERE / "corpus.jsonl").write_text(build(args.benchmarks), encoding="utf-8")


if __name__ == "__main__":
    main()
