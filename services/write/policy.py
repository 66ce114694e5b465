"""Which trust mode a write runs under, from the settings' trust policies (issue 15)."""

from __future__ import annotations

from typing import Literal

from tool_selector.config.servers import ServerConfig
from tool_selector.config.settings import Settings
from tool_selector.trust.models import TrustMode, TrustPolicy

Origin = Literal["registered", "imported"]


def mode_of(policy: TrustPolicy) -> TrustMode:
    return "tofu" if policy == "tofu" else "hold"


def configured_mode(settings: Settings, config: ServerConfig | None) -> TrustMode:
    """A configured server's mode: its own ``trust`` entry, else ``trust.configured``."""
    policy = config.trust if config is not None and config.trust is not None else settings.trust.configured
    return mode_of(policy)


def origin_mode(settings: Settings, origin: Origin) -> TrustMode:
    """Writes through the REST API or an import: ``approve`` holds each definition they write until an
    approver approves it; ``tofu`` trusts the writer (an authenticated key, the operator's import), so
    each definition it writes is pinned as written."""
    policy = settings.trust.registered if origin == "registered" else settings.trust.imported
    return "pin" if policy == "tofu" else "hold"
