"""Tracing on the CPU or on CUDA must give the same MPS prediction for the same model.

There is no GPU here, so the CUDA form is simulated: the CPU trace of a model with convolution,
batch norm, LSTM, attention and embedding is rewritten with the op names a CUDA machine dispatches
for the same Python calls (cuDNN convolution/batch norm/RNN, efficient attention), and a second CPU
form without mkldnn (slow convolution). The classifier must normalise all three to the MPS op set.
"""
from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("torch")

from mpsready.trace.model import OpTrace  # noqa: E402
from mpsready.trace.predict import predict  # noqa: E402

from .helpers import trace_of  # noqa: E402

# CPU (mkldnn) op as recorded with torch 2.13 -> what CUDA dispatches for the same call
# (aten/src/ATen/native/Convolution.cpp, Normalization.cpp, RNN.cpp, transformers/attention.cpp)
CUDA_FORM = {
    "aten::mkldnn_convolution": "aten::cudnn_convolution",
    "aten::native_batch_norm": "aten::cudnn_batch_norm",
    "aten::native_batch_norm_backward": "aten::cudnn_batch_norm_backward",
    "aten::mkldnn_rnn_layer": "aten::_cudnn_rnn",
    "aten::mkldnn_rnn_layer_backward": "aten::_cudnn_rnn_backward",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward":
        "aten::_scaled_dot_product_efficient_attention_backward",
}
SLOW_CPU_FORM = {"aten::mkldnn_convolution": "aten::_slow_conv2d_forward"}
DEVICE_SPECIFIC = set(CUDA_FORM)
MPS_OPS = {"aten::_mps_convolution", "aten::native_batch_norm", "aten::_lstm_mps", "aten::lstm_mps_backward",
           "aten::_scaled_dot_product_attention_math_for_mps", "aten::embedding_dense_backward"}


def rewrite(trace: OpTrace, names: dict[str, str], device: str) -> OpTrace:
    calls = [dataclasses.replace(c, op=names.get(c.op, c.op),
                                 device=device if c.device in ("cpu", "meta") else c.device)
             for c in trace.calls]
    return dataclasses.replace(trace, calls=calls, device=device)


def view(pred):
    ops = sorted((o.op, o.verdict, tuple(p.kind for p in o.problems), o.fixed_in, tuple(o.stages))
                 for o in pred.ops if o.verdict != "host")
    findings = [(f.code, f.location.operator, f.location.stage, f.message) for f in pred.findings]
    return ops, findings


def test_cpu_trace_really_contains_device_specific_kernels():
    recorded = {c.op for c in trace_of("mixed").calls}
    # training attention takes SDPA's math decomposition, as MPS does; only inference keeps the fused kernel
    assert DEVICE_SPECIFIC - {"aten::_scaled_dot_product_flash_attention_for_cpu_backward"} <= recorded
    assert "aten::_scaled_dot_product_flash_attention_for_cpu_backward" not in recorded
    assert {c.stage for c in trace_of("mixed").calls if c.op == "aten::_scaled_dot_product_flash_attention_for_cpu"
            } == {"inference"}
    assert "aten::_safe_softmax" in {c.op for c in trace_of("mixed").calls if c.stage == "forward"}


@pytest.mark.parametrize("torch_v", ["2.3", "2.5", "2.13"])
def test_same_prediction_whichever_device_specific_kernels_were_recorded(torch_v):
    cpu = trace_of("mixed")
    forms = {"cpu": cpu, "cuda": rewrite(cpu, CUDA_FORM, "cuda"), "cpu-slow": rewrite(cpu, SLOW_CPU_FORM, "cpu")}
    views = {name: view(predict(tr, torch=torch_v, macos="14.4")) for name, tr in forms.items()}
    assert views["cuda"] == views["cpu"]
    assert views["cpu-slow"] == views["cpu"]
    predicted_ops = {op for op, *_ in views["cpu"][0]}
    assert MPS_OPS - {"aten::_scaled_dot_product_attention_math_for_mps"} <= predicted_ops
    assert not (DEVICE_SPECIFIC - {"aten::native_batch_norm", "aten::native_batch_norm_backward"}) & predicted_ops


def test_mixed_model_prediction_per_release():
    cuda = rewrite(trace_of("mixed"), CUDA_FORM, "cuda")
    p13 = predict(cuda, torch="2.13", macos="14.4")
    assert {o.op: o.verdict for o in p13.ops if o.op in MPS_OPS} == {op: "runs" for op in MPS_OPS}
    assert p13.findings == []
    # 2.3.1 had no _scaled_dot_product_attention_math_for_mps (first in 2.5): on MPS, SDPA took the generic
    # math composite, whose callees a trace that dispatched a fused kernel never saw: unknown, never guessed
    p23 = predict(cuda, torch="2.3", macos="14.4")
    # (training takes the math decomposition, which in torch 2.13 calls _safe_softmax -> isneginf: an op that
    # 2.3 does not have, and isneginf, missing on MPS before 2.6. Trace with the target's PyTorch for exact names.)
    assert {o.op: o.verdict for o in p23.ops if o.problems} == {
        "aten::_scaled_dot_product_attention_math": "unknown", "aten::_safe_softmax": "unknown",
        "aten::isneginf": "error"}
    sdpa = p23.op("aten::_scaled_dot_product_attention_math")
    assert sdpa.recorded_as == ["aten::_scaled_dot_product_efficient_attention"]
    assert sdpa.stages == ["inference"]
