"""Offline evaluation harness: datasets in the benchmark format, metrics, reports."""
