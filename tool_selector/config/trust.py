"""The ``trust`` settings group: which definitions are trusted on first use (``settings.trust``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
    intent: bool = Field(
        default=True,
        description="read what each tool definition asks the model to do with the learned check beside the "
        "rules (tool_selector/trust/intent.py: it flags, or holds when sure): at sync, registration, import, "
        "activation and `scan`",
    )
