"""``mpsready report``: build the decision report from stage outputs produced earlier (anywhere)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from mpsready.errors import ExitCode, UsageError
from mpsready.commands.report import FORMATS, add_judgement_options, positive_number, register  # noqa: F401
from mpsready.findings import Verdict

def exit_code(verdict: Verdict, fail_on: str) -> int:
    return ExitCode.FINDINGS if verdict.rank >= Verdict(fail_on).rank else ExitCode.OK


def require_html_extra(fmt: str | None) -> None:
    """``--format html`` asks for what only the ``report`` extra (jinja2) can write: a usage error (exit 2) before
    any work, rather than a report that is not written and an exit code that reads as the verdict's."""
    if fmt != "html":
        return
    try:
        import jinja2  # noqa: F401
    except ImportError:
        raise UsageError("--format html needs the 'report' extra (jinja2): pip install 'mpsready[report]'") from None


def run(args: argparse.Namespace) -> int:
    from mpsready.report.build import build_report
    from mpsready.report.evidence import Evidence
    from mpsready.report.evidence import compare, env, record, run as run_ev, scan, tests as tests_ev, trace

    require_html_extra(args.format)
    mac_results, kit_dir = getattr(args, "mac_results", None), getattr(args, "kit_dir", None)
    if not any((args.scan, args.env, args.trace, args.record, args.compare, args.run_doc, args.tests_doc,
                mac_results, kit_dir)):
        raise UsageError("give at least one stage output: --scan, --env, --trace, --record, --compare, --run, "
                         "--tests, --mac-results or --kit")
    if mac_results and kit_dir:
        raise UsageError("--kit describes a kit not yet run; with --mac-results the results carry its manifest")
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
    if mac_results:
        merge_mac(ev, mac_results)
    elif kit_dir:
        from mpsready.report.evidence import mac as mac_ev

        ev.mac = mac_ev.load_kit(kit_dir)
    report = build_report(ev, situation=args.situation, job_steps=args.job_steps,
                          mac_memory_gb=args.mac_memory_gb, time_budget_hours=args.time_budget_hours)
    emit(report, args.format, args.out)
    return exit_code(report.verdict.verdict, args.fail_on)


def merge_mac(ev, archive: str) -> None:
    """Read the kit's results archive and merge what it observed: its run records join ``--record``, its env
    record and comparison stand in for ``--env`` and ``--compare`` when those were not given."""
    from mpsready.report.evidence import mac as mac_ev

    mac = mac_ev.load(archive)
    ev.mac = mac
    ev.records += mac.records
    if ev.env is None and mac.env is not None:
        ev.env = mac.env
    if ev.compare is None and mac.compare is not None:
        ev.compare = mac.compare


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
        renderers: dict[str, Callable[[Any], str]] = {"md": markdown.render, "html": html.render, "json": json.render}
        renderer = renderers[fmt]
        sys.stdout.write(renderer(report))
