"""Command line: parses arguments and hands over to the stage packages.

Each subcommand lives in its stage's ``cli`` module, which exposes
``register(subparsers)``; the parser it adds sets ``run=callable(args) -> int``.
Stage CLI modules import nothing heavy (no torch) at import time so that
``mpsready scan`` stays fast and works without PyTorch.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from mpsready import __version__
from mpsready.errors import ExitCode, UsageError

# (subcommand, module providing register()), in pipeline order.
SUBCOMMANDS = (
    ("scan", "mpsready.scan.cli"),
    ("rules", "mpsready.rules_cli"),
    ("env", "mpsready.env.cli"),
    ("ops", "mpsready.ops.cli"),
    ("trace", "mpsready.trace.cli"),
    ("record", "mpsready.record.cli"),
    ("compare", "mpsready.compare.cli"),
    ("report", "mpsready.report.cli"),
    ("check", "mpsready.report.check_cli"),
    ("run", "mpsready.run.cli"),
    ("demo", "mpsready.report.demo_cli"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsready",
        description="Can this CUDA PyTorch project move to a Mac (MPS)? Evidence for scan, env, ops, "
        "trace, record, compare and report.",
    )
    parser.add_argument("--version", action="version", version=f"mpsready {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _name, module in SUBCOMMANDS:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            # stage (or its package) not built yet in this checkout
            if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return ExitCode.USAGE
    try:
        return int(run(args))
    except UsageError as exc:
        print(f"mpsready {args.command}: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`mpsready rules --format json | head`): stop quietly, as cat does under
        # SIGPIPE (128 + 13), and point stdout at devnull so the final flush cannot raise again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
