#!/usr/bin/env bash
# Refit the packaged confidence (tool_selector/calibration/confidence-v2.json) on every dataset we may
# use, and judge its recipe (eval/fitting/calibrate_fit.py RECIPE) first, leave-one-dataset-out (`lab calibrate-lodo`: per dataset, fit on the
# others and score it; its table goes to $work/calibrate-lodo.md). The datasets: msc (its 10-server cuts
# and its full catalog), metatool (its 10-server cuts), livemcp (cuts and full), toolalpaca, restbench,
# gateway-demo and each team-written personal setup; each weighs the same. Beside them, ten-server cuts
# of the team's requests (eval/datasets/team-requests `check.py cuts`: people's requests, near requests
# and everyday ones nothing serves) join their catalog's family. Every dataset's evidence is read with
# the capability judge trained without its family (scripts/train_judge.sh makes them; run it first), so
# the judge's verdict the fit sees is never in-sample. About 20 minutes on 2 cores (the evidence of the
# LODO run is kept in $work and reused while nothing it was made from changed).
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
cache="${TOOL_SELECTOR_CACHE_DIR:-$HOME/.cache/tool-selector}"
cuts="$cache/team-cuts" judges="$cache/judges"
for family in msc metatool livemcpbench toolalpaca restbench; do
  .venv/bin/python eval/datasets/team-requests/check.py cuts "$family" "$cuts/$family" >/dev/null
done
.venv/bin/python eval/datasets/team-requests/check.py cuts demo "$cuts/demo" --answerable 80 --near 25 \
  --everyday 25 >/dev/null
sets+=(
  "msc=$cuts/msc" "metatool=$cuts/metatool" "livemcp=$cuts/livemcpbench" "toolalpaca=$cuts/toolalpaca"
  "restbench=$cuts/restbench" "gateway-demo=$cuts/demo"
)
for j in no-demo-setups no-msc no-metatool no-livemcp no-small; do
  if [ ! -f "$judges/$j/judge.onnx" ]; then
    echo "calibrate: no judge $judges/$j: run bash scripts/train_judge.sh first" >&2
    exit 2
  fi
done
judge=(
  --judge "msc=$judges/no-msc" --judge "metatool=$judges/no-metatool" --judge "livemcp=$judges/no-livemcp"
  --judge "toolalpaca=$judges/no-small" --judge "restbench=$judges/no-small"
  --judge "gateway-demo=$judges/no-demo-setups"
)
setups=()
for d in eval/datasets/personal-setups/*/; do
  if [ -f "$d/servers.json" ]; then
    setups+=("personal-setups/$(basename "$d")=${d%/}")
    judge+=(--judge "personal-setups/$(basename "$d")=$judges/no-demo-setups")
  fi
done
recipe=$(.venv/bin/python -c 'from eval.fitting.calibrate_fit import RECIPE; print(RECIPE.name)')
.venv/bin/tool-selector lab calibrate-lodo "${sets[@]}" "${setups[@]}" "${judge[@]}" --work "$work" \
  --recipe "$recipe"
.venv/bin/tool-selector lab calibrate "${sets[@]}" "${setups[@]}" "${judge[@]}" --out "$out" \
  --version confidence-v4 --jobs 2
