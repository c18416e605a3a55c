"""``mpsready compare`` arguments (the command itself: :mod:`mpsready.compare.cli`)."""

from __future__ import annotations

import argparse

from mpsready.commands import lazy_run

DESCRIPTION = """Compare two run records (A: baseline, e.g. CUDA; B: candidate, e.g. MPS), tensor by tensor
and step by step. With --reference C (e.g. the same step on the CPU in float64) also judge, per tensor,
whether B is at least as close to C as A is. Exit 0: everything within tolerance; 1: something is not
(or could not be matched); 2: usage or input error."""

EPILOG = """Tolerances (most specific first): --tolerance PATTERN=RTOL,ATOL (fnmatch on keys such as
'activation:encoder.*' or 'grad:*', last match wins), [tool.mpsready.compare.tolerances] in pyproject.toml,
--rtol/--atol, rtol/atol in [tool.mpsready.compare], then torch.testing.assert_close's dtype defaults."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("compare", help="compare two run records (and a reference)", description=DESCRIPTION,
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="baseline run record (directory or its record.json)")
    p.add_argument("b", metavar="B", help="candidate run record")
    p.add_argument("--reference", metavar="C", help="high-precision reference record (e.g. CPU float64)")
    p.add_argument("--rtol", type=float, help="relative tolerance for every tensor without a pattern")
    p.add_argument("--atol", type=float, help="absolute tolerance for every tensor without a pattern")
    p.add_argument("--tolerance", action="append", default=[], metavar="PATTERN=RTOL,ATOL",
                   help="tolerance for keys matching an fnmatch pattern (repeatable; last match wins)")
    p.add_argument("--config", metavar="PYPROJECT",
                   help="pyproject.toml to read [tool.mpsready.compare] from (default: the nearest one)")
    p.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    p.add_argument("-k", "--k", dest="k", type=float, default=None,
                   help="three-way factor: B is worse when err(B,C) > k*err(A,C) (default 2)")
    p.add_argument("--format", choices=("terminal", "json", "md"), default="terminal")
    p.add_argument("--output", "-o", metavar="FILE", help="write the output to FILE instead of stdout")
    p.add_argument("--plots", metavar="DIR", help="write loss.svg and layer_error.svg into DIR")
    p.add_argument("--all", action="store_true",
                   help="list every tensor of every step (default: the tensors out of tolerance of the first "
                        "step with a failure, and one summary line per step)")
    p.add_argument("--label", action="append", default=[], metavar="NAME",
                   help="a name for A, then B, then the reference (repeatable, in that order; default: the "
                        "record's own --label, else its device), shown wherever the device is")
    p.add_argument("--histogram", action="store_true",
                   help="add each listed tensor's error histogram (|B - A| per decade)")
    p.add_argument("--verify-bytes", action="store_true",
                   help="compare raw tensors even when their checksums are equal (slower; checks the record)")
    p.set_defaults(run=lazy_run("mpsready.compare.cli"))
