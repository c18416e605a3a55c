"""``mpsready check`` arguments (the command itself: :mod:`mpsready.check.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run
from mpsready.defaults import DEFAULT_MACOS
from mpsready.commands.report import add_judgement_options

DEFAULT_OUT = "mpsready-out"
DEFAULT_STEPS = 6  # as `mpsready record`: 1 warm-up + 5 measured (mpsready.record.timing.MIN_MEASURED)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="run scan, env, trace, record and compare as far as this machine allows, then report",
        description="Runs the stages in order (scan; env; trace when --entry is given and PyTorch is installed; "
                    "record on the devices present; compare against --baseline), writes each stage's output and "
                    "the report (report.md, report.html, report.json) into --out. Exit 0: runs_on_mac; 1: the "
                    "verdict is --fail-on or worse; 2: usage or input error.")
    p.add_argument("path", metavar="PATH", help="the project directory")
    p.add_argument("--entry", metavar="ENTRY", help="the representative step, 'file.py:function' or "
                   "'package.module:function', relative to PATH")
    p.add_argument("--baseline", metavar="RECORD", help="a run record made elsewhere (e.g. on the CUDA server) "
                   "to compare this machine's run against")
    p.add_argument("--out", "-o", metavar="DIR", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    p.add_argument("--record-steps", type=int, default=DEFAULT_STEPS, metavar="N",
                   help=f"steps of the representative step to record on each device (default: {DEFAULT_STEPS}: "
                        "step 0 is warm-up, the time table needs 5 measured steps)")
    p.add_argument("--skip-record", action="store_true",
                   help="do not run the record stage (the trace alone predicts; no run is observed)")
    p.add_argument("--torch", default=None, help="target PyTorch release for the trace (default: the installed one)")
    p.add_argument("--macos", default=None, help=f"target macOS for the trace (default: {DEFAULT_MACOS}), e.g. 14.4")
    p.add_argument("--trace-device", choices=("mps", "cpu"), default="mps",
                   help="where the trace runs the step: mps (default; without a Mac the emulated MPS device of "
                        "`mpsready run`, where only tensors that reach MPS are judged; on a Mac the real one), or "
                        "cpu (the CPU trace: every op of the step judged as the CPU dispatches it)")
    add_judgement_options(p)
    p.set_defaults(run=lazy_run("mpsready.check.cli"))
