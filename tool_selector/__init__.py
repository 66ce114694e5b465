"""tool-selector core: models, settings, errors, catalog store, embedder, search backends, stages 3-5."""

__version__ = "0.1.0"
