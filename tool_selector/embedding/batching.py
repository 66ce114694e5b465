"""Query embeddings of concurrent requests embedded together: ``QueryBatcher`` (continuous batching with
a short window under load) and ``embed_queries`` (one batch cut where padding would waste too much)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from tool_selector.embedding.embedders import Embedder, embed_queries


class QueryBatcher:
    """Query embeddings of concurrent requests, embedded together (continuous batching).

    A server process (REST API, gateway) answers many requests at once; each used to embed its query
    in its own model call. Here callers queue their query and wait; one thread takes everything
    queued, embeds it in one batch (``embed_queries``) and hands each caller its row. While one batch
    runs, the next fills up, so under load batches form by themselves; and while the last batch was
    shared (load), the thread waits ``window_s`` for more before it starts the next. A lone request
    at rest never waits. Documents pass straight through.
    """

    def __init__(self, inner: Embedder, *, window_s: float = 0.002, max_batch: int = 64) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self._window_s = window_s
        self._max_batch = max_batch
        self._queue: list[_Pending] = []
        self._last_size = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._generation = 0  # close() moves it on: a thread serves only while its generation is current
        self.batches = 0  # how many model calls, and how many queries they carried (for the benchmarks)
        self.queries = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        pending = _Pending(text)
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, args=(self._generation,), name="query-batcher", daemon=True
                )
                self._thread.start()
            self._queue.append(pending)
            self._cond.notify_all()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        assert pending.vector is not None
        return pending.vector

    def close(self) -> None:
        """Stop the batching thread once the queued queries are answered; a later query starts
        another."""
        with self._cond:
            self._generation += 1
            thread, self._thread = self._thread, None
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _take(self, generation: int) -> list[_Pending]:
        with self._cond:
            while not self._queue and generation == self._generation:
                self._cond.wait()
            if not self._queue:
                return []
            if self._last_size > 1:  # under load (the last batch was shared): let the next one fill
                deadline = time.monotonic() + self._window_s
                while len(self._queue) < self._max_batch and generation == self._generation:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
            batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
            self._last_size = len(batch)
            return batch

    def _serve(self, generation: int) -> None:
        while True:
            batch = self._take(generation)
            if not batch:
                return
            try:
                vectors = embed_queries(self._inner, [p.text for p in batch])
            except Exception as exc:  # every waiting caller gets the error, the thread goes on
                for p in batch:
                    p.error = exc
                    p.done.set()
                continue
            self.batches += 1
            self.queries += len(batch)
            for p, vector in zip(batch, vectors, strict=True):
                p.vector = np.asarray(vector)
                p.done.set()


class _Pending:
    __slots__ = ("done", "error", "text", "vector")

    def __init__(self, text: str) -> None:
        self.text = text
        self.done = threading.Event()
        self.vector: np.ndarray | None = None
        self.error: BaseException | None = None
