#!/usr/bin/env bash
# The main job on the embedded default, offline: discover the 7 real MCP servers of
# examples/demo-servers.json, import a catalog from file next to them, then sync (profile -> enrich
# -> index, offline enricher unless an Anthropic key is set) and resolve a few queries.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TOOL_SELECTOR_DATA_DIR="${TOOL_SELECTOR_DATA_DIR:-$PWD/data/demo}"
export TOOL_SELECTOR_SERVERS_FILE="${TOOL_SELECTOR_SERVERS_FILE:-$PWD/examples/demo-servers.json}"
export TOOL_SELECTOR_DEMO_ROOT="${TOOL_SELECTOR_DEMO_ROOT:-$PWD}"
ts=.venv/bin/tool-selector
catalog="${1:-examples/demo-catalog}"
echo "== import $catalog into $TOOL_SELECTOR_DATA_DIR" >&2
"$ts" catalog import "$catalog" --approve >/dev/null
echo "== sync: discover $TOOL_SELECTOR_SERVERS_FILE, profile, enrich, index" >&2
"$ts" sync --text
for query in "what time is it in Tokyo" \
             "show the diff of my uncommitted git changes" \
             "list the open issues of my GitHub project" \
             "how do I get red wine out of a carpet"; do
  echo "== resolve: $query" >&2
  "$ts" resolve --text "$query"  # a summary; --json (or a pipe without --text) gives the whole answer
done
echo "== the MCP gateway over stdio, as an agent's client uses it" >&2
.venv/bin/python scripts/gateway_demo.py
echo "== next: try your own request on this data, or add the gateway to your MCP client (docs/user-guide.md)" >&2
echo "   TOOL_SELECTOR_DATA_DIR=$TOOL_SELECTOR_DATA_DIR TOOL_SELECTOR_SERVERS_FILE=$TOOL_SELECTOR_SERVERS_FILE \\" >&2
echo "     $ts resolve \"what you want done\"" >&2
