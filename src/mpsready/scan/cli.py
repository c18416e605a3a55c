"""``mpsready scan PATH``: parse arguments, run :func:`mpsready.scan.scan_path`, render, exit 0/1/2.

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings at or above it; 2 usage or input error
(missing path, bad option). Options given on the command line override ``[tool.mpsready]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mpsready.errors import ExitCode, UsageError
from mpsready.findings import Severity

PROGRESS_MIN_FILES = 200


def _codes(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out += [c.strip().upper() for c in v.split(",") if c.strip()]
    return tuple(out)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scan", help="static audit: what ties a project to CUDA (never runs it)",
                       description="Read a project's files (never import or run them) and report everything that ties "
                       "it to CUDA or would break or degrade on a Mac (MPS), with a static outlook.")
    p.add_argument("path", help="project directory (or a single file)")
    p.add_argument("--format", choices=("terminal", "json", "sarif", "md"), default="terminal")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--fail-on", choices=[s.value for s in Severity], default=None,
                   help="exit 1 when a finding is at or above this severity (default: blocker)")
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="drop these codes or prefixes (comma-separated)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching this glob (repeatable)")
    p.add_argument("--max-file-size", type=int, metavar="BYTES", help="skip larger files with INP103 (default 5000000)")
    p.add_argument("--cache-dir", metavar="DIR", help="content-hash cache directory (default ~/.cache/mpsready)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes for Python analysis (default: CPU count)")
    p.add_argument("--no-config", action="store_true", help="ignore [tool.mpsready] in the project's pyproject.toml")
    p.add_argument("--no-gitignore", action="store_true", help="also scan what the project's .gitignore files ignore")
    p.set_defaults(run=run)


def build_config(args: argparse.Namespace):
    from mpsready.scan.cache import default_cache_dir
    from mpsready.scan.config import ScanConfig

    explicit: set[str] = set()
    kw: dict = {}
    if args.select:
        kw["select"], _ = _codes(args.select), explicit.add("select")
    if args.ignore:
        kw["ignore"], _ = _codes(args.ignore), explicit.add("ignore")
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
    from mpsready.scan.formats import FORMATS

    config, explicit = build_config(args)
    progress, stop = _progress_bar()
    try:
        result = scan_path(args.path, config, progress=progress, explicit=explicit)
    finally:
        stop()
    fmt = FORMATS[args.format]()
    if args.format == "terminal" and not args.output:
        from rich.console import Console

        fmt.print(result, Console())
    else:
        text = fmt.render(result)
        if args.output:
            try:
                Path(args.output).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        else:
            sys.stdout.write(text)
    return ExitCode.FINDINGS if result.failed() else ExitCode.OK


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
