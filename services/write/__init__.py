"""The write path: sync (discover, profile, enrich, index), registration, imports and the server
configuration."""
