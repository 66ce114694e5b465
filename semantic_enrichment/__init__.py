"""Stages 1-2 of the pipeline: a server's profile (``profiling``) and each tool's enrichment (``enrichment``),
by Claude (``claude``, through ``claude_client``) when a key is set and by the deterministic offline profiler
and enricher (``offline``) otherwise; every result cached by content hash, prompt version and model
(``cache``), and what Claude writes read by the scanner before it is kept (``vetting``)."""
