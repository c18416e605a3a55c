"""`mpsready trace` and `check` run the step on the emulated MPS device by default (no Mac here); the CPU trace
stays an explicit choice (``--device cpu``), labelled as such. Issue 10, item 2: one device model for every
dynamic stage."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("numpy")

from mpsready.cli import main  # noqa: E402
from mpsready.step import load_entry  # noqa: E402
from mpsready.trace.api import trace_entry  # noqa: E402

ENTRIES = '''\
import numpy as np
import torch
import torch.nn.functional as F
from mpsready.step import Step

A = np.linspace(0, 1, 12).reshape(3, 4)  # float64, NumPy's default
SEEN = []


def cast_then_move(device="cpu"):
    def step():
        x = torch.from_numpy(A).float().to(device)
        return (x * 2).sum()
    return step


def move_then_cast(device="cpu"):
    def step():
        x = torch.from_numpy(A).to(device).float()
        return (x * 2).sum()
    return step


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x):
        SEEN.append((x.device.type, self.lin.weight.device.type))
        return self.lin(x)


def moved_by_runner():
    return Step(model=Branchy(), batch=(torch.randn(3, 4), torch.tensor([0, 1, 0])), loss_fn=F.cross_entropy,
                optimizer=lambda p: torch.optim.SGD(p, lr=0.1))


def picks_its_device():
    dev = "mps" if torch.backends.mps.is_available() else "cpu"
    SEEN.append(dev)

    def step():
        x = torch.ones(3, device=dev)
        if x.device.type == "mps":
            SEEN.append("mac path")
        return x.sum()
    return step


def slices_a_refused_tensor(device="cpu"):
    def step():
        x = torch.from_numpy(A).to(device)
        y = x[:2].detach() * 2
        return y.float().sum()
    return step


class TwoLeaks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)
        self.register_buffer("a", torch.from_numpy(A))
        self.register_buffer("b", torch.from_numpy(A[:1].copy()))

    def forward(self, x):
        return self.lin(x + self.a[0].float() + self.b[0].float())


def two_buffers():
    return Step(model=TwoLeaks(), batch=(torch.randn(3, 4), torch.tensor([0, 1, 0])), loss_fn=F.cross_entropy)
'''


# the calls on the emulated device of picks_its_device's step: torch.ones(3, device="mps") and .sum()
JUDGED_WHOLE = {"aten::ones": "composite", "aten::empty.memory_format": "runs", "aten::fill_.Scalar": "runs",
                "aten::sum": "composite", "aten::sum.dim_IntList": "runs"}


@pytest.fixture()
def entries(tmp_path):
    (tmp_path / "entries.py").write_text(ENTRIES)
    return tmp_path / "entries.py"


def _dtype_findings(result):
    return sorted((f.code, f.location.line, f.location.operator) for f in result.findings if f.code.startswith("DTY"))


def test_default_trace_judges_the_cast_order(entries):
    before = trace_entry(load_entry(f"{entries}:cast_then_move"), torch="2.13", macos="15.5")
    after = trace_entry(load_entry(f"{entries}:move_then_cast"), torch="2.13", macos="15.5")
    assert before.trace.emulated and before.trace.device == "mps"
    assert _dtype_findings(before) == [] and before.exit_code == 0
    # at the line of the move (entries.py:19), as a Mac raises it
    assert _dtype_findings(after) == [("DTY201", 19, "aten::_to_copy")] and after.exit_code == 1


def test_cpu_trace_stays_available_and_flags_both_orders(entries):
    before = trace_entry(load_entry(f"{entries}:cast_then_move"), torch="2.13", macos="15.5", device="cpu")
    after = trace_entry(load_entry(f"{entries}:move_then_cast"), torch="2.13", macos="15.5", device="cpu")
    assert not before.trace.emulated and before.trace.device_label == "cpu (CPU trace)"
    # the CPU trace sees the float64 tensor the NumPy array became, whatever the cast order (the old default)
    assert _dtype_findings(before) == [("DTY201", 12, "aten::lift_fresh")]
    assert _dtype_findings(after) == [("DTY201", 19, "aten::lift_fresh")]


def test_runner_moves_the_steps_model_and_batch_to_the_emulated_device(entries):
    entry = load_entry(f"{entries}:moved_by_runner")
    seen = entry.function.__globals__["SEEN"]
    r = trace_entry(entry, torch="2.13", macos="15.5")
    # forward in the training step, then in the inference stage: inputs and parameters on mps both times
    assert seen == [("mps", "mps"), ("mps", "mps")]
    assert [s["status"] for s in r.trace.stages] == ["passed"] * 9
    seen.clear()
    trace_entry(entry, torch="2.13", macos="15.5", device="cpu")
    assert seen == [("cpu", "cpu"), ("cpu", "cpu")]


def test_whole_step_that_picks_its_own_device_takes_the_mac_path(entries):
    entry = load_entry(f"{entries}:picks_its_device")
    seen = entry.function.__globals__["SEEN"]
    r = trace_entry(entry, torch="2.13", macos="15.5")
    assert seen == ["mps", "mac path"]
    assert [(s["stage"], s["status"]) for s in r.trace.stages] == [("build", "passed"), ("step", "passed")]
    judged = {o.op: o.verdict for o in r.prediction.ops if o.verdict != "host"}
    assert judged == JUDGED_WHOLE
    seen.clear()
    trace_entry(entry, torch="2.13", macos="15.5", device="cpu")
    assert seen == ["cpu"]


def test_cli_default_is_emulated_and_labelled(entries, tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["trace", f"{entries}:move_then_cast", "--torch", "2.13", "--format", "json", "-o", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert doc["basis"] == "predicted"
    assert doc["traced_on"] == {"device": "mps", "emulated": True, "torch": doc["traced_on"]["torch"],
                                "basis": "observed"}
    assert {s["device"] for s in doc["stages"]} == {"mps"} and all(s["emulated"] for s in doc["stages"])
    assert [(f["code"], f["location"]["line"]) for f in doc["findings"]] == [("DTY201", 19)]
    assert main(["trace", f"{entries}:cast_then_move", "--torch", "2.13"]) == 0
    term = " ".join(capsys.readouterr().out.split())
    assert "traced on emulated mps with torch" in term


def test_cli_cpu_trace_is_labelled_cpu_trace(entries, tmp_path, capsys):
    out = tmp_path / "t.json"
    main(["trace", f"{entries}:cast_then_move", "--torch", "2.13", "--device", "cpu", "--format", "json",
          "-o", str(out)])
    doc = json.loads(out.read_text())
    assert (doc["traced_on"]["device"], doc["traced_on"]["emulated"], doc["basis"]) == ("cpu", False, "predicted")
    main(["trace", f"{entries}:cast_then_move", "--torch", "2.13", "--device", "cpu", "--format", "md"])
    assert "traced on cpu (CPU trace) with torch" in capsys.readouterr().out


def test_a_refused_tensor_is_listed_once_where_it_reaches_mps(entries):
    # the slice, detach and mul of the float64 tensor restate the refusal at the move: a Mac stops there
    r = trace_entry(load_entry(f"{entries}:slices_a_refused_tensor"), torch="2.13", macos="15.5")
    assert _dtype_findings(r) == [("DTY201", 53, "aten::_to_copy")]


def test_float64_buffers_moved_by_the_runner_point_at_the_lines_that_made_them(entries):
    r = trace_entry(load_entry(f"{entries}:two_buffers"), torch="2.13", macos="15.5")
    found = sorted((f.code, f.location.path, f.location.line, f.location.stage) for f in r.findings)
    # one per buffer, in to_device (Module.to); not again when the checkpoint stage reloads the state
    assert found == [("DTY201", "entries.py", 63, "to_device"), ("DTY201", "entries.py", 64, "to_device")]
    assert [(e.stage, e.how, e.origin_frame.line) for e in r.trace.dtype_events] == [
        ("to_device", "created", 63), ("to_device", "created", 64)]
