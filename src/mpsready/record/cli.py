"""``mpsready record ENTRY --device D --steps N --out PATH``: a run record of the step on one device.

Exit codes: 0 every stage passed or was skipped; 1 a stage failed or crashed; 2 usage/input
error (PyTorch not importable here, bad ENTRY, device not available here, float64 on MPS, existing output).

The default of 6 steps gives the time table 5 measured steps: step 0 is left out as warm-up
(:mod:`mpsready.record.timing`), and a median with a spread needs several steps.
"""

from __future__ import annotations

import argparse
import sys

from mpsready.errors import ExitCode, UsageError
from mpsready.commands.record import DEFAULT_STEPS, register  # noqa: F401  (the arguments: cheap to import)


def require_torch(command: str) -> None:
    """Raise :class:`UsageError` (exit 2) when PyTorch does not import here: the step runs in a child process
    of this interpreter, which would only report a crashed build stage."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError(f"mpsready {command} needs PyTorch: pip install 'mpsready[torch]'") from None


def run(args: argparse.Namespace) -> int:
    require_torch("record")
    import os
    import signal

    from mpsready.record.recorder import DEFAULT_TIMEOUT, Interrupted, record_entry
    from mpsready.record.render import render_json, render_terminal

    try:
        rec = record_entry(args.entry, device=args.device, steps=args.steps, out=args.out, seed=args.seed,
                           save_tensors=args.save_tensors, synthetic_inputs=args.synthetic_inputs, dtype=args.dtype,
                           project=args.project, force=args.force, keep_output=args.keep_output,
                           nan_check=args.nan_check, save_inputs=args.save_inputs, label=args.label,
                           timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout)
    except Interrupted as exc:
        sys.stderr.write(f"mpsready record: {exc}: the step and every process it started were ended; "
                         f"{args.out} was not changed\n")
        sys.stderr.flush()
        signal.signal(exc.signum, signal.SIG_DFL)  # die of the same signal, as the caller expects
        os.kill(os.getpid(), exc.signum)
        return 128 + exc.signum
    if args.format == "json":
        sys.stdout.write(render_json(rec))
    else:
        render_terminal(rec)
    bad = [s for s in rec.stages if s["status"] in ("failed", "crashed")]
    return ExitCode.FINDINGS if bad else ExitCode.OK
