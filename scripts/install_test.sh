#!/usr/bin/env bash
# The install test: build the wheel, install it with no extras into a fresh virtualenv, and from that
# virtualenv alone (run outside the repository, so nothing is imported from the source tree): check
# which packages came in and the size, time the imports, import a small catalog, sync the real time
# server, resolve "what time is it in Tokyo" (activated), and answer one resolve_intent through
# `tool-selector serve` with the mcp client. Prints its figures; exits non-zero on the first failure.
# Needs the project's set-up (scripts/setup.sh: uv, and mcp-server-time of the demo extra).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
MAX_MB=${INSTALL_TEST_MAX_MB:-400}
# a person's setup of 19 servers (team-written, eval/datasets/personal-setups), beside which the real
# time server is synced
catalog=eval/datasets/personal-setups/backend-dev
# what serving, syncing, the API and the gateway must not pull in (issue 31)
forbidden="torch transformers sentence-transformers onnx onnxscript scikit-learn matplotlib lightgbm"
work=$(mktemp -d "${TMPDIR:-/tmp}/ts-install-test-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
say() { echo "install-test: $*"; }
fail() { echo "install-test: FAILED: $*" >&2; exit 1; }

# shellcheck source=scripts/lib/uv_options.sh
source scripts/lib/uv_options.sh
mapfile -t options < <(uv_options)
build_options=("${options[@]/#--constraint/--build-constraint}")  # uv build's name for it
SECONDS=0
.venv/bin/uv build --quiet --wheel --out-dir "$work/dist" "${build_options[@]}" . >/dev/null 2>"$work/build.log" \
  || { cat "$work/build.log" >&2; fail "uv build"; }
wheel=$(ls "$work"/dist/tool_selector-*.whl)
# a virtualenv as uvx makes one (no pip, no setuptools): what a user of `uvx --from ... tool-selector` gets
.venv/bin/uv venv --quiet --python .venv/bin/python "$work/venv"
.venv/bin/uv pip install --quiet --python "$work/venv/bin/python" "${options[@]}" "$wheel" \
  || fail "installing the wheel with no extras"
say "wheel $(basename "$wheel") $(du -m "$wheel" | cut -f1) MB; built and installed in" \
  "$SECONDS s"

py="$work/venv/bin/python" ts="$work/venv/bin/tool-selector"
cd "$work"  # from here on, nothing of the repository is on the path
uv="$repo/.venv/bin/uv"
installed=$("$uv" pip list --python "$py" --format=freeze 2>/dev/null | cut -d= -f1 | tr 'A-Z_' 'a-z-')
present=""
for name in $forbidden; do
  if grep -qx "$name" <<<"$installed"; then present="$present $name"; fi
done
[ -z "$present" ] || fail "installed without extras, yet present:$present"
size=$(du -sm "$work/venv" | cut -f1)
# uv (and so uvx) leaves compiling to bytecode to the first run, which writes the .pyc files of what it
# imports (unless PYTHONDONTWRITEBYTECODE is set, as it is on some machines); pip compiles everything at
# install. The limit is on the install as uvx makes it; the size with every file compiled is printed too,
# and the import times are taken compiled.
"$py" -m compileall -q -j 2 "$work/venv/lib" >/dev/null 2>&1 || true
compiled=$(du -sm "$work/venv" | cut -f1)
say "$(wc -l <<<"$installed") packages, none of: $forbidden"
say "virtualenv $size MB as installed (limit $MAX_MB), $compiled MB with every module compiled to bytecode"
[ "$size" -le "$MAX_MB" ] || fail "the virtualenv is $size MB, over $MAX_MB MB"
"$py" -c "import tool_selector, routes, services, semantic_enrichment" || fail "importing the packages"
[ "$("$py" -c 'import routes, os; print(os.path.dirname(os.path.dirname(routes.__file__)))')" \
  != "$repo" ] || fail "the package was imported from the repository, not the wheel"
import_s=$("$py" - <<'PY'
import statistics, subprocess, sys, time
def once(code):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t
for label, code in (("import routes.cli (every command)", "import routes.cli; routes.cli.full_app()"),
                    ("import the gateway", "import routes.gateway")):
    print(f"{label} {statistics.median(once(code) for _ in range(3)):.2f} s", end="; ")
PY
)
say "import times (median of 3, process start included): $import_s"

export TOOL_SELECTOR_DATA_DIR="$work/data" TOOL_SELECTOR_CACHE_DIR="$work/cache" OPENBLAS_NUM_THREADS=1
export TOOL_SELECTOR_SERVERS_FILE="$work/servers.json" TOOL_SELECTOR_ENRICHER=offline
unset TOOL_SELECTOR_CONFIG_FILE TOOL_SELECTOR_DEMO_ROOT
[ -x "$repo/.venv/bin/mcp-server-time" ] || fail "mcp-server-time is missing: run bash scripts/setup.sh"
"$ts" catalog import "$repo/$catalog" --approve >/dev/null || fail "catalog import"
"$ts" servers add time -- "$repo/.venv/bin/mcp-server-time" --local-timezone UTC >/dev/null \
  || fail "servers add time"
"$ts" sync --text | sed 's/^/install-test: sync: /' || fail "sync"
answer=$("$ts" resolve --json "what time is it in Tokyo") || fail "resolve"
status=$("$py" -c 'import json,sys; a=json.load(sys.stdin); print(a["status"], a.get("power"), a["confidence"])' <<<"$answer")
say "resolve \"what time is it in Tokyo\": $status"
[[ "$status" == "activated time "* ]] || fail "expected the time server activated, got: $status"
"$py" - "$ts" <<'PY' || fail "resolve_intent through tool-selector serve"
import os, sys, time, anyio
from mcp import StdioServerParameters
from mcp.client.client import Client

async def main() -> None:
    started = time.perf_counter()
    params = StdioServerParameters(command=sys.argv[1], args=["serve"], env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        result = await client.call_tool("resolve_intent", {"query": "what time is it in Tokyo"})
    answer = result.structured_content or {}
    if result.is_error or answer.get("status") != "activated" or answer.get("power") != "time":
        raise SystemExit(f"unexpected answer: {result.content}")
    print(f"install-test: serve: resolve_intent over stdio -> {answer['status']} {answer['power']} "
          f"({time.perf_counter() - started:.2f} s from process start)")

anyio.run(main)
PY
say "passed"
