"""The REST API's and the trust policy's settings (groups of ``tool_selector.config.settings.Settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

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
        "batched together: query_batch_window_ms)",
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


class TrustSettings(BaseModel):
    """Which tool definitions are trusted on first use and which wait for a person's approval."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    configured: Literal["tofu", "approve"] = Field(
        default="tofu",
        description="servers in the operator's configuration: tofu = pin each tool the first time its "
        "server is seen, hold later changes; approve = hold every definition until approved "
        "(a server's own `trust` entry in servers.json wins)",
    )
    registered: Literal["tofu", "approve"] = Field(
        default="approve", description="servers and tools registered or changed through the REST API"
    )
    imported: Literal["tofu", "approve"] = Field(
        default="approve",
        description="catalog imports (`catalog import` without --approve, REST import jobs) and server "
        "entries added by `servers import`",
    )


class MemorySettings(BaseModel):
    """The gateway's memory of confirmed choices (services/gateway/memory/recording.py): a request the agent
    resolved, then served with a tool of the power it chose, is remembered in catalog.db, and a later
    request close to it may activate that power when the resolver counts it among its first candidates
    (tool_selector/route/memory.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(default=True, description="remember confirmed choices and use them")
    keep_text: bool = Field(
        default=False,
        description="keep the request's words beside its embedding (shown by `memory list`); off, only the "
        "embedding, a hash of the request and the power and tool are kept",
    )
    max_age_days: float = Field(
        default=180.0, gt=0, description="a choice not confirmed again for this long is not used"
    )
    window_calls: int = Field(
        default=8,
        ge=1,
        le=100,
        description="gateway calls after a resolve_intent within which an activation and a successful tool "
        "call of that power confirm the choice",
    )
    max_choices: int = Field(
        default=2000,
        ge=1,
        le=100_000,
        description="remembered choices kept per principal (the local user, each API key); past it, the "
        "ones no longer used go first, then the ones confirmed longest ago",
    )
