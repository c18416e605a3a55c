"""``mpsready ops``: query the shipped MPS support tables, diff releases, dump a Mac's live dispatcher.

    mpsready ops aten::grid_sampler_2d_backward --torch 2.5 --macos 14.4 [--format terminal|json]
    mpsready ops --diff 2.5 2.9
    mpsready ops --dump-installed [-o FILE]        # macOS with an MPS build of torch only
    mpsready ops --versions

No torch import at module import time (``--dump-installed`` imports it when run).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata

from mpsready.errors import ExitCode, UsageError
from mpsready.commands.ops import register  # noqa: F401  (the arguments: cheap to import)


def _default_torch() -> str:
    from mpsready.ops.api import shipped_versions

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return shipped_versions()[-1]


def _db(version: str | None):
    from mpsready.ops import api

    try:
        return api.load_db(version or _default_torch())
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_macos(text: str | None) -> None:
    if text is None:
        return
    from mpsready import versions

    try:
        versions.check_macos(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    modes = sum(bool(x) for x in (args.ops, args.diff, args.dump_installed, args.versions))
    if modes != 1:
        raise UsageError("give operator names, or one of --diff OLD NEW, --dump-installed, --versions")
    if args.output and not args.dump_installed:  # silently printing instead would leave the user without the file
        raise UsageError("--output only applies to --dump-installed; redirect stdout to save a lookup")
    if args.dump_installed:
        return _run_dump(args)
    from rich.console import Console

    from mpsready.ops import api, query, render

    console = Console()
    if args.versions:
        from mpsready.ops.api import _index

        idx = _index()
        rows = [{"torch": v, **idx["wheels"][v]} for v in idx["releases"]]
        if args.format == "json":
            print(render.to_json("versions", basis="predicted", tables=rows))
        else:
            for row in rows:
                console.print(f"{row['torch']:>7}  {row['name']}  sha256 {row['sha256']}")
        return ExitCode.OK
    if args.diff:
        old, new = _db(args.diff[0]), _db(args.diff[1])
        result = query.diff(old, new)
        if args.format == "json":
            print(render.to_json("diff", **result))
        else:
            render.diff_terminal(result, console)
        return ExitCode.OK
    _check_macos(args.macos)
    if args.table:
        from mpsready.ops.api import load_table_file

        try:
            db = load_table_file(args.table)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:  # EOFError: a truncated .gz
            raise UsageError(f"cannot read table {args.table}: {exc}") from None
    else:
        db = _db(args.torch)
    try:
        for name in args.ops:  # a typo'd or pasted-garbage name is a usage error, not an "unknown" answer
            api.check_op_name(name)
            api.check_op_known(name, db if args.table else None)  # a typo is exit 2, not "unknown" (h40c)
        results = [query.explain(db, name, macos=args.macos) for name in args.ops]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        print(render.to_json("lookup", basis=db.basis, torch=db.torch_version, macos=args.macos,
                             wheel=db.wheel, results=results))
    else:
        render.lookup_terminal(results, console)
    return ExitCode.OK


def _run_dump(args: argparse.Namespace, dispatcher=None, system: str | None = None) -> int:
    from mpsready.ops import installed
    from mpsready.schema import utc_now

    if dispatcher is None:
        if (system or sys.platform) != "darwin":  # refuse before importing torch
            try:
                installed.check_platform(_NoTorch(), system=system)
            except installed.NotOnMac as exc:
                raise UsageError(str(exc)) from None
        try:
            dispatcher = installed.TorchDispatcher()
        except ImportError as exc:
            raise UsageError(f"--dump-installed needs PyTorch installed: {exc}") from None
    try:
        installed.check_platform(dispatcher, system=system)
    except installed.NotOnMac as exc:
        raise UsageError(str(exc)) from None
    from mpsready.ops import api

    try:
        shipped = api.load_db(dispatcher.torch_version)
    except ValueError:
        shipped = None
    doc = installed.dump(dispatcher, shipped=shipped, created=utc_now())
    text = json.dumps(doc, indent=1, sort_keys=True)
    if args.output:
        from mpsready.output import cannot_write_verbatim, emit

        emit(text + "\n", args.output, error=cannot_write_verbatim)
        diffs = installed.compare(doc, shipped) if shipped is not None else []
        print(f"wrote {args.output}: {len(doc['ops'])} aten overloads observed on torch {dispatcher.torch_version}"
              + (f"; {len(diffs)} differ from the shipped table {shipped.torch_version}" if shipped else
                 "; no shipped table for this release to compare with"), file=sys.stderr)
    else:
        print(text)
    return ExitCode.OK


class _NoTorch:
    """Stand-in used only to produce the refusal message without importing torch."""

    torch_version = "(not imported)"

    def mps_available(self):
        return False, False
