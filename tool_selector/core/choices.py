"""The choices the command line offers, each defined once, in a module that imports nothing heavy:
``tool-selector --help`` lists every command without pydantic-settings, the catalog or the services."""

from __future__ import annotations

from typing import Literal

Backend = Literal["embedded", "weaviate"]  # the settings' ``backend``
Enricher = Literal["auto", "offline", "claude", "none"]  # the settings' ``enricher``
SearchMode = Literal["keyword", "semantic", "hybrid"]
MatchingMode = Literal["auto", "force_create", "match_only"]  # registration: services/write/duplicates.py
MatchScope = Literal["server", "catalog"]
BatchFormat = Literal["catalog", "csv", "mcpservers"]  # tool_selector/catalog_files/batch.py
# what an API key may do, and the roles that bundle them: tool_selector/catalog/admin.py
Scope = Literal["read", "write", "edit", "import", "call", "approve", "admin"]
Role = Literal["viewer", "contributor", "editor", "admin"]
