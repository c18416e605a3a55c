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

PROGRESS_MIN_FILES = 200  # Python files: a smaller tree is scanned before a bar would be read
PROGRESS_TEXT = "analysing Python files"


def build_config(args: argparse.Namespace):
    from mpsready.scan.cache import default_cache_dir
    from mpsready.scan.config import ScanConfig, check_codes, split_codes

    kw: dict = {}
    if args.select:
        kw["select"] = split_codes(args.select)
        check_codes(kw["select"], "--select")
    if args.ignore:
        kw["ignore"] = split_codes(args.ignore)
        check_codes(kw["ignore"], "--ignore")
    if args.exclude:
        kw["exclude"] = tuple(args.exclude)
    if args.fail_on:
        kw["fail_on"] = Severity.parse(args.fail_on)
    if args.max_file_size is not None:
        if args.max_file_size <= 0:
            raise UsageError("--max-file-size must be a positive number of bytes")
        kw["max_file_size"] = args.max_file_size
    explicit = set(kw)  # given on the command line: these override [tool.mpsready]
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    kw["jobs"] = args.jobs or (os.cpu_count() or 1)
    kw["cache_dir"] = None if args.no_cache else Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    scopes = getattr(args, "ignore_scopes", None)
    if scopes:
        from mpsready.scan.config import scope_names

        names = scope_names([c.strip() for v in scopes for c in v.split(",") if c.strip()])
        if names is None:
            raise UsageError("--ignore-scopes: give scopes among tests, docs, examples, distributed, vendored, main")
        kw["ignore_scopes"] = names
        explicit.add("ignore_scopes")
    kw["read_project_config"] = not args.no_config
    kw["gitignore"] = not args.no_gitignore
    return ScanConfig(**kw), frozenset(explicit)


def run(args: argparse.Namespace) -> int:
    from mpsready.progress import progress
    from mpsready.scan.engine import scan_path

    config, explicit = build_config(args)
    for path in args.paths:  # every path checked before any is scanned: a typo costs nothing and writes nothing
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or directory")
    known_prints = None
    if getattr(args, "baseline", None):
        from mpsready.scan import baseline

        known_prints = baseline.read(args.baseline)  # a bad baseline is exit 2 before any work
    if getattr(args, "write_baseline", None) and os.path.isdir(args.write_baseline):
        raise UsageError(f"--write-baseline {args.write_baseline}: is a directory; give a file name")
    if getattr(args, "statistics", False) and args.format not in ("terminal", "concise"):
        raise UsageError("--statistics prints text: use it with --format terminal or concise")
    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    results = []
    for path in args.paths:
        # stderr only, a terminal only, a large tree only: stdout (json, sarif) never sees it
        with progress(sys.stderr, quiet, None, PROGRESS_TEXT, min_total=PROGRESS_MIN_FILES) as bar:
            update = (lambda done, total: bar.update(done, total=total)) if bar.live else None
            result = scan_path(path, config, progress=update, explicit=explicit)
        if verbose:
            print(f"mpsready scan {path}: {result.files_scanned} files, {result.lines_scanned} lines in "
                  f"{result.seconds:.2f} s; {result.cache_hits} from the cache; {result.suppressed} suppressed",
                  file=sys.stderr)
        result.exit_zero = bool(args.exit_zero)
        results.append(result)
    if getattr(args, "write_baseline", None):
        return _write_baseline(results, args.write_baseline)
    if getattr(args, "add_noqa", False):
        return _add_noqa(results)
    if known_prints is not None:
        from mpsready.scan import baseline

        used: set[str] = set()
        for result in results:
            baseline.apply(result, known_prints, args.baseline, used)
        fixed = len(known_prints - used)
        for result in results:
            result.baseline.fixed = fixed
    if getattr(args, "statistics", False):
        from mpsready.output import emit
        from mpsready.scan.formats.statistics import render_statistics

        emit(render_statistics(results), args.output)
    else:
        _write(results, args.format, args.output)
    if args.format == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from mpsready.scan.formats.github import write_job_summary

        write_job_summary(results, os.environ["GITHUB_STEP_SUMMARY"])
    if args.exit_zero:
        return ExitCode.OK
    return ExitCode.FINDINGS if any(r.failed() for r in results) else ExitCode.OK


def _write(results: list, fmt_name: str, output: str | None) -> None:
    """Render ``results`` with the format registered as ``fmt_name``: through a rich console on a terminal
    (formats that print so, without ``-o``), else as text to ``output`` or stdout."""
    from mpsready.output import emit, stdout_console
    from mpsready.scan import formats

    fmt = formats.get(fmt_name)()
    if fmt.prints_to_console and not output:
        fmt.print_many(results, stdout_console())
        return
    emit(fmt.render_all(results), output)


def _write_baseline(results: list, path: str) -> int:
    """Record every finding of ``results`` in ``path`` (replacing it atomically) and exit 0."""
    import json

    from mpsready.output import emit
    from mpsready.scan import baseline

    doc = baseline.document(results)
    emit(json.dumps(doc, indent=1) + "\n", path, atomic=True)
    print(f"mpsready scan: wrote the baseline {path} ({len(doc['findings'])} findings); gate with "
          f"--baseline {path}", file=sys.stderr)
    return ExitCode.OK


def _add_noqa(results: list) -> int:
    """Write the suppression comments for every finding (:mod:`mpsready.scan.noqa`) and exit 0."""
    from mpsready.escape import visible
    from mpsready.scan.noqa import add_noqa

    for result in results:
        done = add_noqa(result)
        print(f"mpsready scan: added {done.added} '# mpsready: ignore[...]' comment(s) in {len(done.files)} file(s)",
              file=sys.stderr)
        for path, line, why in done.skipped:
            where = f"{path}:{line}" if line else path
            print(f"  not added at {visible(where)}: {why}", file=sys.stderr)
    return ExitCode.OK
