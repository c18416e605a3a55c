"""``mpsready check`` gains --torch/--macos, --skip-record, --trace-device mps, and prints a failing stage's
exception in the terminal."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError  # noqa: E402
from mpsready.check.cli import run_check  # noqa: E402

ENTRY = '''\
import torch
import torch.nn.functional as F
from mpsready.step import Step


def step():
    return Step(model=torch.nn.Linear(4, 2), batch=(torch.randn(3, 4), torch.tensor([0, 1, 0])),
                loss_fn=F.cross_entropy, optimizer=lambda p: torch.optim.SGD(p, lr=0.1))


def broken():
    def whole():
        raise ValueError("the step is broken here")
    return whole
'''


@pytest.fixture()
def project(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "entry.py").write_text(ENTRY)
    return tmp_path / "proj"


def test_target_skip_record_and_emulated_trace(project, tmp_path):
    report, _written, runs = run_check(project, tmp_path / "out", entry="entry.py:step", torch="2.5", macos="14.0",
                                       skip_record=True, trace_device="mps", quiet=True)
    assert (runs["record"].status, runs["record"].detail) == ("skipped", "--skip-record given")
    doc = json.loads((tmp_path / "out" / "trace.json").read_text())
    assert (doc["target"]["torch"], doc["target"]["macos"], doc["traced_on"]["device"]) == ("2.5.1", "14.0", "mps")
    assert report.evidence.records == []


def test_failing_step_exception_is_printed(project, tmp_path, capsys):
    _r, _w, runs = run_check(project, tmp_path / "out", entry="entry.py:broken", skip_record=True)
    err = capsys.readouterr().err
    assert "stage step failed: ValueError: the step is broken here" in runs["trace"].detail
    assert 'raise ValueError("the step is broken here")' in err and "ValueError: the step is broken here" in err


def test_bad_target_is_a_usage_error_before_anything_runs(project, tmp_path):
    with pytest.raises(UsageError, match="no MPS support table for torch 2.99"):
        run_check(project, tmp_path / "out", entry="entry.py:step", torch="2.99")
    assert not (tmp_path / "out").exists()


def test_check_traces_on_the_emulated_device_by_default_and_on_the_cpu_when_asked(project, tmp_path):
    _r, _w, runs = run_check(project, tmp_path / "emu", entry="entry.py:step", skip_record=True, quiet=True)
    doc = json.loads((tmp_path / "emu" / "trace.json").read_text())
    assert (doc["traced_on"]["device"], doc["traced_on"]["emulated"]) == ("mps", True)
    assert runs["trace"].detail == "25 operators on emulated mps: 0 predicted errors, 0 fallbacks"
    _r, _w, runs = run_check(project, tmp_path / "cpu", entry="entry.py:step", skip_record=True, quiet=True,
                             trace_device="cpu")
    doc = json.loads((tmp_path / "cpu" / "trace.json").read_text())
    assert (doc["traced_on"]["device"], doc["traced_on"]["emulated"]) == ("cpu", False)
    assert " operators on cpu: 0 predicted errors, 0 fallbacks" in runs["trace"].detail


FLOAT64 = '''\
import numpy as np
import torch
import torch.nn.functional as F
from mpsready.step import Step


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)
        self.register_buffer("scale", torch.from_numpy(np.ones(2)))

    def forward(self, x):
        return self.fc(x) * self.scale.float()


def step():
    return Step(model=Net(), batch=(torch.randn(3, 4), torch.tensor([0, 1, 0])),
                loss_fn=F.cross_entropy, optimizer=lambda p: torch.optim.SGD(p, lr=0.1))
'''


def test_the_trace_line_counts_a_float64_blocker_beside_the_operator_errors(tmp_path):
    # the demo's float64 buffer: no operator errs, yet the step fails on a Mac (DTY201); the line said only
    # "0 predicted errors, 0 fallbacks"
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "entry.py").write_text(FLOAT64)
    _r, _w, runs = run_check(tmp_path / "proj", tmp_path / "out", entry="entry.py:step", skip_record=True, quiet=True)
    assert runs["trace"].detail.split(": ", 1)[1] == "0 predicted errors, 0 fallbacks, 1 blocker finding(s) (DTY201)"
