"""``mpsready report``: build the decision report from stage outputs produced earlier (anywhere)."""

from __future__ import annotations

import argparse
import sys

from mpsready.errors import ExitCode, UsageError
from mpsready.findings import Verdict
from mpsready.report.verdict import Situation

FORMATS = ("terminal", "md", "html", "json")


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0 (memory in GB, a time budget in hours)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def add_judgement_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``report`` and ``check``: the situation, the real job, the exit threshold."""
    p.add_argument("--situation", choices=[s.value for s in Situation],
                   help="what the Mac is for; decides the critical checklist items (default: inferred and stated)")
    p.add_argument("--steps", type=int, dest="job_steps", metavar="N",
                   help="steps of the real job, for the time projection (long jobs imply --situation long_training)")
    p.add_argument("--mac-memory-gb", type=positive_number, metavar="GB",
                   help="memory of the target Mac (default: from an env record made on the Mac)")
    p.add_argument("--time-budget-hours", type=positive_number, metavar="H",
                   help="the study's time budget for the real job on the Mac (PRF203 when exceeded)")
    p.add_argument("--fail-on", choices=[Verdict.MAC_FOR_DEV.value, Verdict.STAY_ON_CUDA.value],
                   default=Verdict.MAC_FOR_DEV.value,
                   help="exit 1 when the verdict is this or worse (default: mac_for_dev, i.e. anything but "
                        "runs_on_mac)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="build the decision report (checklist + verdict) from stage outputs",
        description="Build the acceptance checklist and the verdict from any subset of stage outputs. "
                    "Exit 0: runs_on_mac (or better than --fail-on); 1: the verdict is --fail-on or worse; "
                    "2: usage or input error.")
    p.add_argument("--scan", metavar="SCAN.json", help="output of mpsready scan --format json")
    p.add_argument("--env", metavar="ENV.json", help="output of mpsready env --format json")
    p.add_argument("--trace", metavar="TRACE.json", help="output of mpsready trace --format json")
    p.add_argument("--record", metavar="DIR", action="append", default=[], help="a run record (repeatable)")
    p.add_argument("--compare", metavar="COMPARE.json", help="output of mpsready compare --format json")
    p.add_argument("--run", metavar="RUN.json", dest="run_doc",
                   help="output of mpsready run --format json (an emulated Mac run: predicted evidence)")
    p.add_argument("--tests", metavar="FILE", dest="tests_doc",
                   help="output of pytest --mps-emulate --mps-json FILE (the test suite on an emulated Mac: "
                        "predicted evidence for item 4)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="default: terminal, or md+html+json files with --out")
    p.add_argument("--out", metavar="DIR", help="write report.{md,html,json} there (all three unless --format "
                   "names one)")
    add_judgement_options(p)
    p.set_defaults(run=run)


def exit_code(verdict: Verdict, fail_on: str) -> int:
    return ExitCode.FINDINGS if verdict.rank >= Verdict(fail_on).rank else ExitCode.OK


def run(args: argparse.Namespace) -> int:
    from mpsready.report.build import build_report
    from mpsready.report.evidence import Evidence
    from mpsready.report.evidence import compare, env, record, run as run_ev, scan, tests as tests_ev, trace

    if not any((args.scan, args.env, args.trace, args.record, args.compare, args.run_doc, args.tests_doc)):
        raise UsageError("give at least one stage output: --scan, --env, --trace, --record, --compare, --run or "
                         "--tests")
    if args.job_steps is not None and args.job_steps <= 0:
        raise UsageError("--steps must be a positive number of steps")
    ev = Evidence(
        scan=scan.load(args.scan) if args.scan else None,
        env=env.load(args.env) if args.env else None,
        trace=trace.load(args.trace) if args.trace else None,
        records=[record.load(r) for r in args.record],
        compare=compare.load(args.compare) if args.compare else None,
        run=run_ev.load(args.run_doc) if args.run_doc else None,
        tests=tests_ev.load(args.tests_doc) if args.tests_doc else None,
    )
    report = build_report(ev, situation=args.situation, job_steps=args.job_steps,
                          mac_memory_gb=args.mac_memory_gb, time_budget_hours=args.time_budget_hours)
    emit(report, args.format, args.out)
    return exit_code(report.verdict.verdict, args.fail_on)


def emit(report, fmt: str | None, out: str | None) -> None:
    """Print or write ``report``: one format to stdout, or files into ``out`` (all three when ``fmt`` is None)."""
    from mpsready.report.formats import html, json, markdown, terminal
    from mpsready.report.write import write_report

    if out:
        formats = (fmt,) if fmt else ("md", "html", "json")
        written = write_report(report, out, formats)
        terminal.print_report(report)
        for f, path in written.items():
            print(f"{f}: {path}")
        return
    if fmt in (None, "terminal"):
        terminal.print_report(report)
    else:
        renderer = {"md": markdown.render, "html": html.render, "json": json.render}[fmt]
        sys.stdout.write(renderer(report))
