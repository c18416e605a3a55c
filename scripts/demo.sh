#!/usr/bin/env bash
# One command: set up .venv (first run only) and run mpsready on the bundled example project.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q -c constraints/dev.txt torch==2.13.0
.venv/bin/python -m pip install -q -c constraints/dev.txt -e '.[dev]'
exec .venv/bin/mpsready demo "$@"
