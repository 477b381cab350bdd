#!/usr/bin/env bash
# Every test of the repository: the Rust workspace's (cargo test), then the Python package's
# (python/: the native module built with maturin into python/.venv, then pytest). This is the
# README's test command and what .ci/run calls. Fails (non-zero) when either fails.
#
#   bash scripts/test-all.sh            # both
#   bash scripts/test-all.sh --rust     # cargo test only
#   bash scripts/test-all.sh --python   # the Python package only
#
# Environment: PYTHON (the interpreter that makes the venv, default python3), ROAM_VENV (the
# venv, default python/.venv). The Python tests compare with target/ci/roam, built here.
set -euo pipefail
cd "$(dirname "$0")/.."

rust=1
python=1
case "${1:-}" in
  "") ;;
  --rust) python=0 ;;
  --python) rust=0 ;;
  *) echo "usage: $0 [--rust | --python]" >&2; exit 2 ;;
esac

if [ "$rust" = 1 ]; then
  echo "== Rust tests (cargo test --workspace --profile ci)"
  cargo test --workspace --profile ci
fi

if [ "$python" = 1 ]; then
  start=$SECONDS
  venv="${ROAM_VENV:-python/.venv}"
  echo "== Python tests: venv $venv, requirements python/requirements-test.txt"
  if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
  echo "== the roam binary the Python results are compared with (target/ci/roam)"
  cargo build --profile ci -p roam --locked
  echo "== the native module (maturin develop --profile ci)"
  venv_abs="$(cd "$venv" && pwd)"
  (cd python && VIRTUAL_ENV="$venv_abs" PATH="$venv_abs/bin:$PATH" \
    maturin develop --profile ci --locked -q)
  echo "== pytest python/tests"
  # Exit status 5 (no test collected) is a failure too: set -e stops on any non-zero status.
  ROAM_BIN="$PWD/target/ci/roam" "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider
  echo "== Python tests passed in $((SECONDS - start)) s"
fi
