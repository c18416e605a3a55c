"""A step that calls sys.exit() is a failed stage, not the end of mpsready with the user's exit status."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.step import Entry, StageStatus  # noqa: E402
from mpsready.step.runner import StepRunner  # noqa: E402


def exits():
    raise SystemExit(5)


def test_sys_exit_in_build_is_a_failed_build():
    entry = Entry(spec="x:exits", function=exits, root=Path("."), source_file=None)
    results = StepRunner(entry, device="cpu").run()  # used to raise SystemExit(5) out of the runner
    build = results[0]
    assert (build.stage, build.status, build.error_type, build.error) == (
        "build", StageStatus.FAILED, "SystemExit", "the step called sys.exit(5)")
    assert {r.status for r in results[1:]} == {StageStatus.NOT_RUN}
