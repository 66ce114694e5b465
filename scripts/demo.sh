#!/usr/bin/env bash
# The main job on the embedded default: import a catalog, build the index, resolve a few queries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOOL_SELECTOR_DATA_DIR="${TOOL_SELECTOR_DATA_DIR:-$PWD/data/demo}"
ts=.venv/bin/tool-selector
catalog="${1:-examples/demo-catalog}"
echo "== import $catalog into $TOOL_SELECTOR_DATA_DIR" >&2
"$ts" catalog import "$catalog" --prune
echo "== build the index" >&2
"$ts" index build
for query in "list the open issues of my GitHub project" \
             "send a message to the #general channel on discord" \
             "how do I get red wine out of a carpet"; do
  echo "== resolve: $query" >&2
  "$ts" resolve "$query"
done
