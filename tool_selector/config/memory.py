"""The ``memory`` settings group: the gateway's memory of confirmed choices (``settings.memory``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
