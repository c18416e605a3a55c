#!/usr/bin/env bash
# The pytest plugin against the oldest hosts: a fresh venv per (pytest, pluggy) pair with mpsready installed
# (no torch), a one-test suite run without and with --mps-emulate. Expected: "1 passed" without, a usage error
# naming what is missing with (pytest < 7.0: the floor; 7.0+: PyTorch). Needs the package registry.
#   bash scripts/check_plugin_hosts.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd -P)"
PY="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'def test_a():\n    assert 1\n' > "$work/test_a.py"
for pair in "6.2.5 0.13.1" "7.0.0 1.0.0"; do
  set -- $pair
  "$PY" -m venv "$work/v$1"
  "$work/v$1/bin/python" -m pip install -q "pytest==$1" "pluggy==$2"
  "$work/v$1/bin/python" -m pip install -q "$root"
  echo "== pytest $1, pluggy $2"
  (cd "$work" && "$work/v$1/bin/python" -m pytest -q -p no:cacheprovider test_a.py | tail -1)
  (cd "$work" && "$work/v$1/bin/python" -m pytest -q -p no:cacheprovider --mps-emulate test_a.py 2>&1 | head -1) || true
done
