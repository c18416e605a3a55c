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

DEFAULT_STEPS = 6  # 1 warm-up + 5 measured (record/timing.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="run the representative step on a device and write a run record",
                       description="Run ENTRY stage by stage on DEVICE in a subprocess and write a run record "
                                   "(statistics and checksums; raw tensors only with --save-tensors).")
    p.add_argument("entry", metavar="ENTRY", help="module:function or path/file.py:function")
    p.add_argument("--device", required=True, help="cpu, cuda, cuda:N or mps")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                   help=f"training steps to run (default {DEFAULT_STEPS}: step 0 is warm-up, the rest are timed)")
    p.add_argument("--out", required=True, metavar="PATH", help="run record directory to create")
    p.add_argument("--seed", type=int, default=0, help="seed for random, numpy and torch (default 0)")
    p.add_argument("--save-tensors", action="store_true",
                   help="also write raw tensors as safetensors (raw data leaves only with this flag)")
    p.add_argument("--synthetic-inputs", metavar="PREV_RECORD",
                   help="replay random inputs with the shapes, dtypes and ranges recorded in PREV_RECORD")
    p.add_argument("--dtype", choices=("float64",), help="float64: the CPU float64 reference for compare")
    p.add_argument("--project", metavar="PATH", help="project directory whose git state goes into the env record")
    p.add_argument("--timeout", type=float, metavar="SECONDS", default=None,
                   help="kill the step and every process it started after this long (a crash; default 1800)")
    p.add_argument("--keep-output", action="store_true",
                   help="also keep the step's printed output and warning texts in the record (they may hold data)")
    p.add_argument("--no-nan-check", dest="nan_check", action="store_false",
                   help="do not watch each op's floating results for the first NaN/Inf (one reduction per result)")
    p.add_argument("--save-inputs", metavar="LAYER", default=None,
                   help="save the inputs, output and state of module LAYER per step (safetensors) for "
                        "`mpsready replay`")
    p.add_argument("--force", action="store_true", help="replace an existing run record at --out")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal",
                   help="what to print: a summary table or the manifest as JSON")
    p.set_defaults(run=run)


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
                           nan_check=args.nan_check, save_inputs=args.save_inputs,
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
