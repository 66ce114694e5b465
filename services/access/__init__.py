"""Who may do what: API keys (create, list, revoke), the principal of a request, authentication."""
