"""The examples the learned check is fitted and judged on: the team's attacks and risky-looking
legitimate tools (eval/datasets/careful-attacks, its holdout apart), the real catalogs' tools, the shared
poison corpus; each read as the product reads a definition (``reading_pieces``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tool_selector.trust.intent import Piece, reading_pieces
from tool_selector.trust.scanner import scan_tool

CAREFUL = Path("eval/datasets/careful-attacks")
CATALOGS = {
    "msc": "../shared/benchmarks/msc_bench_dev",
    "livemcp": "../shared/benchmarks/livemcpbench",
    "metatool": "../shared/benchmarks/metatool",
    "toolalpaca": "../shared/benchmarks/toolalpaca",
    "restbench": "../shared/benchmarks/restbench",
    "gateway-demo": "eval/datasets/gateway-demo",
}
POISON = Path("../shared/benchmarks/poison/corpus.jsonl")


@dataclass
class Example:
    id: str
    group: str  # "attack", "hard", or the catalog's name
    kind: str  # the attack's kind; "" for a negative
    server: str
    name: str
    description: str
    input_schema: dict[str, Any] | None
    title: str | None = None
    instructions: str | None = None
    annotations: dict[str, Any] | None = None

    @property
    def attack(self) -> bool:
        return self.group == "attack"

    def pieces(self) -> list[Piece]:
        return reading_pieces(
            self.name,
            self.description,
            self.input_schema,
            title=self.title,
            instructions=self.instructions,
            annotations=self.annotations,
        )

    def rules_verdict(self) -> str:
        """The rules' verdict (no catalog context, as ``scan`` of one file reads it)."""
        text = self.description + (f"\n{self.instructions}" if self.instructions else "")
        return scan_tool(self.server, self.name, text, self.input_schema, None, self.annotations).verdict


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _careful(row: dict[str, Any], group: str) -> Example:
    """One item of the careful-attacks set (its format: eval/datasets/careful-attacks/README.md)."""
    return Example(
        id=row["id"],
        group=group,
        kind=str(row.get("kind") or ""),
        server=row["server"],
        name=row["tool_name"],
        description=row["description"],
        input_schema=row.get("input_schema"),
        title=row.get("title"),
        instructions=row.get("server_instructions"),
        annotations=row.get("annotations"),
    )


def careful_examples(folder: Path = CAREFUL) -> list[Example]:
    return [
        _careful(row, "attack" if row["label"] == "poisoned" else "hard")
        for name in ("attacks.jsonl", "benign.jsonl")
        for row in _jsonl(folder / name)
    ]


def catalog_examples(catalogs: dict[str, Path]) -> list[Example]:
    out = []
    for label, folder in catalogs.items():
        tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
        for k, tool in enumerate(tools):
            out.append(
                Example(
                    id=f"{label}:{k}",
                    group=label,
                    kind="",
                    server=str(tool.get("server", "")),
                    name=str(tool.get("name", "")),
                    description=str(tool.get("description") or ""),
                    input_schema=tool.get("input_schema"),
                )
            )
    return out


def holdout_examples(path: Path) -> list[Example]:
    """The careful-attacks set's holdout (a later author's items, never fitted on), as examples."""
    return [
        _careful(row, "poison-attack" if row["label"] == "poisoned" else "poison-benign")
        for row in _jsonl(path)
    ]


def poison_examples(path: Path) -> list[Example]:
    return [
        Example(
            id=row["id"],
            group="poison-attack" if row["label"] == "poisoned" else "poison-benign",
            kind=str(row.get("attack") or ""),
            server=str(row.get("server") or ""),
            name=str(row.get("tool_name") or ""),
            description=str(row.get("description") or ""),
            input_schema=row.get("input_schema"),
        )
        for row in _jsonl(path)
    ]
