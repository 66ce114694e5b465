#!/usr/bin/env bash
# Set up, then run the linters, the type checker, the layer contract and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/lint-imports
# TEST_WORKERS pytest processes (pytest-xdist), whole modules to each (--dist loadfile) so that a module's
# fixtures are built once; 0 runs the suite in this process.
workers=${TEST_WORKERS:-2}
parallel=()
[ "$workers" = 0 ] || parallel=(-n "$workers" --dist loadfile)
.venv/bin/python -m pytest "${parallel[@]}" "$@"
