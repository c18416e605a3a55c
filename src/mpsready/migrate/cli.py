"""``mpsready migrate PATH``: parse arguments, plan, render; ``--apply`` writes; ``--verify -- CMD`` proves.

``migrate PATH`` keeps the plan it showed in the cache folder; ``migrate PATH --apply`` writes that plan without
planning again when no file, rule selection or version it was planned from changed (:mod:`mpsready.migrate.stored`),
and otherwise plans again and says why.

Exit codes: 0 done (or nothing to do; with ``--verify``: verified), 1 ``--apply`` refused at least one file
(changed since the scan, or not writable) or ``--verify`` did not verify the plan (with ``--apply``: nothing
written), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mpsready.errors import ExitCode, UsageError
from mpsready.defaults import MAX_TIME_LIMIT_S

if TYPE_CHECKING:
    from mpsready.migrate.engine import Plan
    from mpsready.migrate.progress import PlanProgress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="rewrite CUDA-only code to device-agnostic, Mac-ready code (a diff; --apply writes)",
                       description="Turn the scan's auto-fixable findings into edits (libcst: formatting and comments "
                       "survive). Prints a unified diff and writes nothing unless --apply. Findings it cannot fix "
                       "safely are listed as manual, with the reason.")
    p.add_argument("path", help="project directory (or a single file)")
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    p.add_argument("--ignore", action="append", metavar="CODES", help="leave these codes or prefixes alone")
    p.add_argument("--apply", action="store_true", help="write the edits in place (atomically, file by file); the plan "
                   "the last run without --apply showed is written as it is, without planning again, when no file "
                   "the scan reads, --select/--ignore or the mpsready version changed since (else it plans again "
                   "and says why)")
    p.add_argument("--format", choices=("diff", "json"), default="diff")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="processes for the scan and the plan of many files (default: CPU count)")
    p.add_argument("--cache-dir", metavar="DIR", help="where the plan shown is kept for --apply (default: the scan's "
                   "cache, $MPSREADY_CACHE_DIR or ~/.cache/mpsready)")
    p.add_argument("--no-cache", action="store_true", help="neither keep the plan shown nor reuse one: --apply "
                   "always plans again")
    p.add_argument("--verify", action="store_true",
                   help="apply the plan to a temporary copy and prove it with the command after --: the same CPU numbers "
                   "as the original, and the emulated Mac (mpsready run) completes with tensors on MPS; with --apply, "
                   "write only a verified plan")
    p.add_argument("--torch", default=None, metavar="RELEASES",
                   help="with --verify: PyTorch releases for the emulated Mac, comma-separated or all (default: 2.3,2.13)")
    p.add_argument("--max-steps", type=int, default=None, help="with --verify: optimizer steps per run (default 3; 0: no limit)")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="with --verify: seconds per run (default 300)")
    p.add_argument("--cwd", default=None, metavar="DIR",
                   help="with --verify: the project folder to run the command from (default: its root)")
    # dest is not "command": that attribute names the subcommand in every error line (``mpsready migrate: error``)
    p.add_argument("verify_command", metavar="command", nargs=argparse.REMAINDER,
                   help="with --verify: -- then the command that runs the project, "
                   "from its root (python train.py ARGS, or a notebook: nb.ipynb)")
    p.set_defaults(run=run, migrate_parser=p)


def split_remainder(remainder: list[str]) -> tuple[list[str], list[str]]:
    """``(options, command)`` of what argparse.REMAINDER kept after PATH. Options after PATH land there: they come
    first, and the command is what follows their ``--``. A remainder that starts with no option is the command as a
    whole: argparse dropped the ``--`` (``migrate --verify PATH -- python train.py``; h40b: this dropped ``python``
    too), and a ``--`` inside it is the program's own."""
    if not remainder or not remainder[0].startswith("-"):
        return [], remainder
    split = remainder.index("--") if "--" in remainder else len(remainder)
    return remainder[:split], remainder[split + 1:]


