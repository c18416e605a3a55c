"""``mpsready trace ENTRY``: argument parsing only (no torch import at import time)."""

from __future__ import annotations

import argparse
import os
import sys

from mpsready.errors import UsageError
from mpsready.step.output import stdout_to_stderr

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
    p.add_argument("--macos", default=None, help="target macOS version (default: 15.5), e.g. 14.4")
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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from mpsready.trace.predict import DEFAULT_MACOS

    if args.from_json:
        if args.entry:
            raise UsageError("give either ENTRY or --from-json, not both")
        return _from_json(args)
    if not args.entry:
        raise UsageError("ENTRY is required (or --from-json FILE)")
    dev = args.device.split(":")[0]
    if dev not in ("cpu", "cuda", "mps"):
        raise UsageError(f"--device must be cpu, cuda or mps (emulated without a Mac), got {args.device!r}")
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    if args.project is not None and not os.path.isdir(args.project):
        raise UsageError(f"--project {args.project} is not a directory")
    try:
        import torch  # noqa: F401  (the trace runs the step)
    except ImportError:
        raise UsageError("mpsready trace needs PyTorch: pip install 'mpsready[torch]'") from None
    if dev == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available on this machine")
    from mpsready.trace.api import trace_entry

    entry = _load_entry(args.entry)
    try:
        with stdout_to_stderr():
            result = trace_entry(entry, torch=args.torch, macos=args.macos or DEFAULT_MACOS,
                                 device=args.device, fallback=args.fallback, steps=args.steps, project=args.project,
                                 nan_check=args.nan_check)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return _emit(result, args)


def _load_entry(spec: str):
    """Import the ENTRY's module. A malformed or missing ENTRY is an :class:`EntryError`; an exception
    raised by the user's own module while it is imported (a missing dependency, most often) is bad input
    too: its traceback goes to stderr and the command exits 2, never 1 (which means findings)."""
    import traceback

    from mpsready.step import EntryError, load_entry

    try:
        with stdout_to_stderr():
            return load_entry(spec)
    except EntryError:
        raise
    except SystemExit as exc:  # a training script parsing its arguments at import time
        raise UsageError(f"importing ENTRY {spec}: the module called sys.exit({exc.code}) while being imported "
                         "(keep the step in a module that does no work at import)") from None
    except Exception as exc:  # the user's module failed while being imported
        traceback.print_exc(file=sys.stderr)
        hint = (" (install the project's dependencies in this environment)"
                if isinstance(exc, ModuleNotFoundError) else "")
        raise UsageError(f"importing ENTRY {spec} raised {type(exc).__name__}: {exc}{hint}") from None


def _from_json(args: argparse.Namespace) -> int:
    import json

    from mpsready.schema import check_envelope
    from mpsready.trace.api import SCHEMA_NAME, SCHEMA_VERSION, TraceResult, default_fallback
    from mpsready.trace.model import OpTrace
    from mpsready.trace.predict import DEFAULT_MACOS, predict

    try:
        with open(args.from_json, encoding="utf-8") as fh:
            doc = check_envelope(json.load(fh), SCHEMA_NAME, SCHEMA_VERSION)
        trace = OpTrace.from_dict(doc["trace"])
    except KeyError as exc:
        raise UsageError(f"cannot read trace {args.from_json}: no {exc.args[0]!r} field") from None
    except (OSError, ValueError, TypeError, AttributeError, RecursionError) as exc:  # RecursionError: nested too deeply
        raise UsageError(f"cannot read trace {args.from_json}: {exc}") from None
    target = doc.get("target")
    torch_v = args.torch or (target.get("torch") if isinstance(target, dict) else None) or trace.torch_version
    fallback = default_fallback() if args.fallback is None else args.fallback
    try:
        pred = predict(trace, torch=torch_v, macos=args.macos or DEFAULT_MACOS, fallback=fallback)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return _emit(TraceResult(trace=trace, prediction=pred), args)


def _emit(result, args: argparse.Namespace) -> int:
    from mpsready.trace.render import RENDERERS

    if args.format == "terminal":
        text = RENDERERS["terminal"](result, color=args.output is None and sys.stdout.isatty())
    else:
        text = RENDERERS[args.format](result)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from None
    else:
        sys.stdout.write(text)
    return result.exit_code
