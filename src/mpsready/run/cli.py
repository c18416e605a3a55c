"""``mpsready run [options] -- python script.py ARGS``: argument parsing and the child process only."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from mpsready.errors import ExitCode, UsageError
from mpsready.trace.predict import DEFAULT_MACOS  # the trace's default target: one default for both

FORMATS = ("terminal", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="run your unmodified program as it would run on a Mac (emulated MPS device; predicted)",
        description="Run PROGRAM (python script.py ARGS, python -m pkg.mod ARGS or script.py ARGS) in a child "
                    "process on this machine as on a Mac with the given PyTorch release and macOS: MPS available, "
                    "CUDA absent, tensors on mps computed here but reporting mps, every operator judged where MPS "
                    "dispatches it. Stops at the first failure a Mac would hit. Every result is a prediction.",
        usage="mpsready run [options] -- python script.py ARGS")
    p.add_argument("--torch", default=None, help="target PyTorch release (default: the installed one), e.g. 2.5")
    p.add_argument("--macos", default=DEFAULT_MACOS, help=f"target macOS version (default: {DEFAULT_MACOS})")
    p.add_argument("--fallback", action="store_true", default=None,
                   help="PYTORCH_ENABLE_MPS_FALLBACK=1 on the Mac (default: as set in this environment)")
    p.add_argument("--keep-going", action="store_true",
                   help="do not stop at the first predicted failure: record it, compute on the CPU, go on")
    p.add_argument("--max-steps", type=int, default=None, help="stop cleanly after N optimizer steps")
    p.add_argument("--time-limit", type=float, default=None, metavar="S", help="stop cleanly after S seconds")
    p.add_argument("--format", choices=FORMATS, default="terminal")
    p.add_argument("--output", "-o", default=None, help="write the result (terminal text or JSON) to FILE")
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- then the command line of your program")
    p.set_defaults(run=run)


def _target_torch(requested: str | None) -> str:
    from mpsready.ops import api as ops_api

    if requested is None:
        from mpsready.trace.api import installed_torch_version

        requested = installed_torch_version()
    try:
        ops_api.load_db(requested)
        ops_api._vtuple(requested)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return requested


def run(args: argparse.Namespace) -> int:
    from mpsready.ops import api as ops_api
    from mpsready.run.command import parse_program
    from mpsready.run.render import render_terminal

    import importlib.util

    prog = parse_program(args.program)
    if importlib.util.find_spec("torch") is None:
        raise UsageError("mpsready run needs PyTorch in this environment: pip install 'mpsready[torch]'")
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    try:
        ops_api._vtuple(args.macos)
    except ValueError:
        raise UsageError(f"--macos {args.macos!r} is not a macOS version such as 14.4") from None
    torch_v = _target_torch(args.torch)
    fallback = args.fallback if args.fallback is not None else os.environ.get("PYTORCH_ENABLE_MPS_FALLBACK") == "1"
    with tempfile.TemporaryDirectory(prefix="mpsready-run-") as tmp:
        out = os.path.join(tmp, "result.json")
        spec = {"program": {**prog.to_dict(), "root": prog.root},
                "target": {"torch": torch_v, "macos": args.macos, "fallback": fallback},
                "keep_going": args.keep_going, "max_steps": args.max_steps, "time_limit": args.time_limit,
                "out": out}
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        env = dict(os.environ)
        env["PYTORCH_ENABLE_MPS_FALLBACK"] = "1" if fallback else "0"
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # the program's stdout is its own; with --format json on stdout, keep it apart from the document
        stdout = sys.stderr if (args.format == "json" and not args.output) else None
        proc = subprocess.run([sys.executable, "-m", "mpsready.run.child", spec_path], stdout=stdout)
        if proc.returncode == 2 and not os.path.exists(out):
            return ExitCode.USAGE
        if not os.path.exists(out):
            print(f"mpsready run: the child process ended with status {proc.returncode} before writing its "
                  "result (killed, or an abort outside Python)", file=sys.stderr)
            return 3
        with open(out, encoding="utf-8") as fh:
            doc = json.load(fh)
    text = json.dumps(doc, indent=1) + "\n" if args.format == "json" else render_terminal(doc)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"run result: {args.output}", file=sys.stderr)
        if args.format == "json":
            sys.stderr.write(render_terminal(doc))
    else:
        sys.stdout.write(text)
    return int(doc["exit_code"])
