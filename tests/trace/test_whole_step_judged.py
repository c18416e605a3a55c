"""The zero-argument step form (a callable that runs one step and returns the loss) is judged like the Step
form on the emulated device: tensors that composites (``ones_like``, ``zeros_like``) make from MPS tensors stay
on MPS, so a float64 result and the backward ops fed by the autograd seed gradient are judged."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.step import load_entry  # noqa: E402
from mpsready.trace.api import trace_entry  # noqa: E402

ENTRIES = '''\
import torch


def zeros_f64():
    def step():
        x = torch.zeros(3, dtype=torch.float64, device="mps")
        return x.sum()
    return step


def zeros_like_f64():
    def step():
        w = torch.ones(3, device="mps")
        x = torch.zeros_like(w, dtype=torch.float64)
        return x.sum()
    return step


def upsample3d():
    def step():
        w = torch.randn(1, 1, 2, 2, 2, device="mps", requires_grad=True)
        loss = torch.ops.aten.upsample_nearest3d.default(w, [4, 4, 4]).sum()
        loss.backward()
        return loss
    return step
'''


@pytest.fixture()
def entry(tmp_path):
    (tmp_path / "entries.py").write_text(ENTRIES)
    return lambda name: load_entry(f"{tmp_path / 'entries.py'}:{name}")


def _findings(r):
    return sorted((f.code, f.location.line, f.location.operator) for f in r.findings)


def test_float64_factory_on_mps(entry):
    r = trace_entry(entry("zeros_f64"), torch="2.13", macos="15.5")
    assert _findings(r) == [("DTY201", 6, "aten::zeros")]
    assert r.exit_code == 1


def test_float64_made_by_a_composite_from_an_mps_tensor(entry):
    # zeros_like is CompositeExplicitAutograd: the trace expands it; its result is resident as on a Mac
    r = trace_entry(entry("zeros_like_f64"), torch="2.13", macos="15.5")
    assert _findings(r) == [("DTY201", 14, "aten::zeros_like")]
    f = r.findings[0]
    assert f.evidence["how"] == "reaches_device" and f.evidence["dtype"] == "float64"


def test_backward_op_missing_on_mps_is_judged(entry):
    # upsample_nearest3d and its backward: no MPS kernel before 2.8 (both fall back with
    # PYTORCH_ENABLE_MPS_FALLBACK=1); the backward's only tensor is the seed gradient of loss.backward()
    r = trace_entry(entry("upsample3d"), torch="2.5", macos="15.5", fallback=True)
    got = {o.op: (o.verdict, o.stages, [p.kind for p in o.problems]) for o in r.prediction.ops
           if o.op.startswith("aten::upsample_nearest3d")}
    assert got == {"aten::upsample_nearest3d": ("fallback", ["step"], ["missing"]),
                   "aten::upsample_nearest3d_backward": ("fallback", ["step"], ["missing"])}
    assert not [o.op for o in r.prediction.ops if o.verdict == "host" and o.op in (
        "aten::ones_like", "aten::expand", "aten::fill_.Scalar")]
    assert _findings(r) == [("OPS102", 22, "aten::upsample_nearest3d"),
                            ("OPS102", 23, "aten::upsample_nearest3d_backward")]
    back = next(f for f in r.findings if f.location.operator == "aten::upsample_nearest3d_backward")
    assert back.evidence["expected_message"] == (
        "UserWarning: The operator 'aten::upsample_nearest3d_backward.grad_input' is not currently supported on the "
        "MPS backend and will fall back to run on the CPU. This may have performance implications.")
