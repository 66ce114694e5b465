"""Benchmarks that print figures: resolve, sync, gateway, REST API, scale, scanner."""
