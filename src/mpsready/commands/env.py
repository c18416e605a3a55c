"""``mpsready env`` arguments (the command itself: :mod:`mpsready.env.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("env", help="record Python, OS, chip, PyTorch/MPS/CUDA facts, settings and packages",
                       description="Record the environment (observed here), or diff two env records.")
    p.add_argument("--format", choices=("terminal", "json", "text"), default="terminal",
                   help="terminal (a table), json (the record), or text (plain lines in a fenced block, to paste "
                        "into an issue)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the output to FILE instead of stdout")
    p.add_argument("--project", metavar="PATH", help="project directory whose git commit and dirty state to record")
    p.add_argument("--diff", nargs=2, metavar=("A.json", "B.json"),
                   help="list what differs between two env records (numerics-changing first)")
    p.set_defaults(run=lazy_run("mpsready.env.cli"))
