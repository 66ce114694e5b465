#!/usr/bin/env bash
# Fit the memory's judge (tool_selector/calibration/memory-v1.json) on replays of every dataset the team
# may use, and print its leave-one-dataset-out table (eval/fitting/memory_fit.py). The personal setups
# are left out one by one; their second pass is their second phrasing (queries-rephrased.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared/benchmarks}
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
setups=()
for setup in eval/datasets/personal-setups/*/; do
  [ -f "$setup/servers.json" ] || continue
  name=$(basename "$setup")
  setups+=("$name=$setup")
done
.venv/bin/tool-selector lab memory-fit "${setups[@]}" \
  gateway-demo=eval/datasets/gateway-demo \
  msc="$shared/small/msc_k10" metatool="$shared/small/metatool_k10" livemcp="$shared/small/livemcp_k10" \
  --out tool_selector/calibration/memory-v1.json "$@"
