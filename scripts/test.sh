#!/usr/bin/env bash
# Set up, then run the linters, the type checker, the layer contract and the whole test suite, then the
# install test (scripts/install_test.sh: `uv tool install` of a clean copy without extras from a fresh home
# folder, and init's entry started with no network; INSTALL_TEST=0 skips it, as when you run a few tests:
# `INSTALL_TEST=0 bash scripts/test.sh tests/routes`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check .
.venv/bin/lint-imports
# mypy (a minute and a half without its cache, on a fresh clone) runs beside the tests, which leave
# part of the two cores idle while they wait on real servers and processes; its report comes after them.
mypy_log=$(mktemp)
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
# TEST_WORKERS pytest processes (pytest-xdist), whole modules to each (--dist loadfile) so that a module's
# fixtures are built once; 0 runs the suite in this process.
workers=${TEST_WORKERS:-2}
parallel=()
[ "$workers" = 0 ] || parallel=(-n "$workers" --dist loadfile)
tests=0
.venv/bin/python -m pytest "${parallel[@]}" "$@" || tests=$?
types=0
wait "$mypy_pid" || types=$?
cat "$mypy_log"
rm -f "$mypy_log"
if [ "$types" != 0 ]; then echo "test.sh: mypy found type errors (above)" >&2; fi
install=0
if [ "${INSTALL_TEST:-1}" != 0 ]; then
  bash scripts/install_test.sh || install=$?
  if [ "$install" != 0 ]; then echo "test.sh: the install test failed (above)" >&2; fi
fi
if [ "$tests" != 0 ]; then exit "$tests"; fi
if [ "$types" != 0 ]; then exit "$types"; fi
exit "$install"
