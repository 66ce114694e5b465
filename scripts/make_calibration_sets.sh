#!/usr/bin/env bash
# Cut the shared benchmarks into the catalogs the confidence is fitted and checked on: a person's own
# setup (5, 10, 25 servers), a team's (50-100) and the full catalogs, in all three phrasing styles
# (msc: requests that name their platform or paraphrase it; metatool: short chat requests; livemcp:
# whole multi-step tasks). Only the catalogs ever reach an index; the queries are labels.
#
#   bash scripts/make_calibration_sets.sh [BENCHMARKS_DIR] [OUT_DIR]
#
# OUT_DIR/fit/      seeds 2 and 3 at every size, plus the full catalogs: what `calibrate` fits on
# OUT/holdout/      seed 1 at 5, 10 and 25 servers: never fitted on; the 10-server cut is exactly
#                   the ready-made ../shared/benchmarks/small/*_k10 (checked: same files)
# Every folder is written by ../shared/benchmarks/make_subcatalogs.py (see its docstring).
set -euo pipefail
cd "$(dirname "$0")/.."
bench="${1:-../shared/benchmarks}"
out="${2:-${TOOL_SELECTOR_CACHE_DIR:-$HOME/.cache/tool-selector}/calibration-sets}"
python=.venv/bin/python
[ -x "$python" ] || python=python3
cut() {  # cut ROLE SOURCE STYLE SIZE SEED CATALOGS [extra options]
  local role=$1 source=$2 style=$3 size=$4 seed=$5 catalogs=$6
  shift 6
  local dest="$out/$role/${style}_k${size}_s${seed}"
  rm -rf "$dest"
  "$python" "$bench/make_subcatalogs.py" "$bench/$source" "$dest" --servers "$size" --seed "$seed" \
    --catalogs "$catalogs" "$@" >/dev/null
  echo "$dest: $(find "$dest" -mindepth 1 -maxdepth 1 -name 'k*' | wc -l) catalogs, $(wc -l <"$dest/all/queries.jsonl") queries" >&2
}
plan() {  # plan ROLE SEED SIZES...
  local role=$1 seed=$2
  shift 2
  for size in "$@"; do
    cut "$role" msc_bench_dev msc "$size" "$seed" 30 --levels 1,2,3
    cut "$role" metatool metatool "$size" "$seed" 30 --max-answerable 40
    if [ "$size" -le 50 ]; then cut "$role" livemcpbench livemcp "$size" "$seed" 30; fi
  done
}
plan holdout 1 5 10 25
for seed in 2 3; do
  plan fit "$seed" 5 10 25 100
  cut fit livemcpbench livemcp 50 "$seed" 30
done
# the full catalogs: msc (all levels, its own unanswerable level 5), livemcpbench, and metatool's whole
# 199-plugin catalog with 1,500 of its 21,047 requests (one catalog of every server: nothing is removed)
mkdir -p "$out/fit"
for source in msc_bench_dev livemcpbench; do
  rm -rf "$out/fit/$source" && mkdir -p "$out/fit/$source"
  cp "$bench/$source/servers.json" "$bench/$source/tools.json" "$bench/$source/queries.jsonl" "$out/fit/$source/"
done
cut fit metatool metatool_full 199 1 1 --max-answerable 1500
echo "calibration sets in $out" >&2
