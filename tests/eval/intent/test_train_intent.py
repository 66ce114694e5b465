"""`lab train-intent`'s parts: the examples it reads, and a model it makes that the product reads the same
way (the full run, about an hour, is in docs/operator-guide.md's figures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval.intent.examples import CAREFUL, careful_examples, holdout_examples
from eval.intent.model import (
    _batch,
    export_encoder,
    head_model,
    head_weights,
    logits,
    network,
    token_ids,
)
from tool_selector.embedding.intent import build_check, encoder_id


def test_the_set_is_read_as_attacks_of_eight_kinds_and_hard_negatives_and_the_holdout_apart() -> None:
    examples = careful_examples(CAREFUL)
    attacks = [e for e in examples if e.attack]
    assert (len(attacks), len(examples) - len(attacks)) == (848, 1524)
    assert len({e.kind for e in attacks}) == 8 and {e.kind for e in examples if not e.attack} == {""}
    held = holdout_examples(CAREFUL / "holdout.jsonl")
    assert {e.id for e in held}.isdisjoint({e.id for e in examples})
    assert all(e.pieces() for e in examples[:50])


@pytest.mark.slow
def test_the_model_as_shipped_reads_as_the_torch_model_it_was_exported_from(tmp_path: Path) -> None:
    """The head's numpy layout (window order, zeros past the text's end, the strongest window) over the
    encoder's export gives the torch model's logits (float export: up to the head's int8 weights); the
    int8 encoder keeps their order."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    examples = careful_examples(CAREFUL)
    picked = [e for e in examples if e.attack][:6] + [e for e in examples if not e.attack][:6]
    net = network(n_kinds=8, seed=0).eval()
    with torch.no_grad():
        net.out.weight.mul_(40.0)  # a fresh head's logits are all near its bias: spread them
    ids = token_ids(picked)
    with torch.no_grad():
        expected = np.asarray([float(net(*_batch(torch, [x]))[0][0]) for x in ids])
        padded = net(*_batch(torch, ids))[0].numpy()
    np.testing.assert_allclose(padded, expected, atol=1e-4)  # a batch's padding changes nothing
    spread = float(expected.max() - expected.min())
    assert spread > 0.5
    for quantize, within, order in ((False, 0.02, 0.999), (True, 0.5, 0.7)):
        encoder = export_encoder(net, tmp_path / f"encoder-{quantize}.onnx", quantize=quantize)
        kinds = [f"k{n}" for n in range(8)]
        model = head_model(head_weights(net), kinds, 0.0, {}, encoder=encoder_id(encoder))
        got = logits(build_check(model, encoder), picked)
        assert np.abs(got - expected).max() < within * spread, (quantize, got, expected)
        assert np.corrcoef(got, expected)[0, 1] > order, (quantize, got, expected)
