"""Training pairs for the relevance model: (request, tool text) from benchmark-format datasets, and the
leave-one-dataset-out rule that drops every pair touching the left-out dataset.

A pair's request is the text the resolver would embed (arguments taken out: tool_selector/resolve/
arguments.py); its tool text is what the index embeds for that tool (tool_selector/index/build.py,
``tool_vector_text``). Only answerable queries make pairs: one per slot, with up to ``PER_SLOT`` of the
slot's interchangeable tools. A dataset whose queries crowd one tool (metatool: ~100 requests a tool)
gives at most ``PER_TOOL`` pairs a tool, chosen by a seeded shuffle, so no family drowns the others.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.quality.dataset import check_dataset_dir, dataset_folders, load_queries
from semantic_enrichment.offline import action_entities, tool_terms
from tool_selector.core.arguments import extract
from tool_selector.core.errors import InvalidInputError
from tool_selector.core.models import ToolSpec
from tool_selector.core.names import split_tool_id
from tool_selector.index.build import tool_vector_text
from tool_selector.search.text import split_identifiers

PER_SLOT = 2
PER_TOOL = 8
SEED = 0
ACTIONS = 6  # action-entity pairs in an ``enriched`` tool text


@dataclass(frozen=True, slots=True)
class Pair:
    """One (request, tool) training pair and where it came from."""

    dataset: str
    query_id: str
    query: str  # the request as the model sees it (arguments taken out)
    tool_id: str
    text: str  # the tool's vector text


@dataclass(frozen=True)
class Source:
    """A dataset of the protocol: its name, its folders (a setup family has several) and its catalog."""

    name: str
    folders: tuple[Path, ...]

    def tool_ids(self) -> set[str]:
        """Every tool id of its catalogs: a pair with one of these is dropped when it is left out."""
        ids: set[str] = set()
        for folder in self.folders:
            for tool in _read_json(folder / "tools.json"):
                ids.add(f"{tool['server']}::{tool['name']}")
        return ids

    def digest(self) -> str:
        """sha256 over its catalog and queries files, for provenance."""
        h = hashlib.sha256()
        for folder in self.folders:
            for name in ("servers.json", "tools.json", "queries.jsonl"):
                h.update((folder / name).read_bytes())
        return h.hexdigest()


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def source(name: str, path: Path) -> Source:
    """A dataset folder or a folder of dataset folders (the team's setups) under one name."""
    return Source(name=name, folders=tuple(dataset_folders(path)))


TOOL_TEXTS = ("plain", "parameters", "enriched")  # what the index embeds (plain), and two longer texts


def _parameter_names(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("input_schema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return [split_identifiers(str(k)) for k in props] if isinstance(props, dict) else []


def _actions(tool: dict[str, Any]) -> list[str]:
    """The offline enricher's action-entity pairs of a tool (verb and object with their synonyms)."""
    spec = ToolSpec.model_construct(name=tool["name"], description=str(tool.get("description") or ""))
    return action_entities(tool_terms(spec))[:ACTIONS]


def tool_texts(folder: Path, kind: str = "plain") -> dict[str, str]:
    """Each tool id of a dataset folder's catalog -> the text the index embeds for it (``plain``), or a
    longer one: with its parameter names (``parameters``), and with enrichment's action-entity pairs too
    (``enriched``)."""
    if kind not in TOOL_TEXTS:
        raise InvalidInputError(f"unknown tool text {kind!r}", hint=f"choose one of {', '.join(TOOL_TEXTS)}")
    servers = {s["name"]: s for s in _read_json(folder / "servers.json")}
    out: dict[str, str] = {}
    for tool in _read_json(folder / "tools.json"):
        if tool["server"] not in servers:
            continue
        out[f"{tool['server']}::{tool['name']}"] = tool_vector_text(
            tool["name"],
            tool["server"],
            str(tool.get("description") or ""),
            parameters=_parameter_names(tool) if kind != "plain" else (),
            actions=_actions(tool) if kind == "enriched" else (),
        )
    return out


def pairs_of(
    src: Source, *, per_slot: int = PER_SLOT, per_tool: int = PER_TOOL, seed: int = SEED, kind: str = "plain"
) -> list[Pair]:
    """The training pairs of one dataset, deterministic for a seed."""
    rng = random.Random(f"{seed}:{src.name}")
    pairs: list[Pair] = []
    for folder in src.folders:
        paths = check_dataset_dir(folder)
        texts = tool_texts(folder, kind)
        for query in load_queries(paths.queries):
            if not query.gold_tool_groups:
                continue
            request = extract(query.query).text
            for slot in query.gold_tool_groups:
                ids = [t for t in slot if t in texts]
                rng.shuffle(ids)
                for tool_id in ids[:per_slot]:
                    split_tool_id(tool_id)
                    pairs.append(
                        Pair(src.name, f"{folder.name}/{query.id}", request, tool_id, texts[tool_id])
                    )
    by_tool: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_tool[pair.tool_id].append(pair)
    kept: list[Pair] = []
    for tool_id in sorted(by_tool):
        group = by_tool[tool_id]
        rng.shuffle(group)
        kept.extend(group[:per_tool])
    rng.shuffle(kept)
    return kept


def training_pairs(
    sources: Sequence[Source], left_out: Source | None = None, *, kind: str = "plain"
) -> list[Pair]:
    """Pairs of every source but ``left_out``, without any pair whose tool belongs to its catalogs."""
    banned = left_out.tool_ids() if left_out is not None else set()
    out: list[Pair] = []
    for src in sources:
        if left_out is not None and src.name == left_out.name:
            continue
        out.extend(p for p in pairs_of(src, kind=kind) if p.tool_id not in banned)
    return out


def catalog_texts(sources: Iterable[Source], kind: str = "plain") -> dict[str, dict[str, str]]:
    """Per dataset, every tool's vector text (hard negatives are mined among a pair's own catalog)."""
    out: dict[str, dict[str, str]] = {}
    for src in sources:
        merged: dict[str, str] = {}
        for folder in src.folders:
            merged.update(tool_texts(folder, kind))
        out[src.name] = merged
    return out


def gold_by_query(sources: Iterable[Source]) -> dict[str, set[str]]:
    """Pair query id (``<folder>/<query id>``) -> every tool id that is right for it, in any slot."""
    out: dict[str, set[str]] = {}
    for src in sources:
        for folder in src.folders:
            for query in load_queries(check_dataset_dir(folder).queries):
                out[f"{folder.name}/{query.id}"] = {t for slot in query.gold_tool_groups for t in slot}
    return out


def servers_of(tools: Sequence[str]) -> list[str]:
    """The servers of a ranking of tool ids, in the order their first tool comes."""
    out: list[str] = []
    for tool_id in tools:
        server = split_tool_id(tool_id)[0]
        if server not in out:
            out.append(server)
    return out
