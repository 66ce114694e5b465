"""The catalog: the embedded database that is the source of truth, and readers of catalog files."""
