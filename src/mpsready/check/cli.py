"""``mpsready check PATH``: run every stage the machine allows, then write the report (md + html + json)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mpsready.commands.check import DEFAULT_OUT, DEFAULT_STEPS, register  # noqa: F401  (the arguments)
from mpsready.errors import UsageError
from mpsready.report.cli import exit_code
from mpsready.step.output import stdout_to_stderr
from mpsready import versions


def run_check(path: str | Path, out: str | Path, entry: str | None = None, baseline: str | None = None,
              record_steps: int = DEFAULT_STEPS, situation: str | None = None, job_steps: int | None = None,
              mac_memory_gb: float | None = None, time_budget_hours: float | None = None, quiet: bool = False,
              torch: str | None = None, macos: str | None = None, skip_record: bool = False,
              trace_device: str = "mps"):
    """Run the pipeline and write the report; returns ``(report, written paths, stage runs)``.

    ``torch``/``macos``: the trace's target (a release without a table, or a malformed macOS, is a
    :class:`UsageError` before anything runs); ``skip_record``: leave the record stage out;
    ``trace_device``: ``mps`` (default: the emulated MPS device without a Mac, the real one on a Mac) or
    ``cpu`` (the CPU trace)."""
    from rich.console import Console

    from mpsready.report.build import build_report
    from mpsready.check.pipeline import CheckPipeline
    from mpsready.progress import progress
    from mpsready.report.write import write_report

    project = Path(path)
    if not project.is_dir():
        raise UsageError(f"not a directory: {project}")
    if baseline:
        from mpsready.record.layout import RecordError, RunRecord

        try:
            RunRecord.open(baseline)  # a broken baseline is bad input, found before the stages run
        except RecordError as exc:
            raise UsageError(f"--baseline: {exc}") from None
    if record_steps < 1:
        raise UsageError("--record-steps must be >= 1")
    from mpsready.ops import api as ops_api

    try:
        if torch is not None:
            ops_api.load_db(torch)
        if macos is not None:
            versions.check_macos(macos)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if entry:
        from mpsready.step.entry import split_spec

        target, _ = split_spec(entry)  # raises a usage error for a malformed ENTRY
        if target.endswith(".py") and not (project / target).is_file():
            raise UsageError(f"entry file not found: {project / target} (ENTRY paths are relative to PATH)")
    from mpsready.report.write import prepare_out_dir

    prepare_out_dir(out)
    console = Console(stderr=True, quiet=quiet)
    marks = {"done": "[green]done[/]", "skipped": "[yellow]skipped[/]", "failed": "[red]failed[/]"}

    # a status line (stage name, the stage's elapsed time) on a terminal; the finished stages' lines print above it
    with progress(console, quiet, None, "starting") as status:
        def on_stage(stage) -> None:
            if stage.status == "running":
                status.update(description=f"[bold]{stage.name}[/] running ...", reset=True)
            else:
                console.print(f"  {stage.name:<8} {marks.get(stage.status, stage.status)} "
                              f"[dim]({stage.seconds:.1f} s)[/] {stage.detail}", highlight=False)
                if stage.error:
                    # the failing stage's exception, as Python printed it (also in OUT/<stage>.error.txt)
                    console.print(stage.error, highlight=False, markup=False)

        pipe = CheckPipeline(project, out, entry=entry, baseline=baseline, steps=record_steps, progress=on_stage,
                             torch=torch, macos=macos, skip_record=skip_record, trace_device=trace_device)
        with stdout_to_stderr():  # the user's step prints while traced: keep stdout for the report and its paths
            ev = pipe.run()
        status.update(description="[bold]report[/] writing ...", reset=True)
        report = build_report(ev, situation=situation, job_steps=job_steps, mac_memory_gb=mac_memory_gb,
                              time_budget_hours=time_budget_hours, project=str(project.resolve()))
        written = write_report(report, out)
    return report, written, pipe.runs


def run(args: argparse.Namespace) -> int:
    from mpsready.report.formats.terminal import print_report

    report, written, _ = run_check(args.path, args.out, args.entry, args.baseline, args.record_steps,
                                   args.situation, args.job_steps, args.mac_memory_gb, args.time_budget_hours,
                                   quiet=getattr(args, "quiet", False),  # -q: no stage status lines on stderr
                                   torch=args.torch, macos=args.macos, skip_record=args.skip_record,
                                   trace_device=args.trace_device)
    print_report(report)
    print_written(written)
    return exit_code(report.verdict.verdict, args.fail_on)


# How `check` and `demo` name the report files they wrote, in this order.
WRITTEN_LABELS = {"md": "Markdown report:", "html": "HTML report:", "json": "JSON report:"}
HTML_MISSING = "not written (needs jinja2: pip install mpsready[report])"


def print_written(written: dict[str, Path]) -> None:
    """Print where each report file went (stdout), labels aligned: ``Markdown report: out/report.md``."""
    width = max(len(label) for label in WRITTEN_LABELS.values())
    for fmt, label in WRITTEN_LABELS.items():
        where = written.get(fmt) or (HTML_MISSING if fmt == "html" else None)
        if where is not None:
            print(f"{label:<{width}} {where}")
