"""The ``gateway`` settings group: the MCP gateway's upstream servers (``settings.gateway``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GatewaySettings(BaseModel):
    """The MCP gateway's upstream servers (``tool-selector serve``); passed whole to the power manager."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_active: int = Field(default=5, ge=1, le=100, description="upstream servers running at once")
    max_listed: int = Field(
        default=12,
        ge=1,
        le=1000,
        description="active powers' tools in one session's tools/list; the least recently used leave "
        "it first (still callable)",
    )
    idle_timeout_s: float = Field(default=900.0, gt=0, description="an upstream unused this long is stopped")
    start_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="start + initialize + list tools, per activation"
    )
    call_timeout_s: float = Field(default=120.0, gt=0, le=3600, description="per proxied tool call")
    stop_timeout_s: float = Field(
        default=6.0, gt=0, le=60, description="how long stopping one upstream may take"
    )
    # ~25k tokens at ~4 characters a token: Claude Code's default limit on one MCP tool's output
    max_result_chars: int = Field(
        default=100_000,
        ge=1_000,
        le=10_000_000,
        description="text of one proxied tool result shown to the agent; the rest is cut, with a note",
    )
    max_result_media_bytes: int = Field(
        default=5 * 2**20,  # the Claude API's limit for one image
        ge=0,
        le=100 * 2**20,
        description="images, audio and embedded resources of one proxied result; past it they are left out",
    )
    key_check_s: float = Field(
        default=10.0, gt=0, le=3600, description="serve --http: how often open sessions' keys are checked"
    )