def _options_and_command(args: argparse.Namespace) -> list[str]:
    """Parse the options argparse.REMAINDER kept after PATH into ``args`` and return the --verify command. A word
    after them that is no option's value (``--verify python train.py``, no ``--``) is a usage error naming it;
    so are the --verify options without --verify (h40c: ``--max-steps`` alone was accepted and did nothing)."""
    head, command = split_remainder(list(args.verify_command or []))
    if head:
        path = args.path
        args.migrate_parser.parse_args([*head, path], namespace=args)
        if args.path != path or args.verify_command:  # a word after the options that is no option's value
            raise UsageError(f"unexpected arguments {' '.join([args.path, *args.verify_command][:-1])!r}: the command "
                             "goes after --, as in mpsready migrate PATH --verify -- python train.py ARGS")
    given = [opt for opt, value in (("--torch", args.torch), ("--max-steps", args.max_steps),
                                    ("--time-limit", args.time_limit), ("--cwd", args.cwd)) if value is not None]
    if given and not args.verify:
        raise UsageError(f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} with --verify")
    args.torch = "2.3,2.13" if args.torch is None else args.torch
    args.max_steps = 3 if args.max_steps is None else args.max_steps
    args.time_limit = 300.0 if args.time_limit is None else args.time_limit
    args.cwd = "." if args.cwd is None else args.cwd
    return command


