"""Benchmarks that print figures: resolve, sync, the gateway and a conversation through it, catalog_query,
the REST API, scale, the scanner, the shadowing check and the argument filler."""
