"""The choices the command line offers, each defined once, here, in a module that imports nothing
heavy: ``tool-selector --help`` lists every command without importing pydantic-settings, the catalog or
the services (the modules that use a choice import it from here, so the CLI cannot offer a value they
refuse, or miss one they accept)."""

from __future__ import annotations

from typing import Literal

Backend = Literal["embedded", "weaviate"]  # the settings' ``backend``
Enricher = Literal["auto", "offline", "claude", "none"]  # the settings' ``enricher``
SearchMode = Literal["keyword", "semantic", "hybrid"]
MatchingMode = Literal["auto", "force_create", "match_only"]  # registration: services/write/duplicates.py
MatchScope = Literal["server", "catalog"]
BatchFormat = Literal["catalog", "csv", "mcpservers"]  # tool_selector/catalog/batch.py
# what an API key may do, and the roles that bundle them: tool_selector/catalog/admin.py
Scope = Literal["read", "write", "edit", "import", "call", "approve", "admin"]
Role = Literal["viewer", "contributor", "editor", "admin"]
