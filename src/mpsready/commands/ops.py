"""``mpsready ops`` arguments (the command itself: :mod:`mpsready.ops.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ops", help="MPS operator support per PyTorch release (shipped data, predicted)",
        description="Look up MPS support of aten operator overloads in the shipped per-release tables "
                    "(predicted from PyTorch's own files; sources on every fact).")
    p.add_argument("ops", nargs="*", metavar="OP", help="e.g. aten::add.Tensor, add.Tensor, aten.relu.default")
    p.add_argument("--torch", metavar="VERSION",
                   help="PyTorch release (2.5, 2.5.1, 2.13.0+cpu); default: the installed torch, else the newest table")
    p.add_argument("--macos", metavar="VERSION", help="target macOS, e.g. 14.4 (filters macOS-dependent rules)")
    p.add_argument("--format", choices=("terminal", "json"), default="terminal")
    p.add_argument("--diff", nargs=2, metavar=("OLD", "NEW"), help="what changed between two releases")
    p.add_argument("--dump-installed", action="store_true",
                   help="on a Mac: read the installed torch's live MPS dispatcher and write a table (observed)")
    p.add_argument("-o", "--output", metavar="FILE", help="with --dump-installed: where to write (default stdout)")
    p.add_argument("--table", metavar="FILE", help="query a table written by --dump-installed instead")
    p.add_argument("--versions", action="store_true", help="list the shipped tables with wheel checksums")
    p.set_defaults(run=lazy_run("mpsready.ops.cli"))
