"""``mpsready report`` arguments, and the judgement options it shares with ``check`` (the command itself:
:mod:`mpsready.report.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run
from mpsready.situation import Situation

FORMATS = ("terminal", "md", "html", "json")
# The values of mpsready.findings.Verdict that --fail-on accepts (a literal: building the parser imports no
# dataclasses; tests/foundation/test_startup.py checks them against the enum).
MAC_FOR_DEV, STAY_ON_CUDA = "mac_for_dev", "stay_on_cuda"


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (memory in GB, a time budget in hours); raises
    ``argparse.ArgumentTypeError`` for anything else (``nan``, ``inf``, ``0``, ``-1``, ``abc``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def positive_steps(text: str) -> int:
    """argparse type: a whole number of steps > 0 (``--steps`` of report and check: h40b, check took ``0`` and
    ``-5`` and projected the job from them); raises ``argparse.ArgumentTypeError`` for anything else."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of steps, got {text!r}")
    return value


def add_judgement_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``report`` and ``check``: the situation, the real job, the exit threshold."""
    p.add_argument("--situation", choices=[s.value for s in Situation],
                   help="what the Mac is for; decides the critical checklist items (default: inferred and stated)")
    p.add_argument("--steps", type=positive_steps, dest="job_steps", metavar="N",
                   help="steps of the real job, for the time projection (long jobs imply --situation long_training)")
    p.add_argument("--mac-memory-gb", type=positive_number, metavar="GB",
                   help="memory of the target Mac (default: from an env record made on the Mac)")
    p.add_argument("--time-budget-hours", type=positive_number, metavar="H",
                   help="the study's time budget for the real job on the Mac (PRF203 when exceeded)")
    p.add_argument("--fail-on", choices=[MAC_FOR_DEV, STAY_ON_CUDA],
                   default=MAC_FOR_DEV,
                   help="exit 1 when the verdict is this or worse (default: mac_for_dev, i.e. anything but "
                        "runs_on_mac)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="build the decision report (checklist + verdict) from stage outputs",
        description="Build the acceptance checklist and the verdict from any subset of stage outputs. "
                    "Exit 0: runs_on_mac (or better than --fail-on); 1: the verdict is --fail-on or worse; "
                    "2: usage or input error.")
    p.add_argument("--scan", metavar="SCAN.json", help="output of mpsready scan --format json")
    p.add_argument("--env", metavar="ENV.json", help="output of mpsready env --format json")
    p.add_argument("--trace", metavar="TRACE.json", help="output of mpsready trace --format json")
    p.add_argument("--record", metavar="DIR", action="append", default=[], help="a run record (repeatable)")
    p.add_argument("--compare", metavar="COMPARE.json", help="output of mpsready compare --format json")
    p.add_argument("--run", metavar="RUN.json", dest="run_doc",
                   help="output of mpsready run --format json (an emulated Mac run: predicted evidence)")
    p.add_argument("--tests", metavar="FILE", dest="tests_doc",
                   help="output of pytest --mps-emulate --mps-json FILE (the test suite on an emulated Mac: "
                        "predicted evidence for item 4)")
    p.add_argument("--mac-results", metavar="ARCHIVE", dest="mac_results",
                   help="results.tar.gz of mpsready kit's run-on-mac.sh: observed evidence merged in, and each "
                        "prediction set beside what the Mac observed")
    p.add_argument("--kit", metavar="DIR", dest="kit_dir",
                   help="a kit folder of mpsready kit not yet run: item 8 shows what would leave the lab (use "
                        "--mac-results once it ran)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="default: terminal, or md+html+json files with --out")
    p.add_argument("--out", "-o", metavar="DIR", help="write report.{md,html,json} there (all three unless --format "
                   "names one)")
    add_judgement_options(p)
    p.set_defaults(run=lazy_run("mpsready.report.cli"))
