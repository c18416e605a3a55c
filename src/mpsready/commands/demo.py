"""``mpsready demo`` arguments (the command itself: :mod:`mpsready.check.demo`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run

DEFAULT_OUT = "mpsready-demo"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="run check on the bundled example project and print where the report is",
        description="Copies the bundled example project (a small CUDA-flavoured transformer) into --out, runs "
                    "mpsready check on it with its representative step, and prints the paths of the Markdown and "
                    "HTML reports. Opens nothing. Exit 0 when the report was written (whatever the verdict), 2 on "
                    "a usage error.")
    p.add_argument("--out", metavar="DIR", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    p.set_defaults(run=lazy_run("mpsready.check.demo"))
