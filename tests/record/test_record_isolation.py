"""Issue 22: ``record``'s worker starts with nothing of the user's folder importable, and a killed
``record --force`` leaves nothing next to the record that the next run does not clean or name."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from mpsready.record import recorder  # noqa: E402
from mpsready.record import RunRecord, record_entry  # noqa: E402
from tests.record.test_record_hostile import ENTRIES, HERE, REPO, marker, survivors, wait_for  # noqa: E402,F401

ENTRY = '''import torch
from torch import nn
from torch.nn import functional as F
from mpsready.step import Step


def tiny(device="cpu"):
    torch.manual_seed(1)
    model = nn.Linear(4, 2)
    g = torch.Generator().manual_seed(2)
    return Step(model=model, batch=(torch.randn(3, 4, generator=g), torch.tensor([0, 1, 0])),
                loss_fn=F.cross_entropy, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
'''


def test_a_json_py_and_a_mpsready_package_in_the_current_folder_do_not_reach_the_worker(tmp_path):
    (tmp_path / "json.py").write_text('raise SystemExit("the user\'s json.py was imported")\n')
    (tmp_path / "mpsready").mkdir()
    (tmp_path / "mpsready" / "__init__.py").write_text('raise SystemExit("the user\'s mpsready/ was imported")\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "entry.py").write_text(ENTRY)
    rec = record_entry("sub/entry.py:tiny", device="cpu", steps=1, out=tmp_path / "run", cwd=str(tmp_path))
    assert [s["status"] for s in rec.stages] == ["passed"] * 9
    assert rec.manifest["worker"]["returncode"] == 0
    assert [f["code"] for f in rec.manifest["findings"] if f["code"].startswith("ENV")] == ["ENV201"]  # recorded off MPS: info only


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_leftovers_of_a_killed_run_are_cleaned_restored_or_named(tmp_path, capsys):
    out = tmp_path / "run"
    dead = _dead_pid()
    partial = tmp_path / f".run.partial-{dead}-abcd1234"
    partial.mkdir()
    (partial / "tensors.jsonl").write_text("")
    aside = tmp_path / f".run.old-{dead}-efgh5678"
    (aside / "record").mkdir(parents=True)
    (aside / "record" / "record.json").write_text("{}")
    legacy = tmp_path / ".run.partial-x1y2z3w4"
    legacy.mkdir()
    live = tmp_path / f".run.partial-{os.getppid()}-live0000"
    live.mkdir()
    notes = recorder.clean_leftovers(out)
    assert not partial.exists() and not aside.exists()
    assert (out / "record.json").read_text() == "{}"  # the previous record, put back where it was
    assert legacy.is_dir() and live.is_dir()
    assert notes == [
        f"mpsready record: {out} restored from {aside.name} (a killed run had set it aside)",
        f"mpsready record: left in place: {live} (process {os.getppid()} still runs)",
        f"mpsready record: left in place: {legacy} (left by an older mpsready run; remove it by hand)",
    ]
    assert capsys.readouterr().err.splitlines() == notes


def test_a_killed_record_force_leaves_no_partial_folder(tmp_path, marker):  # noqa: F811
    before = tmp_path / "run"
    record_entry(f"{ENTRIES}:small_cnn", device="cpu", steps=1, out=before, cwd=str(HERE))
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "mpsready", "record", f"{ENTRIES}:spawns_and_hangs", "--device",
                             "cpu", "--steps", "1", "--out", str(before), "--force"], cwd=str(HERE), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: (tmp_path / "ready").exists() and survivors(marker), 120), "the step never started"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".run.partial-")]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert wait_for(lambda: survivors(marker) == [], 20), survivors(marker)
    # the worker's watchdog removed the unfinished record before ending its group
    assert wait_for(lambda: not [p for p in tmp_path.iterdir() if p.name.startswith(".run.")], 10), \
        sorted(p.name for p in tmp_path.iterdir())
    assert RunRecord.open(before).manifest["entry"].endswith(":small_cnn")
