"""The learned check's model in torch (the ``train`` extra): all-MiniLM-L6-v2 fine-tuned whole, with a
head on its token states (a convolution of ``KERNEL`` tokens into ``CHANNELS`` channels, ReLU, the
strongest window per channel, one logistic output for the attack and one softmax output for its kind,
fitted on attacks only); AdamW, the encoder at ``ENCODER_RATE`` and the head at ``HEAD_RATE``, ``EPOCHS``
passes over the attacks, the hard negatives and ``CATALOG_SAMPLE`` real tools drawn afresh each pass.
Exported as the product runs it: the encoder as int8 ONNX, the head as ``IntentModel`` (numpy)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.intent.examples import Example
from tool_selector.trust.intent import (
    INTENT_FORMAT,
    MAX_TOKENS,
    Int8Matrix,
    IntentCheck,
    IntentModel,
    reading_text,
)

KERNEL = 3
CHANNELS = 64
LAYERS = 6  # the encoder's layers kept (all of all-MiniLM-L6-v2's)
EPOCHS = 2
BATCH = 16
ENCODER_RATE = 4e-5
HEAD_RATE = 1e-3
WARMUP = 0.06  # the share of steps the learning rates rise over, then fall linearly to zero
DROPOUT = 0.1
CATALOG_SAMPLE = 1000  # real tools a pass reads (of ~3,500): the negatives it sees most are the hard ones


def _torch() -> Any:
    from eval.extras import lab_import

    return lab_import("torch", "lab train-intent")


def _tokenizer() -> Any:
    """The product's tokenizer of the check (the relevance model's: all-MiniLM-L6-v2's vocabulary)."""
    from tokenizers import Tokenizer

    from tool_selector.embedding.embedders import RELEVANCE_DIR

    tokenizer = Tokenizer.from_file(str(RELEVANCE_DIR / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def token_ids(examples: Sequence[Example]) -> list[np.ndarray]:
    """Each example's tokens, as the product reads the definition."""
    tokenizer = _tokenizer()
    return [np.asarray(tokenizer.encode(reading_text(e.pieces())).ids, dtype=np.int64) for e in examples]


def network(n_kinds: int, seed: int) -> Any:
    """The base encoder (its first ``LAYERS`` layers) and a new head, as one torch module: ``forward(ids,
    mask)`` gives the attack logits and the kind logits. The states past a text's end are zeros, as the
    numpy head pads them (trust/intent.py, ``IntentHead.windows``)."""
    torch = _torch()
    from transformers import AutoModel

    from eval.relevance.train import base_model_dir

    torch.manual_seed(seed)
    encoder = AutoModel.from_pretrained(str(base_model_dir()))
    encoder.encoder.layer = encoder.encoder.layer[:LAYERS]
    encoder.config.num_hidden_layers = LAYERS
    width = int(encoder.config.hidden_size)

    class Net(torch.nn.Module):  # type: ignore[misc,name-defined]  # torch is not analysed (pyproject)
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.drop = torch.nn.Dropout(DROPOUT)
            self.conv = torch.nn.Conv1d(width, CHANNELS, KERNEL, padding=KERNEL // 2)
            self.out = torch.nn.Linear(CHANNELS, 1)
            self.kind = torch.nn.Linear(CHANNELS, n_kinds)

        def forward(self, ids: Any, mask: Any) -> tuple[Any, Any]:
            hidden = self.encoder(
                input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)
            ).last_hidden_state
            hidden = self.drop(hidden) * mask[:, :, None]
            acts = torch.relu(self.conv(hidden.transpose(1, 2))).transpose(1, 2)
            pooled = acts.masked_fill(mask[:, :, None] == 0, -1e4).max(dim=1).values
            return self.out(pooled).squeeze(-1), self.kind(pooled)

    return Net()


def _batch(torch: Any, ids: Sequence[np.ndarray]) -> tuple[Any, Any]:
    width = max(len(x) for x in ids)
    out = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, x in enumerate(ids):
        out[row, : len(x)] = x
        mask[row, : len(x)] = 1
    return torch.from_numpy(out), torch.from_numpy(mask)


def fit_model(
    ids: Sequence[np.ndarray],
    labels: np.ndarray,
    kinds: np.ndarray,
    real: np.ndarray,
    n_kinds: int,
    seed: int,
    say: Callable[[str], None] = lambda _: None,
) -> Any:
    """The encoder and head fitted on these examples (``labels``: attack or not; ``kinds``: the kind's
    index, -1 for negatives; ``real``: a real catalog's tool, of which a pass reads ``CATALOG_SAMPLE``)."""
    import random

    torch = _torch()
    torch.set_num_threads(2)
    net = network(n_kinds, seed)
    draw = random.Random(seed)
    written = [i for i in range(len(ids)) if not real[i]]
    catalog = [i for i in range(len(ids)) if real[i]]
    per_pass = len(written) + min(CATALOG_SAMPLE, len(catalog))
    steps = EPOCHS * -(-per_pass // BATCH)
    warm = max(1, int(WARMUP * steps))
    head = [*net.conv.parameters(), *net.out.parameters(), *net.kind.parameters()]
    optimiser = torch.optim.AdamW(
        [{"params": net.encoder.parameters(), "lr": ENCODER_RATE}, {"params": head, "lr": HEAD_RATE}],
        weight_decay=0.01,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: (step + 1) / warm if step < warm else max(0.0, (steps - step) / (steps - warm)),
    )
    positives = float(max(labels[written].sum(), 1))
    negatives = float(per_pass - positives)
    attack_loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(negatives / positives / 3))
    kind_loss = torch.nn.CrossEntropyLoss(ignore_index=-1)
    y, k = torch.from_numpy(labels.astype(np.float32)), torch.from_numpy(kinds.astype(np.int64))
    net.train()
    for epoch in range(EPOCHS):
        started, losses = time.time(), []
        pool = written + draw.sample(catalog, min(CATALOG_SAMPLE, len(catalog)))
        draw.shuffle(pool)
        pool.sort(key=lambda i: len(ids[i]) // 32)  # like lengths together: less padding
        batches = [pool[b : b + BATCH] for b in range(0, len(pool), BATCH)]
        draw.shuffle(batches)
        for rows in batches:
            tokens, mask = _batch(torch, [ids[i] for i in rows])
            logit, kind = net(tokens, mask)
            picked = torch.tensor(rows)
            loss = attack_loss(logit, y[picked])
            if (k[picked] >= 0).any():
                loss = loss + 0.5 * kind_loss(kind, k[picked])
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimiser.step()
            scheduler.step()
            losses.append(loss.item())
        seconds = time.time() - started
        say(f"train-intent:   pass {epoch + 1} of {EPOCHS}: loss {np.mean(losses):.3f}, {seconds:.0f} s")
    return net.eval()


def head_weights(net: Any) -> dict[str, np.ndarray]:
    """The head's weights in the numpy head's layout: Conv1d (out, in, k) -> (k * in, out)."""
    weight = net.conv.weight.detach().numpy()
    return {
        "conv": np.concatenate([weight[:, :, k].T for k in range(KERNEL)], axis=0),
        "conv_bias": net.conv.bias.detach().numpy(),
        "out": net.out.weight.detach().numpy()[0],
        "out_bias": net.out.bias.detach().numpy(),
        "kind": net.kind.weight.detach().numpy().T,
        "kind_bias": net.kind.bias.detach().numpy(),
    }


def export_encoder(net: Any, path: Path, *, quantize: bool = True) -> Path:
    """The fitted encoder as the product runs it: int8 ONNX (MatMul and the word embeddings, per tensor,
    as the relevance model) at ``path``; with ``quantize`` False, the float export."""
    import shutil
    import tempfile

    from tool_selector.embedding.embedders import export_onnx, quantize_int8

    with tempfile.TemporaryDirectory() as tmp:
        net.encoder.save_pretrained(tmp)
        export_onnx(Path(tmp), Path(tmp) / "float.onnx")
        if quantize:
            quantize_int8(Path(tmp) / "float.onnx", path, per_channel=False, embeddings=True)
        else:
            shutil.copyfile(Path(tmp) / "float.onnx", path)
    return path


def head_model(
    weights: dict[str, np.ndarray],
    kinds: Sequence[str],
    threshold: float,
    provenance: dict[str, Any],
    hold_from: float | None = None,
    *,
    encoder: str,
) -> IntentModel:
    return IntentModel(
        format=INTENT_FORMAT,
        encoder=encoder,
        kernel=KERNEL,
        conv=Int8Matrix.of(weights["conv"]),
        conv_bias=[float(v) for v in weights["conv_bias"]],
        out=[float(v) for v in weights["out"]],
        out_bias=float(weights["out_bias"][0]),
        kinds=list(kinds),
        kind_weights=Int8Matrix.of(weights["kind"]),
        kind_bias=[float(v) for v in weights["kind_bias"]],
        threshold=threshold,
        hold_from=threshold if hold_from is None else max(hold_from, threshold),
        provenance=provenance,
    )


def logits(check: IntentCheck, examples: Sequence[Example]) -> np.ndarray:
    """What the product computes: each definition read alone through ``check`` (int8 encoder, numpy head)."""
    definitions = [e.pieces() for e in examples]
    check.read_all(definitions)
    return np.asarray([check.read(pieces).logit for pieces in definitions])


def build(model: IntentModel, encoder: Path) -> IntentCheck:
    """The product's check of this head over this encoder file (two one-thread sessions)."""
    from tool_selector.embedding.intent import build_check

    return build_check(model, encoder, threads=2)


def settings() -> dict[str, Any]:
    return {
        "layers": LAYERS,
        "kernel": KERNEL,
        "channels": CHANNELS,
        "epochs": EPOCHS,
        "batch": BATCH,
        "encoder_rate": ENCODER_RATE,
        "head_rate": HEAD_RATE,
        "warmup": WARMUP,
        "dropout": DROPOUT,
        "catalog_sample": CATALOG_SAMPLE,
        "max_tokens": MAX_TOKENS,
    }
