#!/usr/bin/env bash
# Refit the packaged confidence (tool_selector/calibration/confidence-v2.json) on every dataset we may
# use, and judge its recipe (eval/fitting/calibrate_fit.py RECIPE) first, leave-one-dataset-out (`lab calibrate-lodo`: per dataset, fit on the
# others and score it; its table goes to $work/calibrate-lodo.md). The datasets: msc (its 10-server cuts
# and its full catalog), metatool (its 10-server cuts), livemcp (cuts and full), toolalpaca, restbench,
# gateway-demo and each team-written personal setup; each weighs the same. About 15 minutes on 2 cores
# (the evidence of the LODO run is kept in $work and reused while nothing it was made from changed).
#
#   bash scripts/calibrate.sh [BENCHMARKS_DIR] [OUT_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
bench="${1:-../shared/benchmarks}"
out="${2:-tool_selector/calibration/confidence-v2.json}"
work="${TOOL_SELECTOR_CACHE_DIR:-$HOME/.cache/tool-selector}/calibrate-lodo"
sets=(
  "msc=$bench/small/msc_k10" "msc=$bench/msc_bench_dev" "metatool=$bench/small/metatool_k10"
  "livemcp=$bench/small/livemcp_k10" "livemcp=$bench/livemcpbench" "toolalpaca=$bench/toolalpaca"
  "restbench=$bench/restbench" "gateway-demo=eval/datasets/gateway-demo"
)
setups=()
for d in eval/datasets/personal-setups/*/; do
  [ -f "$d/servers.json" ] && setups+=("personal-setups/$(basename "$d")=${d%/}")
done
recipe=$(.venv/bin/python -c 'from eval.fitting.calibrate_fit import RECIPE; print(RECIPE.name)')
.venv/bin/tool-selector lab calibrate-lodo "${sets[@]}" "${setups[@]}" --work "$work" --recipe "$recipe"
.venv/bin/tool-selector lab calibrate "${sets[@]}" "${setups[@]}" --out "$out" --version confidence-v3 --jobs 2
