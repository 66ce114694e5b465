"""``tool-selector lab train-intent``: fit and judge the scanner's learned check (trust/intent.py).

1. Examples: the team's attacks (positives) and risky-looking legitimate tools (negatives) of
   eval/datasets/careful-attacks, and every tool of the real catalogs (negatives). Each definition is
   read as the product reads it (``reading_pieces``), through the packaged relevance model's token states
   (computed once and kept in ``cache``).
2. Leave one kind out: eight heads, each fitted without one kind of attack and without an eighth of the
   negatives (each negative in exactly one eighth, by a hash of its id); each scores what it was fitted
   without. The threshold is the logit that holds at most ``TARGET`` (0.5 %) of the real catalogs' tools
   on those held-out scores. Per kind: the share caught by the check alone, the rules alone and either;
   the share of hard negatives and of each catalog's tools held.
3. The shared poison corpus (``../shared/benchmarks/poison``), which nothing here is fitted on: attacks
   caught and benign items held, rules and check.
4. The shipped head is fitted on every example and written with its provenance (the files and their
   sha256, the counts, the figures of steps 2 and 3, the threshold).

The head (torch, the ``train`` extra): a convolution of ``KERNEL`` tokens over the 384-wide token states
into ``CHANNELS`` channels, ReLU, the strongest window per channel, one logistic output (attack) and one
softmax output (the attack's kind, fitted on attacks only); dropout on the states; AdamW.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tool_selector.core.errors import InvalidInputError
from tool_selector.trust.intent import (
    INTENT_FORMAT,
    MAX_TOKENS,
    Int8Matrix,
    IntentHead,
    IntentModel,
    Piece,
    reading_pieces,
    reading_text,
)
from tool_selector.trust.scanner import scan_tool

KERNEL = 3
CHANNELS = 64
EPOCHS = 12
BATCH = 64
LEARNING_RATE = 2e-3
DROPOUT = 0.2
FOLDS = 8
TARGET = 0.005  # real catalogs' tools flagged
HARD_HELD = 0.05  # the team's risky-looking legitimate tools held
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


# ---------------------------------------------------------------------------------------- token states


def token_states(examples: Sequence[Example], cache: Path, say: Callable[[str], None]) -> list[np.ndarray]:
    """Each example's token states under the packaged relevance model (float16, kept in ``cache``)."""
    from tokenizers import Tokenizer

    from tool_selector.embedding.embedders import RELEVANCE_DIR, onnx_runner, relevance_model_id

    model_id = relevance_model_id()
    texts = [reading_text(e.pieces()) for e in examples]
    keys = [hashlib.sha256(f"{model_id}\n{t}".encode()).hexdigest()[:24] for t in texts]
    kept: dict[str, np.ndarray] = {}
    if cache.is_file():
        with np.load(cache) as stored:
            kept = {k: stored[k] for k in stored.files}
    missing = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items() if k not in kept]
    if missing:
        say(f"train-intent: reading {len(missing)} definitions through the relevance model")
        tokenizer = Tokenizer.from_file(str(RELEVANCE_DIR / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        run = onnx_runner(RELEVANCE_DIR / "model.onnx", 2)
        for key, text in missing:
            ids = np.asarray([tokenizer.encode(text).ids], dtype=np.int64)
            kept[key] = run(ids, np.ones_like(ids))[0].astype(np.float16)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, **kept)  # type: ignore[arg-type]
    return [kept[k] for k in keys]


# ---------------------------------------------------------------------------------------------- head


def _torch() -> Any:
    from eval.extras import lab_import

    return lab_import("torch", "lab train-intent")


def fit_head(
    states: Sequence[np.ndarray], labels: np.ndarray, kinds: np.ndarray, n_kinds: int, seed: int = 0
) -> dict[str, np.ndarray]:
    """The head's weights fitted on ``states`` (attack labels; kind indexes, -1 for negatives)."""
    torch = _torch()
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    width = max(len(s) for s in states)
    x = np.zeros((len(states), width, states[0].shape[1]), dtype=np.float16)
    mask = np.zeros((len(states), width), dtype=bool)
    for i, s in enumerate(states):
        x[i, : len(s)] = s
        mask[i, : len(s)] = True
    xt, mt = torch.from_numpy(x), torch.from_numpy(mask)
    yt, kt = torch.from_numpy(labels.astype(np.float32)), torch.from_numpy(kinds.astype(np.int64))
    conv = torch.nn.Conv1d(x.shape[2], CHANNELS, KERNEL, padding=KERNEL // 2)
    out, kind_out = torch.nn.Linear(CHANNELS, 1), torch.nn.Linear(CHANNELS, n_kinds)
    drop = torch.nn.Dropout(DROPOUT)
    params = [*conv.parameters(), *out.parameters(), *kind_out.parameters()]
    optimiser = torch.optim.AdamW(params, lr=LEARNING_RATE, weight_decay=1e-2)
    negatives, positives = float((labels == 0).sum()), float(max((labels == 1).sum(), 1))
    attack_loss = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(negatives / positives / 3))
    kind_loss = torch.nn.CrossEntropyLoss(ignore_index=-1)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(EPOCHS):
        order = torch.randperm(len(states), generator=generator)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            used = int(mt[rows].sum(1).max())
            h = torch.relu(conv(drop(xt[rows, :used].float()).transpose(1, 2))).transpose(1, 2)
            pooled = h.masked_fill(~mt[rows, :used, None], -1e4).max(dim=1).values
            loss = attack_loss(out(pooled).squeeze(-1), yt[rows])
            if (kt[rows] >= 0).any():
                loss = loss + 0.5 * kind_loss(kind_out(pooled), kt[rows])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    # Conv1d weight (out, in, k) -> the numpy head's (k * in, out): window k's states first
    weight = conv.weight.detach().numpy()
    stacked = np.concatenate([weight[:, :, k].T for k in range(KERNEL)], axis=0)
    return {
        "conv": stacked,
        "conv_bias": conv.bias.detach().numpy(),
        "out": out.weight.detach().numpy()[0],
        "out_bias": out.bias.detach().numpy(),
        "kind": kind_out.weight.detach().numpy().T,
        "kind_bias": kind_out.bias.detach().numpy(),
    }


def head_model(
    weights: dict[str, np.ndarray],
    kinds: Sequence[str],
    threshold: float,
    provenance: dict[str, Any],
    hold_from: float | None = None,
) -> IntentModel:
    from tool_selector.embedding.embedders import relevance_model_id

    return IntentModel(
        format=INTENT_FORMAT,
        encoder=relevance_model_id(),
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


def logits(model: IntentModel, states: Sequence[np.ndarray]) -> np.ndarray:
    """The shipped head's logits (int8 weights, numpy): what the product computes."""
    head = IntentHead(model)
    return np.asarray([head.logit(head.windows(np.asarray(s, dtype=np.float32))) for s in states])


# ------------------------------------------------------------------------------------------ the run


def _part(example_id: str) -> int:
    return int(hashlib.sha256(example_id.encode()).hexdigest(), 16) % FOLDS


def _share(flags: np.ndarray) -> float:
    return round(float(np.mean(flags)), 3) if len(flags) else 0.0


def train_intent(
    out: Path,
    *,
    careful: Path = CAREFUL,
    catalogs: dict[str, Path] | None = None,
    poison: Path | None = POISON,
    cache: Path,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Steps 1-4 of the module docstring; returns the figures (also in the file's provenance)."""
    started = time.time()
    catalogs = catalogs or {k: Path(v) for k, v in CATALOGS.items()}
    for label, folder in catalogs.items():
        if not (folder / "tools.json").is_file():
            raise InvalidInputError(
                f"No tools.json in {folder} (catalog {label}).", hint="Pass NAME=PATH of a catalog folder."
            )
    examples = careful_examples(careful) + catalog_examples(catalogs)
    kinds = sorted({e.kind for e in examples if e.attack})
    if len(kinds) < 2:
        raise InvalidInputError(
            f"{careful} holds attacks of fewer than two kinds.",
            hint="Point --careful at the careful-attacks set.",
        )
    states = token_states(examples, cache, say)
    labels = np.asarray([e.attack for e in examples], dtype=np.int64)
    kind_index = np.asarray([kinds.index(e.kind) if e.attack else -1 for e in examples])
    fold = np.asarray([kinds.index(e.kind) % FOLDS if e.attack else _part(e.id) for e in examples])
    held = np.zeros(len(examples))
    folds = sorted(set(fold.tolist()))
    for f in folds:
        train = np.where(fold != f)[0]
        test = np.where(fold == f)[0]
        weights = fit_head([states[i] for i in train], labels[train], kind_index[train], len(kinds), seed=f)
        model = head_model(weights, kinds, 0.0, {})
        held[test] = logits(model, [states[i] for i in test])
        left = ", ".join(k for k in kinds if kinds.index(k) % FOLDS == f)
        say(f"train-intent: fold {f + 1} of {len(folds)} ({left} held out)")
    real = np.asarray([e.group in catalogs for e in examples])
    hard = [i for i, e in enumerate(examples) if e.group == "hard"]
    threshold = float(np.quantile(held[real], 1 - TARGET, method="higher")) + 1e-6
    hold_from = max(threshold, float(np.quantile(held[hard], 1 - HARD_HELD, method="higher")) + 1e-6)
    flagged, holds = held >= threshold, held >= hold_from
    rules = np.asarray([e.rules_verdict() for e in examples])
    ruled, rule_held = rules != "clean", rules == "quarantine"
    # the scanner's verdict with the check beside the rules: a hold, or two flags (verdict_of's rule)
    quarantined = holds | rule_held | (flagged & ruled)
    figures: dict[str, Any] = {
        "threshold": round(threshold, 4),
        "hold_from": round(hold_from, 4),
        "kinds": {},
        "catalogs": {},
        "columns": "check_flags: the check flags or holds; check_holds: it holds; rules: the rules flag or "
        "hold; not_clean: the scanner with the check is not clean; quarantined: it quarantines",
    }

    def row(rows: Sequence[int]) -> dict[str, Any]:
        return {
            "n": len(rows),
            "check_flags": _share(flagged[rows]),
            "check_holds": _share(holds[rows]),
            "rules": _share(ruled[rows]),
            "not_clean": _share(flagged[rows] | ruled[rows]),
            "quarantined": _share(quarantined[rows]),
        }

    for kind in kinds:
        figures["kinds"][kind] = row([i for i, e in enumerate(examples) if e.attack and e.kind == kind])
    figures["hard_negatives"] = row(hard)
    for label in catalogs:
        figures["catalogs"][label] = row([i for i, e in enumerate(examples) if e.group == label])
    np.savez(cache.with_name("held-out.npz"), logits=held, ids=np.asarray([e.id for e in examples]))
    say("train-intent: fitting the shipped head on every example")
    weights = fit_head(states, labels, kind_index, len(kinds), seed=len(folds))
    provenance = {
        "command": "tool-selector lab train-intent (eval/fitting/train_intent.py)",
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "encoder": "tool-selector-relevance-v1 (tool_selector/embedding/relevance: all-MiniLM-L6-v2, "
        "Apache-2.0, fine-tuned)",
        "head": {
            "kernel": KERNEL,
            "channels": CHANNELS,
            "epochs": EPOCHS,
            "dropout": DROPOUT,
            "seed": len(folds),
        },
        "data": {
            "careful-attacks": _digest([careful / "attacks.jsonl", careful / "benign.jsonl"]),
            **{label: _digest([folder / "tools.json"]) for label, folder in catalogs.items()},
        },
        "examples": {
            "attacks": int(labels.sum()),
            "hard_negatives": len(hard),
            "real_tools": int(real.sum()),
        },
        "judged": "leave one kind out (each head fitted without one kind and an eighth of the negatives)",
        "figures": figures,
    }
    model = head_model(weights, kinds, threshold, provenance, hold_from)
    if poison is not None and poison.is_file():
        figures["poison_corpus"] = poison_figures(model, poison, cache, say)
        model = head_model(weights, kinds, threshold, provenance, hold_from)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.model_dump_json(indent=None) + "\n", encoding="utf-8")
    figures["seconds"] = round(time.time() - started, 1)
    return figures


def judge_only(
    model: IntentModel, careful: Path, poison: Path | None, cache: Path, say: Callable[[str], None]
) -> dict[str, Any]:
    """The shipped head on what it was never fitted on: the set's holdout and the shared corpus."""
    figures: dict[str, Any] = {"threshold": model.threshold, "hold_from": model.hold_from}
    holdout = careful / "holdout.jsonl"
    if holdout.is_file():
        figures["holdout"] = poison_figures(model, holdout, cache, say, examples=holdout_examples(holdout))
    if poison is not None and poison.is_file():
        figures["poison_corpus"] = poison_figures(model, poison, cache, say)
    return figures


def poison_figures(
    model: IntentModel,
    poison: Path,
    cache: Path,
    say: Callable[[str], None],
    examples: list[Example] | None = None,
) -> dict[str, Any]:
    """A labelled corpus nothing here is fitted on, read by the rules and the shipped head."""
    corpus = examples if examples is not None else poison_examples(poison)
    scores = logits(model, token_states(corpus, cache, say))
    found, kept = scores >= model.threshold, scores >= model.hold_from
    by_rules = np.asarray([e.rules_verdict() for e in corpus])
    either = found | (by_rules != "clean")
    jailed = kept | (by_rules == "quarantine") | (found & (by_rules != "clean"))
    attacks = [i for i, e in enumerate(corpus) if e.group == "poison-attack"]
    benign = [i for i, e in enumerate(corpus) if e.group == "poison-benign"]
    return {
        "attacks": len(attacks),
        "check_flags": _share(found[attacks]),
        "rules": _share(by_rules[attacks] != "clean"),
        "not_clean": _share(either[attacks]),
        "quarantined": _share(jailed[attacks]),
        "benign": len(benign),
        "benign_not_clean": _share(either[benign]),
        "benign_quarantined": _share(jailed[benign]),
    }


def _digest(paths: Sequence[Path]) -> dict[str, str]:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return {"files": ", ".join(str(p) for p in paths), "sha256": digest.hexdigest()}
