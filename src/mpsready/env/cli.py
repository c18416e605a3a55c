"""``mpsready env``: record this environment, or ``--diff A.json B.json`` two records.

Exit codes: 0 ok; 1 a blocker finding (env) or any difference (``--diff``); 2 usage/input error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mpsready.errors import ExitCode, UsageError
from mpsready.commands.env import register  # noqa: F401  (the arguments: cheap to import)


def _emit(text: str, output: str | None) -> None:
    from mpsready.output import cannot_write_verbatim, emit

    emit(text, output, error=cannot_write_verbatim)


def run(args: argparse.Namespace) -> int:
    from mpsready.env import render

    if args.diff:
        from mpsready.env.diff import diff_env, load_env_record

        a, b = (load_env_record(x) for x in args.diff)
        diffs = diff_env(a, b)
        if args.format == "json":
            _emit(render.diff_to_json(diffs, *args.diff), args.output)
        elif args.output:
            _emit(render.diff_to_json(diffs, *args.diff), args.output)
            render.render_diff_terminal(diffs)
        else:
            render.render_diff_terminal(diffs)
        return ExitCode.FINDINGS if diffs else ExitCode.OK
    if args.project and not Path(args.project).is_dir():
        raise UsageError(f"project directory not found: {args.project}")
    from mpsready.env.collect import collect_env

    rec = collect_env(project=args.project)
    if args.format == "text":
        _emit(render.to_text(rec), args.output)
    elif args.format == "json" or args.output:
        _emit(render.to_json(rec), args.output)
    if args.format == "terminal":
        render.render_terminal(rec)
    blockers = [f for f in rec["findings"] if f["severity"] == "blocker"]
    return ExitCode.FINDINGS if blockers else ExitCode.OK
