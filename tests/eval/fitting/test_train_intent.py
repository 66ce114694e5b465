"""`lab train-intent`'s parts: the examples it reads, and a head it fits that the product's numpy head
reads the same way (the full run, fourteen minutes, is in docs/operator-guide.md's figures)."""

from __future__ import annotations

import numpy as np
import pytest

from eval.fitting.train_intent import (
    CAREFUL,
    careful_examples,
    fit_head,
    head_model,
    holdout_examples,
    logits,
)


def test_the_set_is_read_as_attacks_of_eight_kinds_and_hard_negatives_and_the_holdout_apart() -> None:
    examples = careful_examples(CAREFUL)
    attacks = [e for e in examples if e.attack]
    assert (len(attacks), len(examples) - len(attacks)) == (528, 660)
    assert len({e.kind for e in attacks}) == 8 and {e.kind for e in examples if not e.attack} == {""}
    held = holdout_examples(CAREFUL / "holdout.jsonl")
    assert {e.id for e in held}.isdisjoint({e.id for e in examples})
    assert all(e.pieces() for e in examples[:50])


def test_a_fitted_head_separates_what_it_was_fitted_on_and_the_shipped_form_reads_it_the_same() -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    states, labels = [], []
    for i in range(120):
        s = rng.normal(size=(int(rng.integers(4, 12)), 384)).astype(np.float16)
        if i % 2:
            s[int(rng.integers(0, len(s))), :8] += 4.0  # one window says it: the head must find it anywhere
        states.append(s)
        labels.append(i % 2)
    y = np.asarray(labels)
    weights = fit_head(states, y, np.where(y == 1, 0, -1), 2)
    scores = logits(head_model(weights, ["exfiltration", "shadowing"], 0.0, {}), states)
    assert scores[y == 1].min() > scores[y == 0].max()
