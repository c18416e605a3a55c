"""Command line: parses arguments and hands over to the stage packages.

Each subcommand's arguments live in :mod:`mpsready.commands` (``register(subparsers)``, argument
definitions only); the parser it adds sets ``run`` to a :class:`~mpsready.commands.LazyRun` of the stage's
``cli`` module, imported only when that command runs. Building the parser (``mpsready --help``) therefore
imports no stage (``tests/foundation/test_startup.py``; cost: ``benchmarks/startup_bench.py``), and
``mpsready scan`` works without PyTorch.

Global flags, accepted before or after the subcommand: ``-q/--quiet`` (no progress or status lines on
stderr) and ``-v/--verbose`` (the traceback of an internal error; ``scan`` adds per-path counts). Exit codes
(:class:`~mpsready.errors.ExitCode`): 0 clean, 1 findings at or above the threshold, 2 usage or input
error, 3 internal error. Exit 3 is decided here, once, for every subcommand: any unexpected exception
prints one line naming it, and its traceback only with ``-v`` or ``MPSREADY_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from mpsready import __version__
from mpsready.errors import ExitCode, UsageError

# (subcommand, module providing register()), in pipeline order. Each module holds argument definitions only
# (mpsready.commands): building the parser imports no stage, and each command imports what it runs when it
# runs. migrate's arguments stay in its own light cli module (its package imports nothing at import time).
SUBCOMMANDS = (
    ("scan", "mpsready.commands.scan"),
    ("rules", "mpsready.commands.rules"),
    ("env", "mpsready.commands.env"),
    ("ops", "mpsready.commands.ops"),
    ("trace", "mpsready.commands.trace"),
    ("record", "mpsready.commands.record"),
    ("compare", "mpsready.commands.compare"),
    ("replay", "mpsready.commands.replay"),
    ("report", "mpsready.commands.report"),
    ("check", "mpsready.commands.check"),
    ("run", "mpsready.commands.run"),
    ("kit", "mpsready.commands.kit"),
    ("learn", "mpsready.commands.learn"),
    ("migrate", "mpsready.migrate.cli"),
    ("demo", "mpsready.commands.demo"),
)


DEBUG_ENV = "MPSREADY_DEBUG"  # set to 1: print the traceback of an internal error, as -v does


GLOBAL_FLAGS = (
    (("-q", "--quiet"), "no progress or status lines on stderr (results and errors still print)"),
    (("-v", "--verbose"), f"the traceback of an internal error (also {DEBUG_ENV}=1); scan also prints per-path "
                          "counts on stderr"),
)


def _add_global_flags(parser: argparse.ArgumentParser, default) -> None:
    # The subcommand's copy uses SUPPRESS as default so that `mpsready -v scan .` keeps the flag given
    # before the subcommand; argparse lets a subparser's defaults overwrite the main parser's otherwise.
    # A subcommand that defines one of these strings itself keeps its own meaning for it.
    group = parser.add_argument_group("global options")
    for flags, text in GLOBAL_FLAGS:
        if not any(f in parser._option_string_actions for f in flags):
            group.add_argument(*flags, action="store_true", default=default, help=text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsready",
        description="Can this CUDA PyTorch project move to a Mac (MPS)? Evidence for scan, env, ops, "
        "trace, record, compare and report.",
        epilog="exit codes: 0 clean; 1 findings at or above the threshold; 2 usage or input error; "
               "3 internal error (a bug in mpsready)",
    )
    parser.add_argument("--version", action="version", version=f"mpsready {__version__}")
    _add_global_flags(parser, default=False)
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
    for subparser in {id(p): p for p in sub.choices.values()}.values():  # an alias shares its parser
        _add_global_flags(subparser, default=argparse.SUPPRESS)
    return parser


def _internal_error(where: str, exc: BaseException, verbose: bool) -> int:
    """One line on stderr (the traceback first with -v or MPSREADY_DEBUG=1); the exit code 3."""
    if verbose or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        import traceback  # only on the error path: start-up stays cheap

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    text = " ".join(str(exc).split())
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    print(f"{where}: internal error: {detail} (a bug in mpsready; rerun with -v or {DEBUG_ENV}=1 "
          "for the traceback)", file=sys.stderr)
    return ExitCode.INTERNAL


def _check_output_file(args: argparse.Namespace) -> None:
    """``-o/--output FILE`` naming a folder is a usage error before the command does any work (issue 34)."""
    out = getattr(args, "output", None)
    if isinstance(out, str) and out and os.path.isdir(out):
        if getattr(args, "command", None) == "compare":  # compare's own wording, as it always said it
            raise UsageError(f"--output {out}: is a directory (give a file name)")
        raise UsageError(f"-o {out}: is a folder; give a file name")


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
    except Exception as exc:  # a stage module that fails to import is a bug, not a usage error
        raw = sys.argv[1:] if argv is None else argv
        return _internal_error("mpsready", exc, any(a in ("-v", "--verbose") for a in raw))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return ExitCode.USAGE
    try:
        _check_output_file(args)
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
    except Exception as exc:  # anything else is a bug: exit 3, never 1 (which means "findings")
        return _internal_error(f"mpsready {args.command}", exc, bool(getattr(args, "verbose", False)))


if __name__ == "__main__":
    raise SystemExit(main())
