"""Use case: how agents used the gateway (``tool-selector stats``): its recent sessions, and the tools held
from agents meanwhile."""

from __future__ import annotations

from tool_selector.catalog.store import CatalogStore
from tool_selector.core.models import GatewaySessionStats


def recent_usage(store: CatalogStore, sessions: int) -> tuple[list[GatewaySessionStats], list[str]]:
    """The ``sessions`` most recently seen gateway sessions, and every tool id held now."""
    return store.get_gateway_sessions(limit=sessions), sorted(store.held_tool_ids())
