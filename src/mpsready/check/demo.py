"""``mpsready demo``: run ``check`` on the bundled example project; opens nothing, prints where the report is."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from mpsready.commands.demo import DEFAULT_OUT, register  # noqa: F401  (the arguments: cheap to import)
from mpsready.errors import ExitCode, UsageError

DEMO_ENTRY = "mpsready_step.py:step"
DEMO_JOB_STEPS = 20000  # the example's train.py default: the projection of the real job uses it


def demo_project() -> Path:
    """The example project shipped inside the package (``mpsready/examples/demo_project``)."""
    return Path(__file__).resolve().parent.parent / "examples" / "demo_project"


def prepare(out: Path) -> Path:
    """Copy the example into ``out/demo_project`` (replacing an earlier copy) and return it."""
    src = demo_project()
    if not (src / DEMO_ENTRY.split(":")[0]).is_file():
        raise UsageError(f"the bundled example project is missing from this installation ({src})")
    dst = out / "demo_project"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dst


def run(args: argparse.Namespace) -> int:
    from mpsready.check.cli import print_written, run_check
    from mpsready.report.formats.terminal import print_report

    from mpsready.report.write import prepare_out_dir

    out = prepare_out_dir(Path(args.out).resolve())
    project = prepare(out)
    report, written, _ = run_check(project, out / "report", entry=DEMO_ENTRY, job_steps=DEMO_JOB_STEPS)
    print_report(report)
    print_written(written)
    return ExitCode.OK
