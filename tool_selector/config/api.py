"""The ``api`` settings group: the REST API process (``settings.api``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class ApiSettings(BaseModel):
    """The REST API process (``tool-selector api``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer_cache_size: int = Field(
        default=4096, ge=0, le=1_000_000, description="resolve answers remembered per index; 0 = no cache"
    )
    resolve_threads: int = Field(
        default=8,
        ge=1,
        le=256,
        description="resolves that miss the answer cache running at once (their query embeddings are "
        "batched together: embedding.query_batch_window_ms)",
    )
    write_wait_s: float | None = Field(
        default=None,
        ge=0,
        le=3600,
        description="how long a REST write waits for the writer lock before a 409; "
        "unset = write_lock_timeout_s",
    )
    max_body_bytes: int = Field(
        default=2**20, ge=1024, le=2**30, description="largest request body; a larger one is refused (413)"
    )
    max_import_bytes: int = Field(
        default=50 * 2**20, ge=1024, le=2**31, description="largest body of POST /api/v1/catalog/import"
    )
    body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="longest time a request body may take to arrive, from its first byte to its last; a "
        "slower one is refused (408) and nothing it asked for is done",
    )
    reports_dir: Path | None = Field(
        default=None,
        description="the folder of `tool-selector lab eval --report` reports the console's Evaluation page "
        "lists; None = <data_dir>/reports",
    )
