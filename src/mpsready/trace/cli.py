"""``mpsready trace ENTRY``: argument parsing only (no torch import at import time)."""

from __future__ import annotations

import argparse
import os
import sys

from mpsready import versions
from mpsready.errors import UsageError
from mpsready.step.output import stdout_to_stderr
from mpsready.commands.trace import FORMATS, register  # noqa: F401  (the arguments: cheap to import)


def run(args: argparse.Namespace) -> int:
    from mpsready.trace.predict import DEFAULT_MACOS

    if args.macos is not None:
        try:
            versions.check_macos(args.macos)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
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


MAX_TRACE_BYTES = 512 * 1024 * 1024  # a trace document of a long step is tens of MB


def _from_json(args: argparse.Namespace) -> int:
    import json

    from mpsready.schema import check_envelope
    from mpsready.trace.api import SCHEMA_NAME, SCHEMA_VERSION, TraceResult, default_fallback
    from mpsready.trace.model import OpTrace
    from mpsready.trace.predict import DEFAULT_MACOS, predict

    try:
        from mpsready.safeio import read_bounded

        # a regular file only: a named pipe hung --from-json for ever (issue 34)
        raw = read_bounded(args.from_json, MAX_TRACE_BYTES, follow_links=True)
        doc = check_envelope(json.loads(raw.decode("utf-8")), SCHEMA_NAME, SCHEMA_VERSION)
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
    from mpsready.output import cannot_write_verbatim, emit
    from mpsready.trace.render import RENDERERS

    if args.format == "terminal":
        text = RENDERERS["terminal"](result, color=args.output is None and sys.stdout.isatty())
    else:
        text = RENDERERS[args.format](result)
    emit(text, args.output, error=cannot_write_verbatim)
    return result.exit_code
