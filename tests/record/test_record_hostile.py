"""Issue 14: ``mpsready record`` never loses the previous record, never leaves a process behind, and keeps
no raw data by default. The process checks read a real process listing (``ps``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from mpsready.record import RunRecord, record_entry  # noqa: E402

HERE = Path(__file__).parent
ENTRIES = str(HERE / "entries.py")
REPO = HERE.parents[1]


def survivors(marker: str) -> list[str]:
    """Command lines of live processes that carry ``marker`` (``ps -eo pid,args``; zombies are dead)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    rows = [line.split(None, 2) for line in out.splitlines() if marker in line]
    return [r[2] for r in rows if len(r) == 3 and not r[1].startswith("Z")]


def wait_for(cond, seconds: float) -> bool:
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


@pytest.fixture
def marker(tmp_path, monkeypatch):
    m = f"mpsready-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("MPSREADY_TEST_MARKER", m)
    monkeypatch.setenv("MPSREADY_TEST_READY", str(tmp_path / "ready"))
    yield m
    for line in subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True).stdout.splitlines():
        if m in line:  # never leave one behind, even when the test fails
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def previous_record(tmp_path) -> Path:
    out = tmp_path / "run"
    record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=1, out=out, cwd=str(HERE))
    return out


def snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_timeout_ends_the_worker_and_what_the_step_started(tmp_path, marker):
    before = previous_record(tmp_path)
    old = snapshot(before)
    rec = record_entry(f"{ENTRIES}:spawns_and_hangs", device="cpu", steps=1, out=before, cwd=str(HERE), timeout=8,
                       force=True)
    assert survivors(marker) == []  # the helper the step started is gone too, not only the worker
    build = next(s for s in rec.stages if s["stage"] == "build")
    assert build["status"] == "crashed"
    assert build["error"] == "the process died in stage build (step 0): killed after the --timeout of 8 s"
    assert snapshot(before) != old  # --force replaced the record once the new one was complete


def test_default_timeout_message(monkeypatch, tmp_path, marker):
    from mpsready.record import recorder

    monkeypatch.setattr(recorder, "DEFAULT_TIMEOUT", 6.0)
    rec = record_entry(f"{ENTRIES}:spawns_and_hangs", device="cpu", steps=1, out=tmp_path / "r", cwd=str(HERE),
                       timeout=recorder.DEFAULT_TIMEOUT)
    assert rec.manifest["worker"]["how"] == "killed after the default timeout of 6 s (raise it with --timeout)"
    assert survivors(marker) == []


def _cli(tmp_path, out: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO))
    return subprocess.Popen([sys.executable, "-m", "mpsready", "record", f"{ENTRIES}:spawns_and_hangs", "--device",
                             "cpu", "--steps", "1", "--out", str(out), "--force", *extra], cwd=str(HERE), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_killed_record_keeps_the_previous_record_and_leaves_no_process(tmp_path, marker, how):
    before = previous_record(tmp_path)
    old = snapshot(before)
    proc = _cli(tmp_path, before)
    assert wait_for(lambda: (tmp_path / "ready").exists() and survivors(marker), 120), "the step never started"
    assert len(survivors(marker)) >= 1
    proc.send_signal(how)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == -how
    # SIGKILL: nothing ran in the parent; the worker saw the pipe close and ended its group
    assert wait_for(lambda: survivors(marker) == [], 20), survivors(marker)
    assert snapshot(before) == old  # --force did not delete it first, and no partial record replaced it
    assert RunRecord.open(before).manifest["entry"].endswith(":small_cnn")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".run.partial-")] or how == signal.SIGKILL
    if how == signal.SIGTERM:
        assert err.strip().splitlines()[-1] == (f"mpsready record: interrupted by SIGTERM: the step and every process it "
                                                f"started were ended; {before} was not changed")


def test_record_keeps_no_contents_of_non_tensor_values_or_output(tmp_path):
    rec = record_entry(f"{ENTRIES}:with_private_values", device="cpu", steps=2, out=tmp_path / "r", cwd=str(HERE))
    assert [s["status"] for s in rec.stages] == ["passed"] * 9
    text = (rec.path / "record.json").read_text() + (rec.path / "tensors.jsonl").read_text()
    assert "patient-42" not in text and "PRIVATE-PRINT" not in text
    assert rec.manifest["inputs"]["structure"]["inputs"] == {
        "type": "tuple", "items": [{"type": "tensor", "name": "inputs.0"}, {"type": "value", "value_type": "str"}]}
    assert rec.manifest["warnings"] == []
    # one per forward (two training steps and the inference stage): counted, not quoted
    assert rec.manifest["warning_counts"] == {"UserWarning": 3}
    assert rec.manifest["worker"]["output_tail"] is None
    assert rec.manifest["worker"]["output_bytes"] > 0


def test_keep_output_keeps_texts(tmp_path):
    rec = record_entry(f"{ENTRIES}:with_private_values", device="cpu", steps=1, out=tmp_path / "r", cwd=str(HERE),
                       keep_output=True)
    assert rec.manifest["warnings"] == ["odd sample patient-42"]
    assert "PRIVATE-PRINT patient-42" in rec.manifest["worker"]["output_tail"]
    assert rec.manifest["warning_counts"] == {"UserWarning": 2}


def test_warning_counts_reach_the_summary_and_the_report(tmp_path, capsys):
    from mpsready.cli import main
    from mpsready.record.render import render_terminal

    rec = record_entry(f"{ENTRIES}:with_private_values", device="cpu", steps=2, out=tmp_path / "r", cwd=str(HERE))
    from rich.console import Console

    console = Console(width=200, file=open(tmp_path / "summary.txt", "w"))
    render_terminal(rec, console)
    console.file.close()
    assert "warnings: 3 UserWarning (texts kept only with --keep-output)" in (tmp_path / "summary.txt").read_text()
    assert main(["report", "--record", str(rec.path), "--format", "md", "--out", str(tmp_path / "rep")]) in (0, 1)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Warnings in the run on cpu: 3 UserWarning (counts; the record keeps texts only with --keep-output)." in md
    assert "patient-42" not in md
