#!/usr/bin/env bash
# Refit the packaged confidence (tool_selector/calibration/confidence-v2.json): cut the calibration
# sets from the shared benchmarks (scripts/make_calibration_sets.sh), fit on fit/ (every size, seeds 2
# and 3, the full catalogs), score hold-out/ (seed 1 at 5, 10 and 25 servers) and the gateway-demo
# validation set, which are never fitted on. About 15 minutes on 2 cores (12 when the indexes exist), most of
# it resolving 27,000 queries.
#
#   bash scripts/calibrate.sh [BENCHMARKS_DIR] [OUT_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
bench="${1:-../shared/benchmarks}"
out="${2:-tool_selector/calibration/confidence-v2.json}"
sets="${TOOL_SELECTOR_CACHE_DIR:-$HOME/.cache/tool-selector}/calibration-sets"
bash scripts/make_calibration_sets.sh "$bench" "$sets"
holdout=()
for d in "$sets"/holdout/* eval/datasets/gateway-demo; do holdout+=(--holdout "$d"); done
.venv/bin/tool-selector lab calibrate "$sets"/fit/* "${holdout[@]}" --out "$out" --jobs 2
