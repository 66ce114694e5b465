"""The scanner's learned check (tool_selector/trust/intent.py) over the packaged relevance model: the
model's token states are what its head reads, so the check is put together here, where the model is."""

from __future__ import annotations

import threading
from pathlib import Path

from tool_selector.core.errors import CalibrationError
from tool_selector.embedding.embedders import RELEVANCE_DIR, onnx_runner, relevance_model_id
from tool_selector.trust.intent import MAX_TOKENS, IntentCheck, load_intent_model

_loaded: dict[str, IntentCheck] = {}
_loading = threading.Lock()


def intent_check(path: Path | None = None, threads: int = 1) -> IntentCheck:
    """The check over the packaged head (or ``path``), loaded once per process; ``threads`` model
    sessions of one thread each."""
    from tokenizers import Tokenizer

    key = f"{path}:{threads}"
    with _loading:
        check = _loaded.get(key)
        if check is None:
            model = load_intent_model(path)
            if model.encoder != relevance_model_id():
                raise CalibrationError(
                    f"The intent check reads token states of {model.encoder!r}, not of the packaged "
                    f"relevance model {relevance_model_id()!r}.",
                    hint="Refit it with `tool-selector lab train-intent`, or reinstall tool-selector.",
                )
            tokenizer = Tokenizer.from_file(str(RELEVANCE_DIR / "tokenizer.json"))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.no_padding()
            sessions = [onnx_runner(RELEVANCE_DIR / "model.onnx", 1) for _ in range(max(threads, 1))]
            check = _loaded[key] = IntentCheck(model, sessions, tokenizer)
        return check
