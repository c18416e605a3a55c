"""``mpsready record`` arguments (the command itself: :mod:`mpsready.record.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run

DEFAULT_STEPS = 6  # 1 warm-up + 5 measured (record/timing.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="run the representative step on a device and write a run record",
                       description="Run ENTRY stage by stage on DEVICE in a subprocess and write a run record "
                                   "(statistics and checksums; raw tensors only with --save-tensors).")
    p.add_argument("entry", metavar="ENTRY", help="module:function or path/file.py:function")
    p.add_argument("--device", required=True, help="cpu, cuda, cuda:N or mps")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                   help=f"training steps to run (default {DEFAULT_STEPS}: step 0 is warm-up, the rest are timed)")
    p.add_argument("--out", "-o", required=True, metavar="PATH", help="run record directory to create")
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
    p.add_argument("--label", metavar="NAME", default=None,
                   help="a name for this run (e.g. cpu-eager, mps-fp16), shown by compare and report beside the device")
    p.add_argument("--force", action="store_true", help="replace an existing run record at --out")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal",
                   help="what to print: a summary table or the manifest as JSON")
    p.set_defaults(run=lazy_run("mpsready.record.cli"))
