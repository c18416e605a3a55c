"""``mpsready compare A B [--reference C]``: argument parsing and wiring only.

Imports numpy lazily (in ``run``), never torch, so ``mpsready --help`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mpsready.commands.compare import DESCRIPTION, EPILOG, register  # noqa: F401  (the arguments: cheap to import)
from mpsready.errors import ExitCode, UsageError


def run(args: argparse.Namespace) -> int:
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise UsageError("mpsready compare needs numpy: pip install 'mpsready[report]' (or numpy)") from None
    if args.plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plots needs matplotlib: pip install 'mpsready[report]' (or matplotlib)") from None
    from mpsready.compare.engine import DEFAULT_K, compare_records
    from mpsready.compare.tensorio import RawTensorError
    from mpsready.compare.tolerances import build_spec, find_pyproject, load_config
    from mpsready.record.layout import RecordError

    cfg_path = None
    if not args.no_config:
        if args.config:
            cfg_path = Path(args.config)
            if not cfg_path.is_file():
                raise UsageError(f"--config {args.config}: no such file")
        else:
            cfg_path = find_pyproject(".")
    config = load_config(cfg_path)
    spec = build_spec(config, str(cfg_path) if cfg_path else None, args.tolerance, args.rtol, args.atol)
    k = args.k if args.k is not None else config.get("k", DEFAULT_K)
    try:
        k = float(k)
    except (TypeError, ValueError):
        raise UsageError(f"k must be a number, got {k!r}") from None
    if not k >= 1.0:
        raise UsageError(f"k must be >= 1 (B counts as worse when err(B,C) > k*err(A,C)); got {k}")
    labels = tuple(x.strip() for x in args.label)
    if len(labels) > (3 if args.reference else 2) or any(not x for x in labels):
        raise UsageError(f"--label: give at most one non-empty name per run (A, B{', reference' if args.reference else ''}), "
                         f"in that order; got {list(args.label)}")
    _check_outputs(args)  # before the comparison, so a bad --output or --plots wastes no work
    try:
        comp = compare_records(args.a, args.b, reference=args.reference, tolerances=spec, k=k,
                               trust_checksums=not args.verify_bytes, labels=labels, histogram=args.histogram)
    except (RecordError, RawTensorError) as exc:
        raise UsageError(str(exc)) from None
    code = int(ExitCode.OK if comp.ok else ExitCode.FINDINGS)
    plots = None
    if args.plots:
        from mpsready.compare.formats.plots import write_plots

        try:
            plots = write_plots(comp, args.plots)
        except OSError as exc:
            raise UsageError(f"--plots {args.plots}: cannot write: {exc.strerror or exc}") from None
    if args.format == "json":
        from mpsready.compare.formats import json_doc

        text = json_doc.render(comp, code)
        if plots:
            import json

            doc = json.loads(text)
            doc["plots"] = plots
            text = json.dumps(doc, indent=2) + "\n"
        _emit(text, args.output)
    elif args.format == "md":
        from mpsready.compare.formats import markdown

        _emit(markdown.render(comp, args.all, plots), args.output)
    else:
        from mpsready.compare.formats import terminal
        from mpsready.output import console_for, option_cannot_write

        # rich falls back to 80 columns when stdout is not a terminal; a piped table reads better wider
        with console_for(args.output, pipe_width=140, error=option_cannot_write("--output")) as console:
            terminal.render(comp, console, args.all)
            if plots:
                console.print("plots: " + ", ".join(plots.values()), highlight=False)
    return code


def _check_outputs(args: argparse.Namespace) -> None:
    """Raise :class:`UsageError` when ``--output`` or ``--plots`` cannot be written (``--plots`` is created)."""
    if args.output:
        out = Path(args.output)
        if out.is_dir():
            raise UsageError(f"--output {args.output}: is a directory (give a file name)")
        if not out.parent.is_dir():
            raise UsageError(f"--output {args.output}: directory {out.parent} does not exist")
    if args.plots:
        try:
            Path(args.plots).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--plots {args.plots}: cannot create the directory: {exc.strerror or exc}") from None


def _emit(text: str, output: str | None) -> None:
    from mpsready.output import emit, option_cannot_write

    emit(text, output, error=option_cannot_write("--output"))