def run(args: argparse.Namespace) -> int:
    from mpsready.migrate.formats import render_cells, render_diff, render_json, render_summary
    from mpsready.scan.config import check_codes, split_codes

    command = _options_and_command(args)
    select, ignore = split_codes(args.select), split_codes(args.ignore)
    check_codes(select, "--select")  # an unknown code is a usage error (exit 2), as in scan: the gate fails closed
    check_codes(ignore, "--ignore")
    if args.verify and not command:
        raise UsageError("--verify needs the command that runs the project: mpsready migrate PATH --verify -- python "
                         "train.py ARGS")
    if command and not args.verify:
        raise UsageError(f"unexpected arguments {' '.join(command)!r} (a command goes with --verify)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.max_steps < 0 or not 0 < args.time_limit <= MAX_TIME_LIMIT_S:  # nan and inf too (h40b)
        raise UsageError(f"--max-steps must be 0 or more and --time-limit positive, at most {MAX_TIME_LIMIT_S:,} s "
                         "(a year)")
    releases = [r.strip() for r in str(args.torch).split(",") if r.strip()]
    if args.verify:  # as mpsready run reads --torch: 'all', a release without a table: exit 2 before any run
        from mpsready.run.matrix import parse_releases

        releases = [req for req, _ in parse_releases(str(args.torch))]
    if args.verify and os.path.isdir(args.path):
        from mpsready.migrate.verify import check_cwd

        check_cwd(Path(args.path), args.cwd)  # before any work: the runs happen in the copy, never in the project
    from mpsready.migrate.progress import for_cli

    progress = for_cli(getattr(args, "quiet", False))  # stderr only, a terminal only, after a second
    try:
        plan = _plan(args, select, ignore, progress)
    finally:
        if progress:
            progress.stop()
    verified = None
    if args.verify:
        verified, stop = _verify(args, plan, command, releases)
        if stop is not None:
            return stop
    applied = refused = removed = kept = None
    if args.apply:
        from mpsready.migrate.apply import apply_plan
        from mpsready.migrate.progress import progress as progress_bar

        with progress_bar(len(plan.files), "writing files", getattr(args, "quiet", False)) as advance:
            # stderr only, a terminal only, after a second; without a bar, the plain call
            result = apply_plan(plan, on_file=advance) if advance.bar.live else apply_plan(plan)
        applied, refused, removed, kept = result.written, result.refused, result.removed, result.leftovers_kept
        cache_dir = _cache_dir(args)
        if cache_dir is not None:
            from mpsready.migrate.stored import forget

            forget(cache_dir, args.path)  # planned from the files as they were before this run wrote them
    if args.format == "json":
        sys.stdout.write(render_json(plan, applied=applied, refused=refused, removed=removed, leftovers_kept=kept,
                                     verify=verified.to_dict() if verified is not None else None))
    else:
        if not args.apply:
            sys.stdout.write(render_diff(plan))
            cells = render_cells(plan)  # stderr: the stdout diff stays what git apply reads
            if cells:
                sys.stderr.write("notebook cells as they change (Python, for review; the diff above is the JSON):\n"
                                 + cells)
        sys.stderr.write(render_summary(plan, applied=applied, refused=refused, removed=removed, leftovers_kept=kept))
    if verified is not None and not verified.verified:
        return ExitCode.FINDINGS
    return ExitCode.FINDINGS if refused else ExitCode.OK


def _verify(args: argparse.Namespace, plan, command: list[str], releases: list[str]):
    """``(the VerifyResult, None)``, or ``(..., exit code)`` when migrate must stop here: a signal ended the runs,
    or ``--apply`` met a plan that did not verify (nothing is written then)."""
    from mpsready.childproc import Interrupted
    from mpsready.migrate.formats import render_json
    from mpsready.migrate.progress import run_steps
    from mpsready.migrate.verify import render_verify, verify_plan

    try:
        quiet = getattr(args, "quiet", False)
        verified = verify_plan(plan, command, releases=releases, max_steps=args.max_steps,
                               time_limit=args.time_limit, cwd=args.cwd, progress=run_steps(quiet),
                               release_line=None if quiet else lambda line: print(line, file=sys.stderr, flush=True))
    except Interrupted as exc:
        sys.stderr.write(f"mpsready migrate: {exc}: the runs and every process they started were ended, the "
                         "copies removed; nothing written\n")
        return None, 128 + exc.signum
    sys.stderr.write(render_verify(verified))
    if args.apply and not verified.verified:
        sys.stderr.write("nothing written: --apply --verify writes only a verified plan\n")
        if args.format == "json":
            sys.stdout.write(render_json(plan, verify=verified.to_dict()))
        return verified, ExitCode.FINDINGS
    return verified, None


def _say(line: str) -> None:
    """A progress line of --verify on stderr (which run, which step), flushed: a CI log shows it as it happens."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _cache_dir(args: argparse.Namespace) -> Path | None:
    from mpsready.scan.cache import default_cache_dir

    return None if args.no_cache else Path(args.cache_dir) if args.cache_dir else default_cache_dir()


def _plan(args: argparse.Namespace, select: tuple[str, ...], ignore: tuple[str, ...],
          progress: PlanProgress | None) -> Plan:
    """The plan of ``args.path``: under ``--apply`` the one stored by the last run that showed it, when it still
    holds (:mod:`mpsready.migrate.stored`; stderr says which, and why it plans again); else planned, and stored
    when this run only shows it."""
    from mpsready.migrate.engine import migrate_path
    from mpsready.scan.config import ScanConfig

    config = ScanConfig(jobs=args.jobs or (os.cpu_count() or 1))
    cache_dir = _cache_dir(args)
    if cache_dir is None or not os.path.exists(args.path):  # a missing path: migrate_path says so (exit 2)
        return migrate_path(args.path, select=select, ignore=ignore, progress=progress, config=config)
    from mpsready.migrate import stored

    plan_key, inputs = stored.key(args.path, select, ignore), stored.read_inputs(args.path, config)
    if args.apply:
        found = stored.load(cache_dir, args.path, plan_key, inputs)
        quiet = getattr(args, "quiet", False)
        if found.plan is not None:
            if not quiet:
                sys.stderr.write(f"mpsready migrate: applying the plan shown at {found.created} (no file it was "
                                 "planned from, --select/--ignore or version changed since); not planned again\n")
            if args.format != "json":  # shown again: this process did not show it (the JSON document holds it)
                from mpsready.migrate.formats import render_diff

                sys.stdout.write(render_diff(found.plan))
            return found.plan
        if found.reason and not quiet:
            sys.stderr.write(f"mpsready migrate: planning again: {found.reason}\n")
    plan = migrate_path(args.path, select=select, ignore=ignore, progress=progress, config=config)
    if not args.apply:
        stored.save(cache_dir, args.path, plan, plan_key, inputs)
    return plan
