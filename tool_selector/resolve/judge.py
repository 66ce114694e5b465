"""The capability judge: can this tool do what the request asks?

A small cross-encoder (the first layers of all-MiniLM-L6-v2, fine-tuned by ``tool-selector lab judge``
on the team's requests: eval/relevance/judge.py) reads the request beside one tool's text and gives a
probability. The relevance model finds the tool nearest a request; a request in the server's own domain
that none of its tools does is as near as one they do, and the judge, trained on such requests, tells
them apart. The confidence reads its verdict on the top tool (the ``capability`` feature), so that "the
closest power only shares words" can become not_found.

Shipped as int8 ONNX with its head and tokenizer (tool_selector/resolve/capability/, its README says how
it was made); runs on onnxruntime and tokenizers alone. One pair a resolution, about a millisecond a
layer on one core.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import numpy as np

from tool_selector.core.errors import CalibrationError
from tool_selector.embedding.embedders import RELEVANCE_DIR, onnx_runner
from tool_selector.search.text import split_identifiers

JUDGE_FORMAT = "tool-selector-judge/1"
MAX_TOKENS = 64  # request and tool text together: the request first, the tool text cut to fit
TEXT_CHARS = 300  # the tool text kept in the catalog's terms: more than MAX_TOKENS ever reads
PACKAGED = Path(__file__).with_name("capability")


def judge_text(name: str, server: str, description: str) -> str:
    """A tool's text as the judge reads it: the relevance model's vector text (name, server, description)."""
    return f"{split_identifiers(name)} ({server}): {description}"[:TEXT_CHARS]


class CapabilityJudge:
    """The judge in a folder (judge.onnx, head.json, tokenizer.json): ``probability(request, text)``."""

    def __init__(self, folder: Path = PACKAGED, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        files = {name: folder / name for name in ("judge.onnx", "head.json", "tokenizer.json")}
        if folder.resolve() == PACKAGED.resolve() and not files["tokenizer.json"].is_file():
            # the wheel ships the base model's tokenizer once, beside the relevance model (the same
            # bytes: tests/tool_selector/resolve/test_capability_judge.py); the checkout keeps the copy
            # `lab judge` writes
            files["tokenizer.json"] = RELEVANCE_DIR / "tokenizer.json"
        missing = [str(p) for p in files.values() if not p.is_file()]
        if missing:
            raise CalibrationError(
                f"The capability judge in {folder} is incomplete: {', '.join(missing)} missing.",
                hint="Reinstall tool-selector, point judge_dir at a folder `tool-selector lab judge` wrote, "
                "or set judge to false.",
            )
        try:
            head = json.loads(files["head.json"].read_text("utf-8"))
            if head.get("format") != JUDGE_FORMAT:
                raise ValueError(f"format {head.get('format')!r}, not {JUDGE_FORMAT!r}")
            self._weight = np.asarray(head["weight"], dtype=np.float32)
            self._bias = float(head["bias"])
        except (ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(
                f"The capability judge's head {files['head.json']} is unreadable: {exc}.",
                hint="Re-run `tool-selector lab judge`, or unset judge_dir to use the packaged judge.",
            ) from exc
        self.folder = folder
        self._tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._run = onnx_runner(files["judge.onnx"], threads)  # a session runs calls from many threads

    def probability(self, request: str, text: str) -> float:
        """P(the tool whose text is ``text`` does what ``request`` asks)."""
        enc = self._tokenizer.encode(request, text)
        ids = np.asarray([enc.ids], dtype=np.int64)
        types = np.asarray([enc.type_ids], dtype=np.int64)
        mask = np.ones_like(ids)
        hidden = self._run(ids, mask, types)
        pooled = hidden[0].mean(axis=0)
        z = max(min(float(pooled @ self._weight) + self._bias, 40.0), -40.0)
        return 1.0 / (1.0 + math.exp(-z))


_loaded: dict[tuple[str, int], CapabilityJudge] = {}
_loading = threading.Lock()


def capability_judge(folder: Path | None = None, threads: int = 1) -> CapabilityJudge:
    """The judge in ``folder`` (the packaged one by default), loaded once per process."""
    where = (folder or PACKAGED).resolve()
    with _loading:
        judge = _loaded.get((str(where), threads))
        if judge is None:
            judge = _loaded[(str(where), threads)] = CapabilityJudge(where, threads)
        return judge
