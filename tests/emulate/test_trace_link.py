"""What the emulated trace hands the prediction: allocation refusals as dtype events (restatements in the runner's
checkpoint stage dropped) and the device's own judgements as ops and findings, with exact values."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.emulate import Failure  # noqa: E402
from mpsready.frames import Frame  # noqa: E402
from mpsready.ops.judge import Judge  # noqa: E402
from mpsready.trace.emulated import allocation_failures  # noqa: E402
from mpsready.trace.judged import DeviceJudgements, JudgedCall, WholeOp, device_findings  # noqa: E402

JUDGE = Judge("2.5", "15.5")


def _refusal(frame=None):
    return Failure(JUDGE.landing("float64", "aten::_to_copy"), frame, [], "aten::_to_copy")


def test_checkpoint_restatement_is_dropped():
    at = Frame("train.py", 3, "main")
    fs = [_refusal(at), _refusal(None), _refusal(None)]
    got = allocation_failures(fs, ["to_device", "checkpoint", "data"])
    assert [(f.frame, stage) for f, stage in got] == [(at, "to_device"), (None, "data")]


def test_device_findings_of_a_fallback_and_a_kernel():
    svd = WholeOp(JUDGE.call("aten::linalg_svd"), calls=2, seconds=0.5, dtypes=("float32",),
                  frame=Frame("m.py", 9, "f"))
    linear = WholeOp(JUDGE.call("aten::linear"), calls=4, seconds=0.1, dtypes=("float32",))
    ops, findings = device_findings(DeviceJudgements(whole=(svd, linear)), JUDGE, listed=set())
    assert [(o.op, o.verdict, o.count) for o in ops] == [("aten::linalg_svd", "fallback", 2),
                                                          ("aten::linear", "runs", 4)]
    (f,) = findings
    assert (f.code, f.severity.value, f.location.path, f.location.line) == ("OPS102", "degrades", "m.py", 9)
    assert f.message == ("Predicted for torch 2.5.1 (emulated MPS device): aten::linalg_svd runs on the CPU "
                         "(always_fallback, 2 call(s)): The operator 'aten::linalg_svd' is not currently supported "
                         "on the MPS backend and will fall back to run on the CPU. This may have performance "
                         "implications.")
    # an op the recorder already listed is not listed twice
    assert device_findings(DeviceJudgements(whole=(linear,)), JUDGE, listed={"aten::linear"}) == ([], [])


def test_only_shape_failures_become_findings():
    dtype = JudgedCall(JUDGE.landing("float64", "aten::zeros"))
    assert device_findings(DeviceJudgements(failures=(dtype,)), JUDGE, set()) == ([], [])
