"""Issue 31 item 3 and issue 33 item 7: the NaN watch reports a non-finite value only when it propagates (a value
masked by where before use is not a finding), a std of one value is one ``info`` (NUM305), each finding carries
the op's own device, and every dtype and layout is read or skipped and counted, never a crash."""
from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from mpsready.numerics.watch import OpWatch  # noqa: E402

from ..run.helpers import emulate, write  # noqa: E402
from .test_trace_numerics import _line, _trace  # noqa: E402

MASKED = """\
import torch
t = torch.linspace(-2, 2, 5, dtype=torch.float64)
k = torch.sin(t) / t
k = torch.where(t == 0, torch.ones_like(t), k)
x = torch.ones(5, device="mps")
y = x * k.float().to("mps")
print(float(y.sum()))
"""
PROPAGATED = """\
import torch
t = torch.linspace(-2, 2, 5, dtype=torch.float64)
k = torch.sin(t) / t
s = k.sum()
print(float(s))
"""
STD_OF_ONE = """\
import torch
for step in range(2):
    x = torch.tensor([3.0], device="mps")
    s = x.std()
    print("spread", float(s), float(s * 2))
"""
NAN_LOSS = """\
import torch
x = torch.tensor([-1.0, 2.0], device="mps")
loss = torch.log(x)
print(loss)
"""


def _run(tmp_path: Path, text: str) -> dict:
    _r, doc, _o, _e = emulate(write(tmp_path, text))
    assert doc["outcome"] == "completed"
    return doc


def test_a_nan_masked_by_where_is_not_a_finding(tmp_path):
    doc = _run(tmp_path, MASKED)
    assert (doc["first_nonfinite"], doc["masked"], doc["findings"]) == (None, 1, [])


def test_a_propagated_nan_is_reported_at_its_op_with_the_ops_own_device(tmp_path):
    doc = _run(tmp_path, PROPAGATED)
    first = doc["first_nonfinite"]
    assert (first["op"], first["dtype"], first["stage"], first["device"], first["location"], first["nan"]) == (
        "aten::div.Tensor", "float64", "forward", "cpu", {"path": "script.py", "line": 3, "function": "<module>"}, 1)
    assert first["propagated_to"] == {"op": "aten::sum",
                                      "location": {"path": "script.py", "line": 4, "function": "<module>"}}
    assert [(f["code"], f["severity"], f["message"]) for f in doc["findings"]] == [(
        "NUM301", "degrades",
        "first NaN/Inf on the CPU (a call of the program on CPU tensors, as a Mac runs it): aten::div.Tensor "
        "(float64) at script.py:3 in <module>, stage forward, step 0: 1 NaN, 0 Inf from finite inputs (input 0: min "
        "-0.9093, max 0.9093, mean 0; input 1: min -2, max 2, mean 0)")]


def test_std_of_one_value_is_one_info_and_what_it_reaches_is_not_reported(tmp_path):
    doc = _run(tmp_path, STD_OF_ONE)
    assert doc["first_nonfinite"] is None
    assert doc["degenerate"] == [{
        "op": "aten::std.correction", "location": {"path": "script.py", "line": 4, "function": "<module>"},
        "stage": "forward", "step": 0, "elements": 1, "correction": 1.0,
        "reason": "1 element(s) per result with correction 1: 0 degrees of freedom, NaN by definition"}]
    assert [(f["code"], f["severity"], f["message"]) for f in doc["findings"]] == [(
        "NUM305", "info", "aten::std.correction at script.py:4 in <module>, stage forward, step 0: 1 element(s) per "
                          "result with correction 1: 0 degrees of freedom, NaN by definition")]


def test_a_nan_that_reaches_the_end_unmasked_is_reported(tmp_path):
    """A NaN loss printed (tensor printing reads it, which is neither a use nor a mask) is still the finding."""
    doc = _run(tmp_path, NAN_LOSS)
    first = doc["first_nonfinite"]
    assert (first["op"], first["device"], first["location"]["line"], first.get("propagated_to")) == (
        "aten::log", "mps", 3, None)
    assert [f["code"] for f in doc["findings"]] == ["NUM301"]


def test_trace_masked_and_unmasked_kernel_on_the_cpu():
    """The emulated trace: the CPU float64 kernel's NaN is reported "on the CPU" (never "on emulated mps") when it
    reaches the sum, and not at all when where masks it (forward and inference stage: 2 masked)."""
    n = _trace("sinc_masked", "mps", steps=1).to_dict()["numerics"]
    assert (n["first_nonfinite"], n["masked"]) == (None, 2)
    res = _trace("sinc_unmasked", "mps", steps=1)
    first = res.to_dict()["numerics"]["first_nonfinite"]
    assert (first["op"], first["dtype"], first["stage"], first["device"], first["location"]["line"]) == (
        "aten::div.Tensor", "float64", "forward", "cpu", _line("SINC_LINE"))
    assert first["propagated_to"]["op"] == "aten::sum.dim_IntList"
    assert first["propagated_to"]["location"]["line"] == _line("SUM_LINE")
    (num,) = [f for f in res.findings if f.code == "NUM301"]
    assert num.message.startswith("first NaN/Inf on the CPU (a call of the program on CPU tensors, as a Mac runs "
                                  "it): aten::div.Tensor (float64) at entries.py:")


# ---------------------------------------------------------------------------------- every dtype and layout
def _watch_of(out):
    w = OpWatch()
    a, b = torch.ones(2), torch.ones(2)
    w.observe("aten::mul.Tensor", (a, b), {}, out)
    return w


@pytest.mark.parametrize("dtype", ["float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_float8_results_are_read(dtype):
    dt = getattr(torch, dtype)
    w = _watch_of(torch.tensor([1.0, float("nan")]).to(dt))
    assert (w.result["op"], w.result["dtype"], w.result["nan"], w.skipped) == ("aten::mul.Tensor", dtype, 1, 0)
    assert _watch_of(torch.tensor([1.0, 2.0]).to(dt)).result is None


def test_sparse_results_are_read_by_their_stored_values():
    w = _watch_of(torch.tensor([1.0, float("nan")]).to_sparse())
    assert (w.result["dtype"], w.result["nan"], w.result["numel"]) == ("float32", 1, 2)
    with pytest.warns(UserWarning, match="Sparse CSR tensor support is in beta state"):
        csr = torch.tensor([[1.0, float("inf")]]).to_sparse_csr()
    w = _watch_of(csr)
    assert (w.result["nan"], w.result["inf"]) == (0, 1)


def test_an_unreadable_value_is_skipped_and_counted():
    w = _watch_of(torch.empty(2, dtype=torch.float4_e2m1fn_x2))  # no kernel sums or compares float4
    assert (w.result, w.skipped, w.skipped_kinds) == (None, 1, {"float4_e2m1fn_x2 strided": 1})
    assert (w.to_dict()["skipped"], w.to_dict()["skipped_kinds"]) == (1, {"float4_e2m1fn_x2 strided": 1})


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_quantized_and_integer_results_hold_no_nan():
    q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)
    for out in (q, torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.uint16)):
        w = _watch_of(out)
        assert (w.result, w.skipped, w.checked) == (None, 0, 0)
