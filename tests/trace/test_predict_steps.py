"""Small steps whose truth is known from the support data: exact ops, verdicts, lines, releases."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.findings import Severity  # noqa: E402
from mpsready.trace.predict import SPARSE_CTOR  # noqa: E402

from .helpers import line_of, prediction, problems, trace_of  # noqa: E402


def codes(pred):
    return [(f.code, f.severity.value, f.location.operator, f.location.path, f.location.line, f.location.stage)
            for f in pred.findings]


def test_cnn_step_is_clean_on_2_13():
    pred = prediction("cnn", "2.13", macos="14.4")
    assert pred.torch == "2.13.0"
    assert problems(pred) == {}
    assert pred.findings == []
    assert pred.summary["verdicts"]["error"] == 0 and pred.summary["verdicts"]["fallback"] == 0
    conv = pred.op("aten::_mps_convolution")
    assert conv.verdict == "runs" and conv.recorded_as == ["aten::mkldnn_convolution"]
    assert conv.stages == ["forward", "inference"]
    assert conv.frames[0].path == "entries.py" and conv.frames[0].function == "forward"
    assert pred.op("aten::mps_convolution_backward") is None  # CPU's conv backward kernel is not dispatched


def test_cnn_step_stages_all_pass():
    tr = trace_of("cnn")
    assert [(s["stage"], s["status"]) for s in tr.stages] == [
        ("build", "passed"), ("to_device", "passed"), ("data", "passed"), ("forward", "passed"), ("loss", "passed"),
        ("backward", "passed"), ("optimizer_step", "passed"), ("checkpoint", "passed"), ("inference", "passed")]


def test_linalg_eig_has_no_mps_kernel_in_any_release():
    line = line_of("eig")
    for torch_v, issue in (("2.3", "issues/77764"), ("2.5", "issues/77764"), ("2.6", "issues/141287"),
                           ("2.13", "issues/141287"), ("2.14", "issues/141287")):
        pred = prediction("eig", torch_v)
        assert problems(pred) == {"aten::linalg_eig": ("error", ("missing",), None)}, torch_v
        (f,) = pred.findings
        assert (f.code, f.severity, f.location.path, f.location.line, f.location.stage) == (
            "OPS101", Severity.BLOCKER, "entries.py", line, "step")
        assert f.basis.value == "predicted"
        msg = f.evidence["expected_message"]
        assert msg.startswith("NotImplementedError: The operator 'aten::linalg_eig' is not currently implemented "
                              "for the MPS device.")
        assert issue in msg
        assert f.evidence["fixed_in"] is None
        assert "No shipped PyTorch release fixes it." in f.message


def test_float64_from_numpy_in_the_loss_names_the_creating_op_and_line():
    pred = prediction("float64_loss", "2.13")
    dty = [f for f in pred.findings if f.code.startswith("DTY")]
    assert [(f.code, f.severity.value, f.location.operator, f.location.path, f.location.line, f.location.stage)
            for f in dty] == [("DTY201", "blocker", "aten::lift_fresh", "entries.py", line_of("float64"), "loss")]
    assert dty[0].evidence["dtype"] == "float64" and dty[0].evidence["how"] == "created"
    assert "torch.from_numpy" in dty[0].message
    assert dty[0].evidence["expected_message"].startswith("Cannot convert a MPS Tensor to float64 dtype")
    assert problems(pred) == {}


def test_ctc_loss_falls_back_and_is_fixed_in_2_14():
    line = line_of("ctc")
    pred = prediction("ctc", "2.13", fallback=True)
    assert problems(pred) == {
        "aten::_ctc_loss.Tensor": ("fallback", ("missing",), "2.14.0"),
        "aten::_ctc_loss_backward.Tensor": ("fallback", ("missing",), "2.14.0"),
    }
    f = next(f for f in pred.findings if f.location.operator == "aten::_ctc_loss.Tensor")
    assert (f.code, f.severity.value, f.location.line, f.location.stage) == ("OPS102", "degrades", line, "loss")
    assert f.evidence["expected_message"].startswith("UserWarning: The operator 'aten::_ctc_loss.Tensor' is not "
                                                     "currently supported on the MPS backend and will fall back")
    op = pred.op("aten::_ctc_loss.Tensor")
    assert op.count == 1 and 0 < op.call_share < 1 and 0 < op.time_share < 1
    assert pred.summary["fallback_time_share"] == round(
        pred.op("aten::_ctc_loss.Tensor").time_share + pred.op("aten::_ctc_loss_backward.Tensor").time_share, 4)
    # without the env var it is an error; with 2.14 it runs
    assert problems(prediction("ctc", "2.13"))["aten::_ctc_loss.Tensor"] == ("error", ("missing",), "2.14.0")
    assert problems(prediction("ctc", "2.14")) == {}


def test_sparse_buffer_blocks_the_move_before_2_9():
    pred = prediction("sparse_buffer", "2.5")
    assert problems(pred) == {SPARSE_CTOR: ("error", ("sparse",), "2.9.0")}
    (f,) = pred.findings
    assert (f.code, f.location.operator, f.location.stage) == ("OPS104", SPARSE_CTOR, "to_device")
    assert f.evidence["expected_message"] == (
        "NotImplementedError: Could not run 'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from "
        "the 'SparseMPS' backend.")
    assert f.evidence["called_by"] == ["aten::_to_copy"]
    assert problems(prediction("sparse_buffer", "2.13")) == {}


def test_exit_code_and_unknown_torch_version():
    from mpsready.trace.api import TraceResult
    from mpsready.trace.predict import predict

    tr = trace_of("eig")
    assert TraceResult(tr, predict(tr, torch="2.13")).exit_code == 1
    assert TraceResult(trace_of("cnn"), predict(trace_of("cnn"), torch="2.13")).exit_code == 0
    with pytest.raises(ValueError, match="no MPS support table for torch 1.13"):
        predict(tr, torch="1.13")


def test_custom_namespace_op_is_reported_with_unknown_status():
    pred = prediction("custom_op", "2.13")
    assert problems(pred) == {"mpsready_test::scale": ("unknown", ("unknown",), None)}
    (f,) = pred.findings
    assert (f.code, f.severity.value, f.location.line, f.location.operator) == (
        "OPS107", "info", line_of("custom"), "mpsready_test::scale")
    assert "custom operator namespace 'mpsready_test'" in f.message
    from mpsready.trace.api import TraceResult

    assert TraceResult(trace_of("custom_op"), pred).exit_code == 0  # unknown is reported, not a blocker


def test_every_code_the_trace_emits_is_a_registered_rule():
    from mpsready import rules
    from mpsready.trace import rules as trace_rules

    mine = {r.code for r in vars(trace_rules).values() if isinstance(r, rules.Rule)}
    assert mine == {"OPS101", "OPS102", "OPS103", "OPS104", "OPS105", "OPS106", "OPS107", "OPS108", "OPS109", "OPS110",
                    "DTY201", "DTY202", "DTY203", "DTY204", "DTY205"}
    assert all(rules._REGISTRY[c].source and rules._REGISTRY[c].fix for c in mine)
    assert set(trace_rules.DTYPE_RULE_CODES.values()) <= mine
    assert "mpsready.trace.rules" in rules.RULE_MODULES


def test_grad_scaler_float64_is_a_pytorch_internal_and_its_amp_kernels_are_judged():
    tr = trace_of("grad_scaler")
    (ev,) = [e for e in tr.dtype_events if e.dtype == "float64"]
    assert (ev.op, ev.how, ev.internal, ev.frame.line) == (
        "aten::_to_copy", "created", "torch/amp/grad_scaler.py:unscale_", line_of("scaler"))
    p13 = prediction("grad_scaler", "2.13")
    assert [(f.code, f.severity.value, f.location.line) for f in p13.findings] == [
        ("DTY201", "info", line_of("scaler"))]
    p27 = prediction("grad_scaler", "2.7")  # MPS AMP kernels arrive in 2.8 (research note 1.2)
    got = problems(p27)
    assert got["aten::_amp_foreach_non_finite_check_and_unscale_"] == ("error", ("missing",), "2.8.0")
    assert got["aten::_amp_update_scale_"] == ("error", ("missing",), "2.8.0")


def test_target_macos_below_the_release_minimum_is_a_blocker():
    from mpsready.ops.api import load_db

    assert load_db("2.13").min_macos == "14.0" and load_db("2.5").min_macos == "12.3"
    (f,) = prediction("cnn", "2.13", macos="13.6").findings
    assert (f.code, f.severity.value, f.evidence) == ("OPS109", "blocker", {"min_macos": "14.0", "macos": "13.6"})
    assert prediction("cnn", "2.5", macos="13.6").findings == []
