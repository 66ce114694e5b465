"""The ``claude`` settings group: the Claude enricher and its client (``settings.claude``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class ClaudeSettings(BaseModel):
    """The Claude enricher and its client; passed whole to the client."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key: SecretStr | None = Field(default=None, description="Anthropic API key; None = no Claude")
    base_url: str | None = Field(default=None, description="None = https://api.anthropic.com")
    model: str = Field(default="claude-haiku-4-5", description="the model that profiles and enriches")
    timeout_s: float = Field(default=60.0, gt=0, le=600, description="one API call")
    max_attempts: int = Field(default=4, ge=1, le=10, description="tries on 429, 5xx and timeouts")
    concurrency: int = Field(default=4, ge=1, le=32, description="API calls at once during a sync")
