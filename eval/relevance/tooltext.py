"""``tool-selector lab tool-text``: which tool text should the relevance model read, judged
leave-one-dataset-out (issue 29, item 3: "measure with and without them")?

Three texts of a tool (eval/relevance/data.py ``TOOL_TEXTS``): ``plain``, what the index embeds today
(name, server, description); ``parameters``, with its parameter names; ``enriched``, with those and the
offline enricher's action-entity pairs (verb and object with their synonyms). Per left-out dataset a fold
model is trained on the other datasets' pairs written with that text (hard negatives mined with it too),
and the left-out dataset is scored by the **dense channel alone**: its tools embedded with the same text,
each answerable request (arguments taken out) ranked against all of them. The dense channel is the only
part of the ranking the tool text reaches (the keyword channel reads parameter names and enrichment
fields already). The untrained base model is scored with each text too. ``plain`` fold models are the
ones of a ``lab lodo`` work folder (``--lodo-work``, reused when made from the same pairs), so a run
trains only the longer texts. Needs the ``train`` extra (torch, transformers).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.quality.dataset import check_dataset_dir, load_queries
from eval.quality.ranking import server_recall_at_k, tool_recall_at_k
from eval.relevance import data
from eval.relevance import train as trainer
from eval.relevance.cross import FIGURES, SHORT
from eval.relevance.lodo import (
    SHARED,
    Scored,
    fold_model,
    fold_negatives,
    negatives_for,
    scored_folders,
    sources,
    verdicts,
)
from tool_selector.config.settings import Settings
from tool_selector.core.arguments import extract
from tool_selector.embedding.embedders import Embedder, MiniLMEmbedder, OnnxFileEmbedder


def dense_figures(embedder: Embedder, scored: Scored, kind: str) -> dict[str, float]:
    """Tool R@1/R@5 and server R@1/R@3 of the dense channel alone on a scored folder's answerable
    requests (msc: levels 1-4), every tool of its catalog embedded with the ``kind`` text."""
    texts = data.tool_texts(scored.folder, kind)
    ids = sorted(texts)
    queries = [
        q
        for q in load_queries(check_dataset_dir(scored.folder).queries)
        if q.gold_tool_groups and not (scored.group == "L1-4" and q.level is not None and q.level > 4)
    ]
    if not ids or not queries:
        return {f: 0.0 for f in FIGURES}
    tools = embedder.embed_documents([texts[t] for t in ids])
    requests = embedder.embed_documents([extract(q.query).text for q in queries])
    sums: dict[str, list[float]] = {f: [] for f in FIGURES}
    for query, row in zip(queries, requests @ tools.T, strict=True):
        order = [ids[i] for i in np.argsort(-row, kind="stable")[:50]]
        groups = query.gold_tool_groups
        servers = data.servers_of(order)
        sums["tool_recall_at_1"].append(tool_recall_at_k(groups, order, 1))
        sums["tool_recall_at_5"].append(tool_recall_at_k(groups, order, 5))
        sums["server_recall_at_1"].append(server_recall_at_k(groups, servers, 1))
        sums["server_recall_at_3"].append(server_recall_at_k(groups, servers, 3))
    return {f: round(float(np.mean(v)), 4) for f, v in sums.items()}


def run_tool_text(
    settings: Settings,
    shared: Path,
    team: Path | None,
    work: Path,
    *,
    lodo_work: Path,
    kinds: Sequence[str] = data.TOOL_TEXTS,
    only: Sequence[str] = (),
    sets: Sequence[str] = SHARED,
    max_steps: int | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Per tool text and left-out dataset: the fold model (trained now, or reused) and the dense figures
    of it and of the base model; returns (and writes to ``work/tool-text.json``) them by scored folder."""
    work.mkdir(parents=True, exist_ok=True)
    srcs = sources(shared, team, sets)
    gold = data.gold_by_query(srcs)
    base = MiniLMEmbedder(settings.cache_dir, engine="onnx", threads=settings.embedding.threads)
    path = work / "tool-text.json"
    results: dict[str, Any] = (
        json.loads(path.read_text("utf-8")) if path.is_file() else {"scores": {}, "training": {}}
    )
    for kind in kinds:
        data.tool_texts(shared / sets[0], kind)  # an unknown kind fails here, before any training
        catalogs = data.catalog_texts(srcs, kind)
        every = [p for s in srcs for p in data.pairs_of(s, kind=kind)]
        folds = lodo_work if kind == "plain" else work / kind
        folds.mkdir(parents=True, exist_ok=True)
        negatives = negatives_for(every, catalogs, gold, folds, base)
        gold_texts = trainer.gold_sets(every, gold, catalogs)
        for left in srcs:
            if only and left.name not in only:
                continue
            say(f"{kind}: {left.name} left out")
            pairs = data.training_pairs(srcs, left_out=left, kind=kind)
            allowed = fold_negatives(negatives, left.tool_ids())
            onnx, meta = fold_model(
                left.name, pairs, allowed, gold_texts, folds, max_steps=max_steps, say=say
            )
            results["training"][f"{kind}/{left.name}"] = meta
            model = OnnxFileEmbedder(
                onnx,
                trainer.base_model_dir() / "tokenizer.json",
                model_id=f"relevance-lodo-{kind}-{left.name}-{meta['key']}",
                threads=settings.embedding.threads,
            )
            for scored in scored_folders(left, shared, lodo_work):
                row = results["scores"].setdefault(scored.label, {})
                for name, embedder in ((f"base, {kind}", base), (f"model, {kind}", model)):
                    row[name] = dense_figures(embedder, scored, kind)
                    say(
                        f"    {scored.label:34s} {name:20s} "
                        + "  ".join(f"{SHORT[f]} {row[name][f]:.3f}" for f in FIGURES)
                    )
                trainer.write_json(path, results)
    return results


def table(results: dict[str, Any]) -> str:
    """A row per scored folder (tool R@1 / R@5 / srv R@1 / R@3 under each text, base and trained), then
    the means and the ship rule of each trained text against the trained ``plain`` text."""
    scores: dict[str, dict[str, dict[str, float]]] = results["scores"]
    rows = sorted({name for row in scores.values() for name in row})
    lines = [
        "| left out | " + " | ".join(rows) + " |",
        "|---|" + "---|" * len(rows),
    ]
    for label, row in scores.items():
        cells = [" / ".join(f"{row[name][f]:.3f}" for f in FIGURES) if name in row else "-" for name in rows]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    complete = {label: row for label, row in scores.items() if all(name in row for name in rows)}
    trained = [name for name in rows if name.startswith("model, ")]
    if "model, plain" not in trained or not complete:
        return "\n".join(lines)
    return "\n".join([*lines, "", verdicts(complete, trained, baseline="model, plain")])
