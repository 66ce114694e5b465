"""The ``sync`` settings group: the write path's discovery, profiling and enrichment (``settings.sync``;
``tool-selector sync``, registrations, imports)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tool_selector.core.choices import Enricher


class SyncSettings(BaseModel):
    """How configured servers are discovered, profiled and enriched."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enricher: Enricher = Field(
        default="auto", description="auto = claude when an Anthropic API key is set, offline otherwise"
    )
    discovery_concurrency: int = Field(default=8, ge=1, le=64, description="servers discovered at once")
    discovery_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="per server: start + initialize + listing tools"
    )
    profile_max_age_days: float = Field(default=7.0, gt=0, description="re-profile after this long")
