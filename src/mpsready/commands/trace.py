"""``mpsready trace`` arguments (the command itself: :mod:`mpsready.trace.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run
from mpsready.defaults import DEFAULT_MACOS

FORMATS = ("terminal", "json", "md")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "trace", help="record the aten ops of a representative step and predict MPS failures (no Mac needed)",
        description="Run ENTRY (package.module:function or path/file.py:function) stage by stage on this machine, "
                    "record every aten operator it dispatches, and predict for a PyTorch and macOS version what "
                    "would fail, fall back to the CPU or be refused on MPS. Every result is a prediction.")
    p.add_argument("entry", metavar="ENTRY", nargs="?",
                   help="package.module:function or path/file.py:function (omit with --from-json)")
    p.add_argument("--from-json", metavar="FILE", default=None,
                   help="classify the trace saved in a `mpsready trace --format json` file again, for other "
                        "--torch/--macos values, without running the step")
    p.add_argument("--torch", default=None, help="target PyTorch release (default: the installed one), e.g. 2.13")
    p.add_argument("--macos", default=None, help=f"target macOS version (default: {DEFAULT_MACOS}), e.g. 14.4")
    p.add_argument("--device", default="mps",
                   help="where the step runs while traced: mps (default; without a Mac the emulated MPS device of "
                        "`mpsready run`, where only tensors that reach MPS are judged; on a Mac the real one), "
                        "cpu (the CPU trace: every op judged as the CPU dispatches it) or cuda")
    p.add_argument("--mps-fallback", dest="fallback", action="store_true", default=None,
                   help="assume PYTORCH_ENABLE_MPS_FALLBACK=1 on the Mac (default: as set in this environment)")
    p.add_argument("--steps", type=int, default=1, help="training steps to run (default: 1)")
    p.add_argument("--project", metavar="DIR", default=None,
                   help="the project the step exercises, when the ENTRY file lies outside it: its files count "
                        "as your code, so findings point at their lines (default: the ENTRY file's directory)")
    p.add_argument("--no-nan-check", dest="nan_check", action="store_false",
                   help="do not watch each op's floating results for the first NaN/Inf (one reduction per result)")
    p.add_argument("--format", choices=FORMATS, default="terminal")
    p.add_argument("--output", "-o", default=None, help="write the output to FILE instead of stdout")
    p.set_defaults(run=lazy_run("mpsready.trace.cli"))
