"""The offline harness: datasets, metrics, reports (``tool-selector lab eval``)."""
