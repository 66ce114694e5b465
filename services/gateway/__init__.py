"""The MCP gateway's use cases: resolve_intent, activate_power, call_tool, catalog_query, hints and
token accounting."""
