"""``mpsready replay`` arguments (the command itself: :mod:`mpsready.replay.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="re-run the first diverging layer alone from recorded inputs: op or accumulated",
                       description="Re-run one layer of record A alone from its saved inputs (record --save-inputs "
                                   "LAYER), on this machine's devices and a float64 CPU reference, and say whether "
                                   "the layer itself makes the divergence between A and B (an op) or its inputs "
                                   "brought it (accumulated).")
    p.add_argument("a", metavar="A", help="run record with the layer's saved inputs (e.g. the CUDA record)")
    p.add_argument("b", metavar="B", help="the run record it diverges from (e.g. the MPS record)")
    p.add_argument("--layer", metavar="NAME", default=None,
                   help="module path to replay (default: the first diverging layer of compare A B)")
    p.add_argument("--step", type=int, default=None, help="recorded step (default: that of the first divergence, or 0)")
    p.add_argument("--entry", metavar="ENTRY", default=None,
                   help="ENTRY that builds the model (default: record A's, shown, and only when it is a file inside "
                        "--project: a record is data and must not choose the code replay runs)")
    p.add_argument("--project", metavar="DIR", default=None,
                   help="the project folder record A's entry is looked up in (default: the current folder)")
    p.add_argument("--device", action="append", default=None, metavar="D",
                   help="device to run the layer on here (repeatable; default: cpu and any cuda/mps here)")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal")
    p.set_defaults(run=lazy_run("mpsready.replay.cli"))
