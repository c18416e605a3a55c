"""``run-on-mac.sh``: the one script the Mac (or a CUDA server) runs. POSIX ``sh`` only (macOS's ``/bin/sh`` is
bash in POSIX mode, or dash on Linux): no arrays, no ``[[``, no ``local``, no ``pipefail``; every value written
into it is quoted with :func:`shlex.quote`.

What it does, each step bounded in time by :mod:`mpsready.kit.bounded` (macOS has no ``timeout``):

1. ``kit-check``: the kit against its manifest, and the sign-off found (:mod:`mpsready.kit.onmac`);
2. a virtual environment ``.venv`` in the kit with the named PyTorch release, mpsready's own requirements
   (``tool/requirements.txt``; mpsready itself runs from ``tool/`` on ``PYTHONPATH``) and each of the project's
   declared dependencies (``deps.txt``) installed one by one: each that fails is a step that failed, and the
   script carries on;
3. ``env``, ``ops --dump-installed`` (on MPS only), ``trace`` on the device (on a Mac: the operators the real
   device dispatched), ``record --device DEVICE`` and ``record --device cpu`` (both with ``--synthetic-inputs
   inputs.json`` when the kit has an input spec), ``compare`` of the two records, and with ``--tests`` the
   project's tests under pytest with the observing plugin :mod:`mpsready.kit.observe` (never the emulator);
4. ``pack``: ``results.tar.gz`` in the kit folder.

Environment variables (documented in the script's head and ``docs/kit.md``): ``MPSREADY_KIT_DEVICE`` replaces the
device (``cpu``: the dry run, which runs to the end on any machine); ``MPSREADY_KIT_PYTHON`` uses that interpreter
as it is (no virtual environment, nothing installed); ``MPSREADY_KIT_BASE_PYTHON`` names the Python 3.10+ that
creates the virtual environment (default ``python3``; the script stops with exit 2 on an older one, such as the
Python 3.9 of Apple's command line tools).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

SCRIPT = "run-on-mac.sh"


@dataclass(frozen=True)
class Plan:
    entry: str
    device: str  # mps or cuda
    torch_spec: str  # a pip requirement, e.g. "torch==2.5.1"
    tests: bool
    steps: int
    has_inputs: bool
    record_timeout: int = 1500
    reference: bool = False  # the kit carries reference/ (a CUDA record's statistics) to compare with
    test_timeout: int = 1800


def commands(plan: Plan) -> list[str]:
    """The commands the script runs, as a person reads them (``$PY``: the kit's interpreter)."""
    syn = " --synthetic-inputs ../inputs.json" if plan.has_inputs else ""
    e = shlex.quote(plan.entry)
    out = ["$BASE_PY -m venv .venv   (python3, or MPSREADY_KIT_BASE_PYTHON: Python 3.10 or later)",
           f"$PY -m pip install {shlex.quote(plan.torch_spec)}",
           "$PY -m pip install -r tool/requirements.txt",
           "$PY -m pip install -c constraints.txt DEP   (each line of deps.txt, one at a time)",
           "cd project",
           "$PY -m mpsready env --format json -o ../results/env.json --project ."]
    if plan.device == "mps":
        out.append("$PY -m mpsready ops --dump-installed -o ../results/ops-installed.json")
    out += [f"$PY -m mpsready trace {e} --device $DEVICE --format json -o ../results/trace-device.json",
            f"$PY -m mpsready record {e} --device $DEVICE --steps {plan.steps}{syn} --out ../results/record-device "
            f"--project . --timeout {plan.record_timeout}",
            f"$PY -m mpsready record {e} --device cpu --steps {plan.steps}{syn} --out ../results/record-cpu "
            f"--project . --timeout {plan.record_timeout}",
            "$PY -m mpsready compare ../results/record-cpu ../results/record-device --format json "
            "-o ../results/compare.json"]
    if plan.reference:
        out.append("$PY -m mpsready compare ../reference ../results/record-device --format json "
                   "-o ../results/compare-reference.json")
    if plan.tests:
        out.append("$PY -m pytest -p mpsready.kit.observe --kit-observe ../results/tests.json -q")
    return out


def render(plan: Plan) -> str:
    """Long because the script is one piece of text, read best in order."""
    q = shlex.quote
    syn = ' --synthetic-inputs "$KIT/inputs.json"' if plan.has_inputs else ""
    ops = ('if [ "$DEVICE" = mps ]; then\n'
           '  step ops-installed 600 "$PY" -m mpsready ops --dump-installed -o "$RESULTS/ops-installed.json"\n'
           'else\n  skip ops-installed "reads the MPS dispatcher: on a Mac with --device mps only"\nfi\n')
    tests = ('step tests {t} "$PY" -m pytest -p mpsready.kit.observe --kit-observe "$RESULTS/tests.json" -q '
             '-p no:cacheprovider\n').format(t=plan.test_timeout) if plan.tests else \
        'skip tests "the kit was built without --tests"\n'
    rec = plan.record_timeout
    ref = ('step compare-reference 600 "$PY" -m mpsready compare "$KIT/reference" "$RESULTS/record-device" '
           '--format json \\\n  -o "$RESULTS/compare-reference.json"\n') if plan.reference else ""
    return f"""#!/bin/sh
# mpsready kit: gathers the observed evidence on this machine, then packs results.tar.gz in this folder.
#   sh run-on-mac.sh
# Environment (see MANIFEST.md and docs/kit.md of mpsready):
#   MPSREADY_KIT_DEVICE=cpu   dry run: every step on the CPU instead of {plan.device} (runs anywhere)
#   MPSREADY_KIT_PYTHON=PATH  use this interpreter as it is: no virtual environment, nothing installed
#   MPSREADY_KIT_BASE_PYTHON=python3.12  the Python 3.10+ that creates the virtual environment (default python3)
# Each step is bounded in time; a step that fails is recorded and the script carries on.
set -u
KIT=$(cd "$(dirname "$0")" && pwd)
ENTRY={q(plan.entry)}
TORCH_SPEC={q(plan.torch_spec)}
STEPS={plan.steps}
DEVICE=${{MPSREADY_KIT_DEVICE:-{plan.device}}}
RESULTS="$KIT/results"
BASE_PY=${{MPSREADY_KIT_PYTHON:-${{MPSREADY_KIT_BASE_PYTHON:-python3}}}}
if ! "$BASE_PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "run-on-mac.sh: $BASE_PY is not Python 3.10 or later: set MPSREADY_KIT_BASE_PYTHON (e.g. python3.12)" >&2
  exit 2
fi
PYTHONPATH="$KIT/tool${{PYTHONPATH:+:$PYTHONPATH}}"
PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH PYTHONDONTWRITEBYTECODE
rm -rf "$RESULTS"
mkdir -p "$RESULTS/logs" || exit 2

step() {{
  name=$1
  secs=$2
  shift 2
  "$BASE_PY" -m mpsready.kit.bounded "$RESULTS" "$name" "$secs" -- "$@"
}}
skip() {{
  "$BASE_PY" -m mpsready.kit.bounded "$RESULTS" "$1" 0 --skip "$2"
}}

"$BASE_PY" -m mpsready.kit.onmac check "$KIT" "$RESULTS" || exit 2

if [ -n "${{MPSREADY_KIT_PYTHON:-}}" ]; then
  PY=$MPSREADY_KIT_PYTHON
  skip install "MPSREADY_KIT_PYTHON is set: its environment is used as it is"
else
  step venv 600 "$BASE_PY" -m venv "$KIT/.venv"
  PY="$KIT/.venv/bin/python"
  step "install $TORCH_SPEC" 1800 "$PY" -m pip install "$TORCH_SPEC"
  step "install mpsready requirements" 900 "$PY" -m pip install -r "$KIT/tool/requirements.txt"
  while IFS= read -r dep || [ -n "$dep" ]; do
    case $dep in
      ''|'#'*) continue ;;
    esac
    step "install $dep" 900 "$PY" -m pip install -c "$KIT/constraints.txt" "$dep"
  done < "$KIT/deps.txt"
fi

cd "$KIT/project" || exit 2
step env 300 "$PY" -m mpsready env --format json -o "$RESULTS/env.json" --project .
{ops}step trace 900 "$PY" -m mpsready trace "$ENTRY" --device "$DEVICE" --format json -o "$RESULTS/trace-device.json"
step record-device {rec + 60} "$PY" -m mpsready record "$ENTRY" --device "$DEVICE" --steps "$STEPS"{syn} \\
  --out "$RESULTS/record-device" --project . --timeout {rec}
step record-cpu {rec + 60} "$PY" -m mpsready record "$ENTRY" --device cpu --steps "$STEPS"{syn} \\
  --out "$RESULTS/record-cpu" --project . --timeout {rec}
step compare 600 "$PY" -m mpsready compare "$RESULTS/record-cpu" "$RESULTS/record-device" --format json \\
  -o "$RESULTS/compare.json"
{ref}{tests}
cd "$KIT" || exit 2
"$BASE_PY" -m mpsready.kit.onmac pack "$KIT" "$RESULTS"
"""
