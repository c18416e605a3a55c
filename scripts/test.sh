#!/usr/bin/env bash
# One command: set up a virtual environment in .venv (first run only) and run the whole test suite.
#   bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# torch is pinned for development (constraints/dev.txt): an open range would pull a multi-GB CUDA build.
.venv/bin/python -m pip install -q -c constraints/dev.txt torch==2.13.0
.venv/bin/python -m pip install -q -c constraints/dev.txt -e '.[dev]'
exec .venv/bin/python -m pytest -q "$@"
