"""``mpsready migrate PATH``: parse arguments, plan, render; ``--apply`` writes.

Exit codes: 0 done (or nothing to do), 1 ``--apply`` refused at least one file (changed since the
scan, or not writable), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import sys

from mpsready.errors import ExitCode


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="rewrite CUDA-only code to device-agnostic, Mac-ready code (a diff; --apply writes)",
                       description="Turn the scan's auto-fixable findings into edits (libcst: formatting and comments "
                       "survive). Prints a unified diff and writes nothing unless --apply. Findings it cannot fix "
                       "safely are listed as manual, with the reason.")
    p.add_argument("path", help="project directory (or a single file)")
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="leave these codes or prefixes alone")
    p.add_argument("--apply", action="store_true", help="write the edits in place (atomically, file by file)")
    p.add_argument("--format", choices=("diff", "json"), default="diff")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from mpsready.migrate.engine import migrate_path
    from mpsready.migrate.formats import render_diff, render_json, render_summary
    from mpsready.scan.config import check_codes, split_codes

    select, ignore = split_codes(args.select), split_codes(args.ignore)
    check_codes(select, "--select")  # an unknown code is a usage error (exit 2), as in scan: the gate fails closed
    check_codes(ignore, "--ignore")
    from mpsready.migrate.progress import for_cli

    progress = for_cli(getattr(args, "quiet", False))  # stderr only, a terminal only, after a second
    try:
        plan = migrate_path(args.path, select=select, ignore=ignore, progress=progress)
    finally:
        if progress:
            progress.stop()
    applied = refused = removed = kept = None
    if args.apply:
        from mpsready.migrate.apply import apply_plan

        result = apply_plan(plan)
        applied, refused, removed, kept = result.written, result.refused, result.removed, result.leftovers_kept
    if args.format == "json":
        sys.stdout.write(render_json(plan, applied=applied, refused=refused, removed=removed, leftovers_kept=kept))
    else:
        if not args.apply:
            sys.stdout.write(render_diff(plan))
        sys.stderr.write(render_summary(plan, applied=applied, refused=refused, removed=removed, leftovers_kept=kept))
    return ExitCode.FINDINGS if refused else ExitCode.OK
