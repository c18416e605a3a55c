"""``mpsready scan PATH [PATH ...]``: parse arguments, run :func:`mpsready.scan.scan_path` on each path,
render, exit 0/1/2.

Exit codes: 0 nothing at or above ``--fail-on`` (or ``--exit-zero``); 1 findings at or above it in any
path; 2 usage or input error (a missing path, a bad option, an unknown rule code or prefix in
``--select``/``--ignore`` or ``[tool.mpsready]``), before anything is written; 3 internal error
(:mod:`mpsready.cli`). Options given on the command line override ``[tool.mpsready]``.

Several paths: ``json`` writes one document per path, one per line (JSON Lines); ``sarif`` one log with a
run per path; the other formats one section per path, in the order given.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mpsready.errors import ExitCode, UsageError
from mpsready.findings import Severity
from mpsready.commands.scan import register  # noqa: F401  (the arguments: cheap to import)

PROGRESS_MIN_FILES = 200


def build_config(args: argparse.Namespace):
    from mpsready.scan.cache import default_cache_dir
    from mpsready.scan.config import ScanConfig, check_codes, split_codes

    explicit: set[str] = set()
    kw: dict = {}
    if args.select:
        kw["select"], _ = split_codes(args.select), explicit.add("select")
        check_codes(kw["select"], "--select")
    if args.ignore:
        kw["ignore"], _ = split_codes(args.ignore), explicit.add("ignore")
        check_codes(kw["ignore"], "--ignore")
    if args.exclude:
        kw["exclude"], _ = tuple(args.exclude), explicit.add("exclude")
    if args.fail_on:
        kw["fail_on"], _ = Severity.parse(args.fail_on), explicit.add("fail_on")
    if args.max_file_size is not None:
        if args.max_file_size <= 0:
            raise UsageError("--max-file-size must be a positive number of bytes")
        kw["max_file_size"], _ = args.max_file_size, explicit.add("max_file_size")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    kw["jobs"] = args.jobs or (os.cpu_count() or 1)
    kw["cache_dir"] = None if args.no_cache else Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    kw["read_project_config"] = not args.no_config
    kw["gitignore"] = not args.no_gitignore
    return ScanConfig(**kw), frozenset(explicit)


def run(args: argparse.Namespace) -> int:
    from mpsready.scan.engine import scan_path

    config, explicit = build_config(args)
    for path in args.paths:  # every path checked before any is scanned: a typo costs nothing and writes nothing
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or directory")
    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    results = []
    for path in args.paths:
        progress, stop = _progress_bar() if not quiet else (None, lambda: None)
        try:
            result = scan_path(path, config, progress=progress, explicit=explicit)
        finally:
            stop()
        if verbose:
            print(f"mpsready scan {path}: {result.files_scanned} files, {result.lines_scanned} lines in "
                  f"{result.seconds:.2f} s; {result.cache_hits} from the cache; {result.suppressed} suppressed",
                  file=sys.stderr)
        result.exit_zero = bool(args.exit_zero)
        results.append(result)
    _write(results, args.format, args.output)
    if args.exit_zero:
        return ExitCode.OK
    return ExitCode.FINDINGS if any(r.failed() for r in results) else ExitCode.OK


def _write(results: list, fmt_name: str, output: str | None) -> None:
    from mpsready.scan.formats import FORMATS
    from mpsready.scan.formats.json import JsonFormat, to_document
    from mpsready.scan.formats.sarif import SarifFormat

    fmt = FORMATS[fmt_name]()
    if fmt_name == "terminal" and not output:
        from rich.console import Console

        console = Console()
        for result in results:
            if len(results) > 1:
                console.rule(f"mpsready scan {result.root}")
            fmt.print(result, console)
        return
    if len(results) == 1:
        text = fmt.render(results[0])
    elif isinstance(fmt, SarifFormat):
        text = fmt.render_many(results)
    elif isinstance(fmt, JsonFormat):
        import json

        text = "".join(json.dumps(to_document(r)) + "\n" for r in results)  # JSON Lines: one scan a line
    else:
        text = "\n".join(fmt.render(r) for r in results)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)


def _progress_bar():
    """A rich progress bar on stderr for large trees (shown only on a terminal)."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    state: dict = {}

    def update(done: int, total: int) -> None:
        if total < PROGRESS_MIN_FILES:
            return
        if "bar" not in state:
            bar = Progress("analysing Python files", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=Console(stderr=True), transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task("scan", total=total)
        state["bar"].update(state["task"], completed=done)

    def stop() -> None:
        if "bar" in state:
            state["bar"].stop()

    return update, stop
