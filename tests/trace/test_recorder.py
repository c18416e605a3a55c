"""The recorder: nested composite recording, user frames, dtype origins, stage failures."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.trace.frames import UserFrames  # noqa: E402
from mpsready.trace.model import OpTrace  # noqa: E402
from mpsready.trace.recorder import Recorder, op_name  # noqa: E402

from .helpers import HERE, line_of, prediction, problems, trace_of  # noqa: E402


def test_op_name_drops_default_overload():
    assert op_name(torch.ops.aten.relu.default) == "aten::relu"
    assert op_name(torch.ops.aten.add.Tensor) == "aten::add.Tensor"


def test_composite_callees_are_recorded_with_their_parent():
    calls = [c for c in trace_of("nanmedian").calls if c.stage == "step"]
    top = [(c.op, c.parent) for c in calls if c.op.startswith("aten::nanmedian")]
    assert ("aten::nanmedian.dim", None) in top
    assert ("aten::nanmedian.dim_values", "aten::nanmedian.dim") in top
    child = next(c for c in calls if c.op == "aten::nanmedian.dim_values")
    assert (child.frame.path, child.frame.line) == ("entries.py", line_of("nanmedian"))


def test_composite_hides_missing_callee_until_2_8():
    # research note section 8: nanmedian.dim is composite; its callee nanmedian.dim_values has MPS only from 2.8.
    # Traced with this torch (2.13), not the target's: the callee is judged as mpsready run judges it; it is the
    # composite's own out variant, which the 2.7 table gives no kernel, so it fails whatever release recorded it
    # (ops.judge.Judge.own_variant, issue 33); another release's other callees stay unknown
    from dataclasses import replace

    from mpsready.trace.predict import predict

    assert problems(prediction("nanmedian", "2.7")) == {
        "aten::nanmedian.dim_values": ("error", ("missing",), "2.8.0")}
    assert problems(prediction("nanmedian", "2.8")) == {}
    same = replace(trace_of("nanmedian"), torch_version="2.7.1")  # as if recorded with torch 2.7
    assert problems(predict(same, torch="2.7", macos="14.4")) == {
        "aten::nanmedian.dim_values": ("error", ("missing",), "2.8.0")}


def test_without_expansion_the_composite_is_unknown_not_assumed_fine():
    from mpsready.step import load_entry
    from mpsready.trace.predict import predict
    from mpsready.trace.recorder import record_entry

    tr = record_entry(load_entry(f"{HERE / 'entries.py'}:nanmedian"), expand=None)
    assert [c.op for c in tr.calls if c.stage == "step" and c.op.startswith("aten::nanmedian")] == [
        "aten::nanmedian.dim"]
    got = problems(predict(tr, torch="2.7"))
    assert got["aten::nanmedian.dim"] == ("unknown", ("unknown",), None)


def test_user_frames_skip_torch_and_cache_per_code_object(tmp_path):
    uf = UserFrames(tmp_path)
    assert uf.locate() is None  # this test file is outside tmp_path
    here = UserFrames(HERE)
    fr = here.locate(1)
    assert (fr.path, fr.function) == ("test_recorder.py", "test_user_frames_skip_torch_and_cache_per_code_object")
    venv = tmp_path / ".venv" / "lib" / "site-packages" / "x.py"
    venv.parent.mkdir(parents=True)
    code = compile("1", str(venv), "exec")
    assert uf._classify(code) is None
    assert uf._classify(compile("1", str(tmp_path / "model.py"), "exec")) == "model.py"


def test_failed_stage_is_reported_and_later_stages_still_run():
    tr = trace_of("failing_loss")
    status = {s["stage"]: s["status"] for s in tr.stages}
    assert status["loss"] == "failed" and status["backward"] == "not_run" and status["inference"] == "passed"
    loss = next(s for s in tr.stages if s["stage"] == "loss")
    assert loss["error_type"] == "RuntimeError" and "entries.py" in loss["traceback"]
    pred = prediction("failing_loss", "2.13")
    assert [(f.code, f.location.stage) for f in pred.findings] == [("OPS108", "loss")]


def test_float64_arange_on_the_device_is_created_there(tmp_path):
    src = tmp_path / "ar.py"
    src.write_text("import torch\n\ndef step():\n    def run():\n"
                   "        pos = torch.arange(5, dtype=torch.float64)\n"
                   "        return pos.float().sum()\n    return run\n")
    from mpsready.step import load_entry
    from mpsready.trace.recorder import record_entry

    tr = record_entry(load_entry(f"{src}:step"))
    assert [(e.dtype, e.op, e.how, e.stage, e.frame.line) for e in tr.dtype_events] == [
        ("float64", "aten::arange", "created", "step", 5)]


def test_trace_round_trips_through_json():
    tr = trace_of("ctc")
    again = OpTrace.from_dict(tr.to_dict())
    strip = lambda calls: [c.__class__(**dict(c.__dict__, seconds=0.0)) for c in calls]  # noqa: E731 (rounded)
    assert strip(again.calls) == strip(tr.calls)
    assert again.dtype_events == tr.dtype_events and again.stages == tr.stages
    assert again.expanded_ops == tr.expanded_ops


def test_recorder_aggregates_calls_instead_of_storing_each():
    rec = Recorder(str(HERE))
    from mpsready.trace.recorder import _Mode

    x = torch.ones(3)
    rec.stage = "forward"
    with _Mode(rec):
        for _ in range(50):
            x = x + 1
    (call,) = rec.calls()
    assert (call.op, call.count, call.in_dtypes, call.out_dtypes, call.device) == (
        "aten::add.Tensor", 50, ("float32",), ("float32",), "cpu")


def test_on_the_emulated_device_a_call_is_on_mps_where_its_tensor_is_marked_resident():
    """``resident`` (the emulated device's residence map, trace/emulated.py) decides the device of a call: a marked
    result is on mps, an unmarked one on its own device, with or without the emulator's patched properties."""
    from mpsready.emulate import residence
    from mpsready.trace.recorder import _Mode

    rec = Recorder(str(HERE), device="mps", simulate_moves=False, resident=residence.marks_by_id())
    x, y = torch.ones(3), torch.ones(3, dtype=torch.int64)
    residence.mark(x)
    rec.stage = "forward"
    try:
        with _Mode(rec):
            x.neg_()  # an in-place op returns its (marked) input
            y.neg_()
            torch.empty(2)  # a factory of no tensor: the device it names (none: cpu)
    finally:
        residence.clear()
    assert sorted((c.op, c.in_dtypes, c.device) for c in rec.calls()) == [
        ("aten::empty.memory_format", (), "cpu"), ("aten::neg_", ("float32",), "mps"),
        ("aten::neg_", ("int64",), "cpu")]


def test_inference_takes_the_path_mps_takes_not_the_cpu_fast_path():
    # nn.TransformerEncoderLayer's eval fast path runs only on cpu/cuda/xpu (torch/nn/modules/transformer.py)
    tr = trace_of("encoder_layer")
    inference = {c.op for c in tr.calls if c.stage == "inference"}
    assert "aten::_transformer_encoder_layer_fwd" not in inference
    assert "aten::_native_multi_head_attention" not in inference
    assert "aten::scaled_dot_product_attention" in inference
    assert torch.backends.mha.get_fastpath_enabled() is True  # restored after the trace
