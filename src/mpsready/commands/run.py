"""``mpsready run`` arguments (the command itself: :mod:`mpsready.run.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run
from mpsready.defaults import DEFAULT_MACOS  # the trace's default target: one default for both

FORMATS = ("terminal", "json")
# seconds: the program is stopped cleanly (outcome "stopped") after this long unless --time-limit says otherwise
# (0: no limit). A first Mac failure shows within minutes of a training run's start; a run past half an hour is
# hung or is the real training, which the emulator's CPU speed makes no faster.
DEFAULT_TIME_LIMIT = 1800.0
EXIT_CODES = ("exit codes: 0 no predicted failure; 1 a predicted Mac failure or wrong result; 2 usage or input "
              "error, or an inconclusive run (the program or this environment stopped it before the Mac could be "
              "judged); 3 no result (the run ended without one, or an internal error); 4 unverified (nothing "
              "predicted to fail, but a call judged on no data or a compiled region not vouched for: not a pass); "
              "128+N stopped by signal N. With several "
              "--torch releases the worst release decides, in the order 1, 3, 2, 4.")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="run your unmodified program as it would run on a Mac (emulated MPS device; predicted)",
        description="Run PROGRAM (python script.py ARGS, python -m pkg.mod ARGS or script.py ARGS) in a child "
                    "process on this machine as on a Mac with the given PyTorch release and macOS: MPS available, "
                    "CUDA absent, tensors on mps computed here but reporting mps, every operator judged where MPS "
                    "dispatches it. Stops at the first failure a Mac would hit. Every result is a prediction.",
        usage="mpsready run [options] -- python script.py ARGS",
        # run has its own codes (mpsready.run.document EXIT_*, matrix_exit_code); the top-level help lists only
        # 0-3, so an exit 4 was explained nowhere a user looks
        epilog=EXIT_CODES)
    p.add_argument("--torch", default=None,
                   help="target PyTorch release (default: the installed one), e.g. 2.5; a comma-separated list "
                        "(2.3,2.6,2.13) or 'all' (every shipped minor release) runs the program once per release, "
                        "in parallel, and prints one table")
    p.add_argument("--macos", default=DEFAULT_MACOS, help=f"target macOS version (default: {DEFAULT_MACOS})")
    p.add_argument("--mac", choices=("apple", "intel"), default="apple",
                   help="the Mac: apple (Apple silicon, arm64; default) or intel (an Intel Mac with an AMD GPU, "
                        "x86_64: torch 2.2 only, the last release with a macOS x86_64 wheel)")
    p.add_argument("--fallback", action="store_true", default=None,
                   help="PYTORCH_ENABLE_MPS_FALLBACK=1 on the Mac (default: as set in this environment)")
    p.add_argument("--keep-going", action="store_true",
                   help="do not stop at the first predicted failure: record it, compute on the CPU, go on")
    p.add_argument("--max-steps", type=int, default=None,
                   help="stop cleanly after N optimizer steps (N backward passes in a program that builds no optimizer)")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help=f"stop cleanly after S seconds (default: {DEFAULT_TIME_LIMIT:g}; 0: no limit)")
    p.add_argument("--no-nan-check", dest="nan_check", action="store_false",
                   help="do not watch each op's floating results for the first NaN/Inf (one reduction per result)")
    p.add_argument("--format", choices=FORMATS, default="terminal")
    p.add_argument("--output", "-o", default=None, help="write the result (terminal text or JSON) to FILE")
    p.add_argument("--show-output", action="store_true",
                   help="with several --torch releases: show every release's program output (default: the last "
                        "lines of each release that did not end cleanly)")
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- then the command line of your program")
    p.set_defaults(run=lazy_run("mpsready.run.cli"))
