"""Stages 1-2 of the pipeline: server profiles and tool enrichment (issue 3 fills this package)."""
