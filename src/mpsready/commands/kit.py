"""``mpsready kit`` arguments (the command itself: :mod:`mpsready.kit.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run

DEFAULT_KIT_STEPS = 6


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "kit", help="build a kit (code only, with a manifest of what leaves the lab) for a borrowed Mac or a "
                    "CUDA server, or sign one off",
        description="Build DIR: the project's code (never data: each file left out is listed with its reason), "
                    "mpsready itself, the entry's input spec and run-on-mac.sh, which gathers the observed "
                    "evidence on the Mac into results.tar.gz (read it with mpsready report --mac-results). "
                    "With --approve DIR --by NAME --rule TEXT: record a person's sign-off of the kit's manifest.")
    p.add_argument("path", metavar="PATH", nargs="?", help="the project folder")
    p.add_argument("--entry", metavar="ENTRY", help="the representative step: module:function or path/file.py:function")
    p.add_argument("-o", "--out", metavar="DIR", help="the kit folder to create (DIR.tar.gz is written beside it)")
    p.add_argument("--tests", action="store_true", help="also run the project's tests under pytest on the device")
    p.add_argument("--torch", metavar="VERSION", help="PyTorch release to install there (default: the one here)")
    p.add_argument("--device", choices=("mps", "cuda"), default="mps",
                   help="mps (a Mac, default) or cuda (a CUDA server: the reference record)")
    p.add_argument("--record", metavar="DIR", help="a CPU or CUDA run record whose input shapes and dtypes the "
                                                   "kit replays as synthetic inputs")
    p.add_argument("--reference", metavar="DIR",
                   help="the CUDA reference: a run record made with --synthetic-inputs from the same input spec "
                        "(results/record-device of a --device cuda kit); its statistics travel, the Mac compares")
    p.add_argument("--steps", type=int, default=DEFAULT_KIT_STEPS,
                   help=f"training steps per record (default {DEFAULT_KIT_STEPS})")
    p.add_argument("--approve", metavar="DIR", help="sign off the kit DIR (needs --by and --rule)")
    p.add_argument("--by", metavar="NAME", help="with --approve: who signs off")
    p.add_argument("--rule", metavar="TEXT", help="with --approve: the data rule under which the files may leave")
    p.set_defaults(run=lazy_run("mpsready.kit.cli"))
