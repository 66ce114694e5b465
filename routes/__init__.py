"""Adapters: CLI, REST and the MCP gateway. Each parses, makes one service call and renders."""

import os

# Process set-up for every entry point, before numpy or the model runtime are imported:
# one BLAS thread (threaded BLAS tripled tail latency on 2 cores), and never reach a model hub.
for _name, _value in (
    ("OPENBLAS_NUM_THREADS", "1"),
    ("OMP_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("HF_HUB_OFFLINE", "1"),
    ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
    ("TRANSFORMERS_VERBOSITY", "error"),
):
    os.environ.setdefault(_name, _value)
