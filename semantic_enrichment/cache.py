"""The enrichment cache: validated drafts in a diskcache folder, keyed by content hash + prompt + model.

Values are stored as JSON text and validated again when read, so an entry that does not parse (a
half-written file, an older format) is a miss and is dropped, never served. Only validated drafts
are ever written.
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import diskcache  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from tool_selector.hashing import sha256_of

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def cache_key(kind: str, *parts: str) -> str:
    """``kind`` (profile | enrichment) and the hashes, prompt version and model the value depends on."""
    return f"{kind}:{sha256_of(list(parts))}"


class EnrichmentCache:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._cache = diskcache.Cache(str(directory), size_limit=2**30, eviction_policy="least-recently-used")

    def __enter__(self) -> EnrichmentCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._cache.close()

    def get(self, key: str, model: type[M]) -> M | None:
        raw = self._cache.get(key)
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
        self._cache.set(key, value.model_dump_json(), expire=expire_s)

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> int:
        return int(self._cache.clear())
