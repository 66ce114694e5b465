"""Use cases (import, index, resolve) and the composition root that picks the backends."""
