#!/usr/bin/env bash
# Reproduces the capability judge shipped in tool_selector/resolve/capability/ (issue 41, item 3) and the
# judges the confidence is fitted and judged with: one per family of datasets, each trained without that
# family (so no dataset's judge feature is in-sample: `lab calibrate --judge NAME=DIR`), then the shipped
# one, trained on every family. Each prints its held-out AUC against the relevance model's cosine on
# what it never saw (kept in its provenance.json). About 10 minutes a judge on 2 cores (6 in all).
# Needs the train extra and ../shared/benchmarks.
#
#   bash scripts/train_judge.sh [BENCHMARKS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
bench="${1:-../shared/benchmarks}"
judges="${TOOL_SELECTOR_CACHE_DIR:-$HOME/.cache/tool-selector}/judges"
ts=.venv/bin/tool-selector
mkdir -p "$judges"
"$ts" lab judge --shared "$bench" --out "$judges/no-demo-setups" --leave-out demo --leave-out-setups
"$ts" lab judge --shared "$bench" --out "$judges/no-msc" --leave-out msc
"$ts" lab judge --shared "$bench" --out "$judges/no-metatool" --leave-out metatool
"$ts" lab judge --shared "$bench" --out "$judges/no-livemcp" --leave-out livemcpbench
"$ts" lab judge --shared "$bench" --out "$judges/no-small" --leave-out toolalpaca --leave-out restbench
"$ts" lab judge --shared "$bench" --out tool_selector/resolve/capability
