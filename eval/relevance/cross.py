"""``tool-selector lab cross-encoder``: does a cross-encoder that rescores the first candidates pay,
judged leave-one-dataset-out like every learned part (issue 29, item 3)?

Per left-out dataset, a cross-encoder initialised from all-MiniLM-L6-v2 (mean-pooled pair encoding and a
linear head) is trained on the other datasets' pairs (the fold's pairs of :mod:`eval.relevance.data`: no
query of the left-out set, no tool of its catalog), listwise: each request's right tool against up to
``NEGATIVES`` wrong tools of its own catalog that the base model ranks high (none from the left-out
catalog). It then rescores the first ``TOP`` tools of the left-out set's production predictions (the
``model + arguments`` row of a ``lab lodo`` work folder) and the same figures are computed on the
predictions as they were and as rescored, so the two differ only by the rescoring:

- ``as ranked``: the predictions' own order;
- ``cross``: the cross-encoder's order of the first ``TOP``;
- ``cross + rank``: reciprocal-rank fusion of both orders (k = ``FUSION_K``, not fitted).

Server R@1/R@3 here are read from the order of the tools (a server's first tool), for both rows alike.
Needs the ``train`` extra (torch, transformers).
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.quality.dataset import check_dataset_dir, load_queries
from eval.quality.ranking import server_recall_at_k, tool_recall_at_k
from eval.relevance import data
from eval.relevance import train as trainer
from eval.relevance.lodo import SHARED, Scored, _hash, predictions_file, scored_folders, sources, verdicts
from tool_selector.config.settings import Settings
from tool_selector.core.arguments import extract
from tool_selector.core.errors import InvalidInputError
from tool_selector.embedding.embedders import MiniLMEmbedder

logger = logging.getLogger(__name__)

NEGATIVES = 3  # wrong tools per request in a training group
GROUPS = 8  # requests a step: GROUPS * (1 + NEGATIVES) = 32 pair encodings
TOP = 10  # candidates rescored
FUSION_K = 10
MAX_TOKENS = 128
LEARNING_RATE = 3e-5
ROWS = ("as ranked", "cross", "cross + rank")
FIGURES = ("tool_recall_at_1", "tool_recall_at_5", "server_recall_at_1", "server_recall_at_3")
SHORT = {
    "tool_recall_at_1": "tool R@1",
    "tool_recall_at_5": "tool R@5",
    "server_recall_at_1": "srv R@1",
    "server_recall_at_3": "srv R@3",
}
Group = tuple[str, str, list[str]]  # request, right tool's text, wrong tools' texts


def mine_wrong(
    pairs: Sequence[data.Pair],
    catalogs: dict[str, dict[str, str]],
    gold: dict[str, set[str]],
    embed: Callable[[list[str]], np.ndarray],
    depth: int = trainer.NEGATIVES_FROM,
) -> dict[str, list[tuple[str, str]]]:
    """Pair query id -> the (id, text) of the wrong tools of its catalog among the base model's first
    ``depth``, best first."""
    out: dict[str, list[tuple[str, str]]] = {}
    by_dataset: dict[str, dict[str, str]] = {}
    for pair in pairs:
        by_dataset.setdefault(pair.dataset, {})[pair.query_id] = pair.query
    for dataset, queries in sorted(by_dataset.items()):
        catalog = catalogs[dataset]
        ids = sorted(catalog)
        docs = embed([catalog[i] for i in ids])
        order = sorted(queries.items())
        vectors = embed([q for _, q in order])
        top = np.argsort(-(vectors @ docs.T), axis=1)[:, :depth]
        for row, (query_id, _) in enumerate(order):
            out[query_id] = [(ids[j], catalog[ids[j]]) for j in top[row] if ids[j] not in gold[query_id]]
    return out


def fold_groups(
    pairs: Sequence[data.Pair], wrong: dict[str, list[tuple[str, str]]], banned: set[str], seed: int = 0
) -> list[Group]:
    """One training group a pair: its request, its tool's text and up to NEGATIVES wrong tools of its
    catalog, none of them from the left-out catalog."""
    rng = random.Random(seed)
    groups: list[Group] = []
    for pair in pairs:
        negatives = [text for tool_id, text in wrong.get(pair.query_id, []) if tool_id not in banned]
        if not negatives:
            continue
        picked = negatives[:1] + rng.sample(negatives[1:], min(NEGATIVES - 1, len(negatives) - 1))
        groups.append((pair.query, pair.text, picked))
    rng.shuffle(groups)
    return groups


def pair_logits(model: Any, head: Any, tokenizer: Any, requests: Sequence[str], texts: Sequence[str]) -> Any:
    """One logit per (request, text) pair: the encoder over both (token types 0 and 1), mean-pooled over
    the tokens, through the linear head."""
    import torch

    encodings = tokenizer.encode_batch(list(zip(requests, texts, strict=True)))
    width = max(len(e.ids) for e in encodings)
    ids = torch.zeros((len(encodings), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)] = torch.tensor(enc.ids)
        types[row, : len(enc.ids)] = torch.tensor(enc.type_ids)
        mask[row, : len(enc.ids)] = 1
    out = model(input_ids=ids, attention_mask=mask, token_type_ids=types)
    pooled = (out.last_hidden_state * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
    return head(pooled).squeeze(-1)


class CrossEncoder:
    """all-MiniLM-L6-v2 over "request [SEP] tool text", mean-pooled, through a linear head: a logit."""

    def __init__(self, folder: Path | None = None) -> None:
        import torch
        from tokenizers import Tokenizer
        from transformers import AutoModel

        base = trainer.base_model_dir()
        self.model = AutoModel.from_pretrained(str(folder / "encoder" if folder else base))
        self.head = torch.nn.Linear(self.model.config.hidden_size, 1)
        if folder is not None:
            self.head.load_state_dict(torch.load(folder / "head.pt", weights_only=True))
        self.tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def parameters(self) -> Any:
        return [*self.model.parameters(), *self.head.parameters()]

    def logits(self, requests: Sequence[str], texts: Sequence[str]) -> Any:
        return pair_logits(self.model, self.head, self.tokenizer, requests, texts)

    def save(self, folder: Path) -> None:
        import torch

        self.model.save_pretrained(str(folder / "encoder"))
        torch.save(self.head.state_dict(), folder / "head.pt")

    def score(self, request: str, texts: Sequence[str]) -> list[float]:
        import torch

        with torch.no_grad():
            return [float(x) for x in self.logits([request] * len(texts), texts)]


def train_cross(
    groups: Sequence[Group],
    out_dir: Path,
    *,
    seed: int = trainer.SEED,
    max_steps: int | None = None,
    progress: trainer.Progress | None = None,
) -> trainer.TrainResult:
    """Listwise training: each group's right tool against its wrong ones (softmax cross-entropy)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(trainer.threads())
    torch.use_deterministic_algorithms(True, warn_only=True)
    cross = CrossEncoder()
    cross.model.train()
    plan = [list(groups[i : i + GROUPS]) for i in range(0, len(groups), GROUPS)]
    if max_steps is not None:
        plan = plan[:max_steps]
    optimizer, scheduler = trainer.optimiser(cross.parameters(), len(plan), LEARNING_RATE)
    losses: list[float] = []
    started = time.perf_counter()
    for step, batch in enumerate(plan):
        requests: list[str] = []
        texts: list[str] = []
        spans: list[tuple[int, int]] = []
        for request, right, wrong in batch:
            start = len(texts)
            for text in (right, *wrong):
                requests.append(request)
                texts.append(text)
            spans.append((start, len(texts)))
        logits = cross.logits(requests, texts)
        loss = sum(
            torch.nn.functional.cross_entropy(logits[a:b][None, :], torch.zeros(1, dtype=torch.long))
            for a, b in spans
        ) / len(spans)
        losses.append(trainer.descend(loss, cross.parameters(), optimizer, scheduler))
        if progress is not None:
            progress(step + 1, len(plan), losses[-1])
    cross.model.eval()
    tmp = out_dir.with_name(f".{out_dir.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    cross.save(tmp)
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.replace(out_dir)
    return trainer.TrainResult(
        out_dir, len(plan), len(groups), losses, round(time.perf_counter() - started, 1)
    )


def _fuse(first: Sequence[str], second: Sequence[str]) -> list[str]:
    score = {t: 1 / (FUSION_K + first.index(t) + 1) + 1 / (FUSION_K + second.index(t) + 1) for t in first}
    return sorted(first, key=lambda t: (-score[t], first.index(t)))


def rescore(cross: CrossEncoder, scored: Scored, predictions: Path) -> dict[str, dict[str, float]]:
    """The figures of the predictions as ranked and as rescored by ``cross`` (answerable queries)."""
    if not predictions.is_file():
        raise InvalidInputError(
            f"No predictions at {predictions}.",
            hint="Run `tool-selector lab lodo --work <the same folder>` for this dataset first.",
        )
    texts = data.tool_texts(scored.folder)
    queries = {q.id: q for q in load_queries(check_dataset_dir(scored.folder).queries)}
    sums: dict[str, dict[str, list[float]]] = {row: {f: [] for f in FIGURES} for row in ROWS}
    for line in predictions.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        query = queries.get(record["id"])
        if query is None or not query.gold_tool_groups:
            continue
        if scored.group == "L1-4" and query.level is not None and query.level > 4:
            continue
        ranked = [t["id"] for t in record["tools"]]
        head = [t for t in ranked[:TOP] if t in texts]
        scores = cross.score(extract(query.query).text, [texts[t] for t in head]) if head else []
        by_cross = [t for _, t in sorted(zip(scores, head, strict=True), key=lambda st: -st[0])]
        orders = {
            "as ranked": ranked,
            "cross": by_cross + ranked[TOP:],
            "cross + rank": _fuse(head, by_cross) + ranked[TOP:],
        }
        for row, order in orders.items():
            groups = query.gold_tool_groups
            sums[row]["tool_recall_at_1"].append(tool_recall_at_k(groups, order, 1))
            sums[row]["tool_recall_at_5"].append(tool_recall_at_k(groups, order, 5))
            sums[row]["server_recall_at_1"].append(server_recall_at_k(groups, data.servers_of(order), 1))
            sums[row]["server_recall_at_3"].append(server_recall_at_k(groups, data.servers_of(order), 3))
    return {
        row: {f: round(float(np.mean(v)), 4) if v else 0.0 for f, v in figs.items()}
        for row, figs in sums.items()
    }


def run_cross(
    settings: Settings,
    shared: Path,
    team: Path | None,
    work: Path,
    *,
    lodo_work: Path,
    ranking: str = "model + arguments",
    only: Sequence[str] = (),
    sets: Sequence[str] = SHARED,
    max_steps: int | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train a cross-encoder per left-out dataset and rescore its ``lab lodo`` predictions under
    ``ranking`` (a configuration of eval.relevance.lodo.CONFIGS); returns
    (and writes to ``work/cross.json``) the figures per scored folder and row."""
    work.mkdir(parents=True, exist_ok=True)
    srcs = sources(shared, team, sets)
    catalogs = data.catalog_texts(srcs)
    gold = data.gold_by_query(srcs)
    every = [p for s in srcs for p in data.pairs_of(s)]
    key = _hash(["cross-wrong-v1", [(p.query_id, p.tool_id, p.query, p.text) for p in every]])
    wrong_path = work / f"wrong-{key}.json"
    wrong: dict[str, list[tuple[str, str]]]
    if wrong_path.is_file():
        stored = json.loads(wrong_path.read_text("utf-8"))
        wrong = {q: [(tool_id, text) for tool_id, text in v] for q, v in stored.items()}
    else:
        base = MiniLMEmbedder(settings.cache_dir, engine="onnx", threads=settings.embedding.threads)
        wrong = mine_wrong(every, catalogs, gold, base.embed_documents)
        trainer.write_json(wrong_path, wrong)
    path = work / "cross.json"
    results: dict[str, Any] = json.loads(path.read_text("utf-8")) if path.is_file() else {"folds": {}}
    for left in srcs:
        if only and left.name not in only:
            continue
        say(f"fold: {left.name} left out")
        pairs = data.training_pairs(srcs, left_out=left)
        groups = fold_groups(pairs, wrong, left.tool_ids())
        fold_key = _hash([groups, NEGATIVES, GROUPS, MAX_TOKENS, LEARNING_RATE, trainer.threads(), max_steps])
        folder = work / f"cross-{left.name}"
        meta_path = folder / "fold.json"
        if meta_path.is_file() and json.loads(meta_path.read_text("utf-8")).get("key") == fold_key:
            meta = json.loads(meta_path.read_text("utf-8"))
            say(f"  cross-encoder reused ({folder})")
        else:
            say(f"  training on {len(groups)} groups")
            result = train_cross(
                groups, folder / "model", max_steps=max_steps, progress=trainer.progress_every(say, "    ")
            )
            meta = {
                "key": fold_key,
                "groups": len(groups),
                "steps": result.steps,
                "seconds": result.seconds,
                "final_loss": trainer.mean_loss(result.losses),
                "first_loss": result.losses[0] if result.losses else None,
            }
            trainer.write_json(meta_path, meta)
        cross = CrossEncoder(folder / "model")
        fold: dict[str, Any] = {"training": meta, "scores": {}}
        for scored in scored_folders(left, shared, lodo_work):
            started = time.perf_counter()
            predictions = predictions_file(lodo_work / "predictions", scored.label, ranking)
            row: dict[str, Any] = dict(rescore(cross, scored, predictions))
            row["seconds"] = round(time.perf_counter() - started, 1)
            fold["scores"][scored.label] = row
            for name in ROWS:
                say(
                    f"    {scored.label:34s} {name:13s} "
                    + "  ".join(f"{SHORT[f]} {row[name][f]:.3f}" for f in FIGURES)
                )
        results["folds"][left.name] = fold
        trainer.write_json(path, results)
    return results


def table(results: dict[str, Any]) -> str:
    """One row per scored folder (as ranked, and as rescored), then the means and the ship rule against
    ``as ranked`` as ``lab lodo`` gives them (each left-out dataset weighs the same)."""
    lines = [
        "| left out | as ranked: tool R@1 / R@5 / srv R@1 / R@3 | cross | cross + rank |",
        "|---|---|---|---|",
    ]
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for fold in results["folds"].values():
        rows.update({label: {name: row[name] for name in ROWS} for label, row in fold["scores"].items()})
    for label, row in rows.items():
        cells = [" / ".join(f"{row[name][f]:.3f}" for f in FIGURES) for name in ROWS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", verdicts(rows, ROWS, baseline="as ranked")])
