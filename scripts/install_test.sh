#!/usr/bin/env bash
# The install test, as a new user installs (README "Add the gateway to your MCP client"): from a fresh
# home folder (HOME, the XDG folders and uv's tool folders under a temporary one), `uv tool install` of a
# clean copy of the checkout, with no extras, which must leave that copy as it was (`git status --ignored`).
# From that install alone (run outside the repository, so nothing is imported from the source tree):
# check which packages came in and the size, time the imports, import a small catalog, sync the real time
# server, resolve "what time is it in Tokyo" (activated), and answer one resolve_intent through
# `tool-selector serve` with the mcp client. Then `init --from` a client configuration with the real time
# server, and start the entry it prints as an MCP client would, with no network (a network namespace of
# its own: `unshare -n`) and no certificate variables (`env -i`): initialize and a resolve_intent through
# the real mcp client. Prints its figures; exits non-zero on the first failure.
# Needs the project's set-up (scripts/setup.sh: uv, and mcp-server-time of the demo extra).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
MAX_MB=${INSTALL_TEST_MAX_MB:-400}
# a person's setup of 19 servers (team-written, eval/datasets/personal-setups), beside which the real
# time server is synced
catalog=eval/datasets/personal-setups/backend-dev
# what serving, syncing, the API and the gateway must not pull in (issue 31)
forbidden="torch transformers sentence-transformers onnx onnxscript scikit-learn scipy matplotlib lightgbm"
work=$(mktemp -d "${TMPDIR:-/tmp}/ts-install-test-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
say() { echo "install-test: $*"; }
fail() { echo "install-test: FAILED: $*" >&2; exit 1; }

# shellcheck source=scripts/lib/uv_options.sh
source scripts/lib/uv_options.sh
mapfile -t options < <(uv_options)
build_options=("${options[@]/#--constraint/--build-constraint}")  # uv build's name for it
tool_options=("${options[@]/#--constraint/--constraints}")  # uv tool install's
tool_options=("${tool_options[@]/#--build-constraint/--build-constraints}")
# uv's cache stays where the set-up filled it (the packages are linked from it, not fetched again)
UV_CACHE_DIR=$(.venv/bin/uv cache dir)
export UV_CACHE_DIR

# a clean copy of the checkout (its tracked files and new ones not ignored), committed, so that
# `git status --porcelain --ignored` shows whatever a build leaves in it
src="$work/tool-selector"
mkdir "$src"
git ls-files -z --cached --others --exclude-standard \
  | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$src"
git -C "$src" init --quiet && git -C "$src" add --all \
  && git -C "$src" -c user.name=install-test -c user.email=install-test@localhost commit --quiet -m copy \
  || fail "a clean copy of the checkout"

SECONDS=0
.venv/bin/uv build --quiet --wheel --out-dir "$work/dist" "${build_options[@]}" "$src" >/dev/null \
  2>"$work/build.log" || { cat "$work/build.log" >&2; fail "uv build"; }
wheel=$(ls "$work"/dist/tool_selector-*.whl)
say "wheel $(basename "$wheel") $(du -m "$wheel" | cut -f1) MB, built in $SECONDS s"
# the wheel holds every module of the five packages and the data they load, and no data of the lab's
# datasets (their scripts are modules as setuptools shipped them)
(cd "$src" && git ls-files 'tool_selector/*.py' 'semantic_enrichment/*.py' 'services/*.py' 'routes/*.py' \
  'eval/*.py' tool_selector/embedding/relevance/model.onnx tool_selector/calibration/confidence-v2.json \
  tool_selector/embedding/intent_check/encoder.onnx tool_selector/calibration/intent-v2.json \
  routes/ui/static/index.html routes/ui/swagger/swagger-ui-bundle.js.gz) | sort >"$work/wanted.txt"
.venv/bin/python -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$wheel" \
  | sort >"$work/wheel.txt"
missing=$(comm -23 "$work/wanted.txt" "$work/wheel.txt")
[ -z "$missing" ] || fail "the wheel lacks: $missing"
! grep -v '\.py$' "$work/wheel.txt" | grep -q '^eval/datasets/' || fail "the wheel holds eval/datasets' data"

# a fresh home folder: what the install, init and the client's entry see
home="$work/home"
mkdir -p "$home"
export HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share"
export XDG_CACHE_HOME="$home/.cache" XDG_STATE_HOME="$home/.local/state"
export UV_TOOL_DIR="$home/.local/share/uv/tools" UV_TOOL_BIN_DIR="$home/.local/bin"
unset XDG_BIN_HOME VIRTUAL_ENV
SECONDS=0
# as the README says: `uv tool install /path/to/tool-selector` (a tool environment: no pip, no setuptools)
.venv/bin/uv tool install --quiet --python .venv/bin/python "${tool_options[@]}" "$src" >"$work/tool.log" 2>&1 \
  || { cat "$work/tool.log" >&2; fail "uv tool install of the checkout, with no extras"; }
say "uv tool install of the checkout: $SECONDS s (into a fresh home folder; uv's cache as the set-up left it)"
left=$(git -C "$src" status --porcelain --ignored)
[ -z "$left" ] || fail "building and installing left files in the checkout: $left"
say "the checkout as it was after uv build and uv tool install (git status --porcelain --ignored: nothing)"

venv="$UV_TOOL_DIR/tool-selector"
py="$venv/bin/python" ts="$UV_TOOL_BIN_DIR/tool-selector"
[ -x "$ts" ] || fail "uv tool install made no $ts"
cd "$work"  # from here on, nothing of the repository is on the path
uv="$repo/.venv/bin/uv"
installed=$("$uv" pip list --python "$py" --format=freeze 2>/dev/null | cut -d= -f1 | tr 'A-Z_' 'a-z-')
present=""
for name in $forbidden; do
  if grep -qx "$name" <<<"$installed"; then present="$present $name"; fi
done
[ -z "$present" ] || fail "installed without extras, yet present:$present"
size=$(du -sm "$venv" | cut -f1)
# uv (and so uvx) leaves compiling to bytecode to the first run, which writes the .pyc files of what it
# imports (unless PYTHONDONTWRITEBYTECODE is set, as it is on some machines); pip compiles everything at
# install. The limit is on the install as uvx makes it; the size with every file compiled is printed too,
# and the import times are taken compiled.
"$py" -m compileall -q -j 2 "$venv/lib" >/dev/null 2>&1 || true
compiled=$(du -sm "$venv" | cut -f1)
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
export TOOL_SELECTOR_SERVERS_FILE="$work/servers.json" TOOL_SELECTOR_SYNC__ENRICHER=offline
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

# init as a new user runs it, in the fresh home folder's default places, from a client configuration with
# the real time server; then the entry it prints, started as an MCP client starts it: nothing of this
# shell's environment (env -i: HOME and a minimal PATH, no certificate or proxy variables), no network
unset TOOL_SELECTOR_DATA_DIR TOOL_SELECTOR_CACHE_DIR TOOL_SELECTOR_SERVERS_FILE  # the enricher stays offline
printf '{"mcpServers": {"time": {"command": "%s", "args": ["--local-timezone", "UTC"]}}}\n' \
  "$repo/.venv/bin/mcp-server-time" >"$work/client.json"
"$ts" init --from "$work/client.json" --json >"$work/init.json" || fail "init --from a client configuration"
"$py" - "$work/init.json" "$ts" <<'PY' || fail "the entry init printed"
import json, sys
printed = json.load(open(sys.argv[1]))
entry, install = printed["client_entry"], printed["install"]
if entry != {"command": sys.argv[2], "args": ["serve"]} or install is not None:
    raise SystemExit(f"init printed the entry {entry} and the install {install}, not {sys.argv[2]} serve")
print(f"install-test: init: synced {printed['sync']['tools_added']} tools; entry {entry}")
PY
offline=() closed=()
if unshare -n true 2>/dev/null; then
  offline=(unshare -n) how="no network (unshare -n: a network namespace with no interface up)"
elif unshare -rn true 2>/dev/null; then
  offline=(unshare -rn) how="no network (unshare -rn: a user and network namespace with no interface up)"
else  # the kernel refuses namespaces: every request to a proxy on a closed loopback port, uv offline
  for name in http_proxy https_proxy HTTP_PROXY HTTPS_PROXY; do closed+=("$name=http://127.0.0.1:9"); done
  closed+=(UV_OFFLINE=1) how="no network (namespaces refused: a closed proxy, UV_OFFLINE=1)"
fi
"${offline[@]}" env -i HOME="$home" PATH=/usr/bin:/bin "${closed[@]}" "$py" - "$work/init.json" "$how" <<'PY' \
  || fail "the entry init printed, started with no network"
import json, os, socket, sys, time, anyio
from mcp import StdioServerParameters
from mcp.client.client import Client

entry = json.load(open(sys.argv[1]))["client_entry"]
certificates = [k for k in os.environ if "CERT" in k or "CA_BUNDLE" in k or k.lower().endswith("_proxy")]
if certificates and "UV_OFFLINE" not in os.environ:
    raise SystemExit(f"the entry's environment has {certificates}")
if "unshare" in sys.argv[2]:
    try:
        socket.create_connection(("1.1.1.1", 443), timeout=2).close()
        raise SystemExit("the network is reachable: the test would prove nothing")
    except OSError:
        pass

async def main() -> None:
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry.get("env"))
    started = time.perf_counter()
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        initialized = time.perf_counter() - started
        result = await client.call_tool("resolve_intent", {"query": "what time is it in Tokyo"})
        answered = time.perf_counter() - started
    answer = result.structured_content or {}
    if result.is_error or answer.get("status") != "activated" or answer.get("power") != "time":
        raise SystemExit(f"unexpected answer: {result.content}")
    print(f"install-test: the printed entry with {sys.argv[2]} and env -i: initialize {initialized:.2f} s "
          f"from process start, resolve_intent -> {answer['status']} {answer['power']} at {answered:.2f} s")

anyio.run(main)
PY
say "passed"
