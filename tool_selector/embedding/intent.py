"""The scanner's learned check (trust/intent.py) with its encoder: all-MiniLM-L6-v2 fine-tuned to read
what a definition asks the model to do, int8 ONNX in ``intent_check/`` (its README says how it was made),
read with the relevance model's tokenizer (the same vocabulary: shipped once)."""

from __future__ import annotations

import threading
from pathlib import Path

from tool_selector.core.errors import CalibrationError
from tool_selector.embedding.embedders import RELEVANCE_DIR, file_digest_id, onnx_runner
from tool_selector.trust.intent import MAX_TOKENS, IntentCheck, IntentModel, load_intent_model

INTENT_DIR = Path(__file__).with_name("intent_check")
ENCODER = INTENT_DIR / "encoder.onnx"
ENCODER_ID = "tool-selector-intent-v2"

_loaded: dict[str, IntentCheck] = {}
_loading = threading.Lock()


def encoder_id(path: Path = ENCODER) -> str:
    """The encoder file's name: its version and the start of its sha256 (a head names the one it reads)."""
    return file_digest_id(path, ENCODER_ID) if path.is_file() else ENCODER_ID  # missing: build_check says so


def build_check(model: IntentModel, encoder: Path, threads: int = 1) -> IntentCheck:
    """The check of ``model`` over the encoder file ``encoder``: ``threads`` sessions of one thread each."""
    from tokenizers import Tokenizer

    found = encoder_id(encoder) if encoder.is_file() else None
    if model.encoder != found:
        said = "is missing" if found is None else f"is {found!r}, not the {model.encoder!r} its head reads"
        raise CalibrationError(
            f"The intent check's encoder {encoder} {said}.",
            hint="Reinstall tool-selector, or refit both with `tool-selector lab train-intent` "
            "(TOOL_SELECTOR_TRUST__INTENT=false leaves the scanner's rules alone).",
        )
    tokenizer = Tokenizer.from_file(str(RELEVANCE_DIR / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    sessions = [onnx_runner(encoder, 1) for _ in range(max(threads, 1))]
    return IntentCheck(model, sessions, tokenizer)


def intent_check(path: Path | None = None, threads: int = 1) -> IntentCheck:
    """The check over the packaged head (or ``path``) and the packaged encoder, loaded once per process."""
    key = f"{path}:{threads}"
    with _loading:
        check = _loaded.get(key)
        if check is None:
            check = _loaded[key] = build_check(load_intent_model(path), ENCODER, threads)
        return check
