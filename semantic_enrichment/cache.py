"""The enrichment cache: validated drafts in a diskcache folder, keyed by content hash + prompt + model.

Values are stored as JSON text and validated again when read, so an entry that does not parse (a
half-written file, an older format) is a miss and is dropped, never served. Only validated drafts
are ever written. A write the disk refuses (full, read-only) is the store error
(tool_selector/core/disk.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import diskcache  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from tool_selector.core.disk import disk_refused
from tool_selector.core.hashing import sha256_of

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

DEFER_ITEMS = 500  # deferred writes (``EnrichmentCache.deferred``) wait for at most this many ...
DEFER_SECONDS = 1.0  # ... or this long: a Claude run's drafts are written right after its next call


def cache_key(kind: str, *parts: str) -> str:
    """``kind`` (profile | enrichment) and the hashes, prompt version and model the value depends on."""
    return f"{kind}:{sha256_of(list(parts))}"


@contextmanager
def _written(directory: Path) -> Iterator[None]:
    """A write of the cache that the disk refuses (full, read-only) ends as the store error."""
    try:
        yield
    except Exception as exc:  # an OSError, or diskcache's SQLite error: only a refused write is ours
        refused = disk_refused(exc, f"The enrichment cache {directory}", directory)
        if refused is None:
            raise
        raise refused from exc


class EnrichmentCache:
    def __init__(self, directory: Path) -> None:
        self._directory = directory
        with _written(directory):
            directory.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(
                str(directory), size_limit=2**30, eviction_policy="least-recently-used"
            )
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, float | None]] | None = None  # key -> (value, expiry): deferred
        self._limits = (DEFER_ITEMS, DEFER_SECONDS)
        self._since = time.monotonic()

    def __enter__(self) -> EnrichmentCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._cache.close()

    @contextmanager
    def deferred(self, *, max_items: int = DEFER_ITEMS, max_age_s: float = DEFER_SECONDS) -> Iterator[None]:
        """Inside, writes (of any thread) are kept in memory and written together, in one transaction,
        once ``max_items`` wait or the first of them has waited ``max_age_s`` (a write alone is a
        transaction of its own: most of the cost of an offline run's many small drafts), and at the
        end. Reads see them meanwhile."""
        with self._lock:
            outer = self._pending is not None  # already deferred: the outer block writes them
            if not outer:
                self._pending, self._limits = {}, (max_items, max_age_s)
        if outer:
            yield
            return
        try:
            yield
        finally:
            with self._lock:
                self._write_pending()
                self._pending = None

    def _write_pending(self) -> None:
        """Write what waits (the lock held)."""
        if self._pending:
            with _written(self._directory), self._cache.transact():
                for key, (raw, expire_s) in self._pending.items():
                    self._cache.set(key, raw, expire=expire_s)
            self._pending.clear()
        self._since = time.monotonic()

    def get(self, key: str, model: type[M]) -> M | None:
        with self._lock:
            waiting = self._pending.get(key) if self._pending else None
        raw = waiting[0] if waiting is not None else self._cache.get(key)
        if raw is None:
            return None
        try:
            return model.model_validate_json(raw)
        except (ValidationError, TypeError, ValueError):
            logger.warning("dropping an unreadable enrichment cache entry %s", key)
            self._cache.delete(key)
            return None

    def set(self, key: str, value: BaseModel, *, expire_s: float | None = None) -> None:
        type(value).model_validate(value.model_dump())  # only valid values are ever written
        raw = value.model_dump_json()
        with self._lock:
            if self._pending is None:
                with _written(self._directory):
                    self._cache.set(key, raw, expire=expire_s)
                return
            if not self._pending:
                self._since = time.monotonic()
            self._pending[key] = (raw, expire_s)
            max_items, max_age_s = self._limits
            if len(self._pending) >= max_items or time.monotonic() - self._since >= max_age_s:
                self._write_pending()

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> int:
        return int(self._cache.clear())
