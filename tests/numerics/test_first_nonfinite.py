"""The first NaN/Inf of a recorded step: the op and the user's line that made it, not the loss."""
import json
from pathlib import Path

import pytest

from mpsready.record.recorder import record_entry

HERE = Path(__file__).parent
ENTRIES = "entries.py"


def _line(marker: str) -> int:
    lines = (HERE / ENTRIES).read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {marker}"))


def _record(tmp_path, fn, **kw):
    return record_entry(f"{ENTRIES}:{fn}", device="cpu", steps=2, out=tmp_path / fn, cwd=str(HERE), isolate=False,
                        **kw)


def test_log_of_negative_values_is_reported_at_the_log_line_not_the_loss(tmp_path):
    rec = _record(tmp_path, "log_negative")
    first = rec.manifest["first_nonfinite"]
    assert (first["op"], first["dtype"], first["stage"], first["step"]) == ("aten::log", "float32", "forward", 0)
    assert first["location"] == {"path": "entries.py", "line": _line("LOG_LINE"), "function": "forward"}
    assert first["from_finite_inputs"] is True
    assert (first["nan"], first["inf"], first["numel"]) == (12, 0, 15)
    (inp,) = first["inputs"]
    assert inp["shape"] == [5, 3] and inp["dtype"] == "float32" and (inp["nan"], inp["inf"]) == (0, 0)
    assert inp["min"] == pytest.approx(-1.1294881105422974) and inp["max"] == pytest.approx(0.5453260540962219)
    num = [f for f in rec.manifest["findings"] if f["code"] == "NUM301"]
    assert len(num) == 1
    assert num[0]["location"]["line"] == _line("LOG_LINE") and num[0]["location"]["operator"] == "aten::log"
    assert num[0]["message"].startswith(f"first NaN/Inf on cpu: aten::log (float32) at entries.py:{_line('LOG_LINE')} "
                                        "in forward, stage forward, step 0: 12 NaN, 0 Inf from finite inputs")
    # the loss is NaN too, but it is not what is named
    assert rec.manifest["step_metrics"][0]["loss_nonfinite"] == "nan"
    # no raw value of the tensor is kept, only statistics
    assert set(inp) == {"shape", "dtype", "min", "max", "mean", "nan", "inf", "written"}


def test_float16_underflow_divide_under_autocast(tmp_path):
    rec = _record(tmp_path, "fp16_underflow")
    first = rec.manifest["first_nonfinite"]
    assert (first["op"], first["dtype"], first["stage"]) == ("aten::div.Tensor", "float16", "forward")
    assert first["location"]["line"] == _line("DIV_LINE")
    assert (first["nan"], first["inf"]) == (0, 20) and first["from_finite_inputs"] is True
    scale = first["inputs"][1]
    assert scale["dtype"] == "float16" and (scale["min"], scale["max"]) == (0.0, 0.0)  # 1e-8 underflowed to 0


def test_finite_step_reports_nothing_and_the_check_can_be_switched_off(tmp_path):
    rec = _record(tmp_path, "finite")
    assert rec.manifest["nan_check"] is True and rec.manifest["first_nonfinite"] is None
    off = _record(tmp_path, "log_negative", nan_check=False)
    assert off.manifest.get("first_nonfinite") is None and off.manifest["nan_check"] is False
    assert not [f for f in off.manifest["findings"] if f["code"] == "NUM301"]
    assert json.loads((tmp_path / "log_negative" / "record.json").read_text())["nan_check"] is False


def test_cli_flag_no_nan_check():
    from mpsready.cli import build_parser

    args = build_parser().parse_args(["record", "x.py:f", "--device", "cpu", "--out", "o", "--no-nan-check"])
    assert args.nan_check is False
    args = build_parser().parse_args(["record", "x.py:f", "--device", "cpu", "--out", "o", "--save-inputs", "enc.0"])
    assert args.nan_check is True and args.save_inputs == "enc.0"


def test_a_nan_in_the_batch_is_reported_as_coming_from_a_nonfinite_input(tmp_path):
    first = _record(tmp_path, "nan_batch").manifest["first_nonfinite"]
    assert first["op"] == "aten::addmm" and first["stage"] == "forward" and first["from_finite_inputs"] is False
    assert [(i["shape"], i["nan"]) for i in first["inputs"]] == [([3], 0), ([5, 4], 1), ([4, 3], 0)]


def test_uninitialised_memory_is_not_a_nan_of_the_program():
    import torch

    from mpsready.numerics.watch import OpWatch

    garbage = torch.full((3,), float("nan"))
    w = OpWatch()
    w.observe("aten::empty.memory_format", ([3],), {}, garbage)  # what torch.empty may hand back
    assert w.result is None and w.checked == 0
    w.observe("aten::log", (-torch.ones(3),), {}, garbage)
    assert w.result["op"] == "aten::log" and w.result["from_finite_inputs"] is True and w.result["nan"] == 3


def test_a_sum_that_overflows_is_not_a_nonfinite_result():
    import torch

    from mpsready.numerics.watch import OpWatch

    big = torch.full((4,), 60000.0, dtype=torch.float16)  # finite; the float16 sum would be inf
    w = OpWatch()
    w.observe("aten::mul.Tensor", (big, big.new_ones(4)), {}, big)
    assert w.result is None and w.checked == 1
    huge = torch.full((4,), 3e38)  # finite float32 whose float32 sum overflows to inf: confirmed element-wise
    w.observe("aten::mul.Tensor", (huge, huge.new_ones(4)), {}, huge)
    assert w.result is None and w.checked == 2
    w.observe("aten::mul.Tensor", (big, big.new_ones(4)), {}, big * 2)  # 120000 is inf in float16
    assert (w.result["op"], w.result["dtype"], w.result["inf"]) == ("aten::mul.Tensor", "float16", 4)


def test_masks_written_as_minus_inf_are_not_reported():
    import torch

    from mpsready.numerics.watch import OpWatch

    w = OpWatch()
    mask = torch.full((3, 3), float("-inf")).triu(1)
    w.observe("aten::full", ([3, 3], float("-inf")), {}, torch.full((3, 3), float("-inf")))
    w.observe("aten::add.Tensor", (torch.ones(3, 3), mask), {}, torch.ones(3, 3) + mask)  # Inf carried on
    w.observe("aten::_softmax", (torch.ones(3, 3) + mask, -1, False), {}, torch.softmax(torch.ones(3, 3) + mask, -1))
    assert w.result is None
    # a row masked entirely: subtracting its max makes NaN from a non-finite input, kept as the fallback report
    full = torch.full((1, 3), float("-inf"))
    w.observe("aten::sub.Tensor", (full, full), {}, full - full)
    assert w.result["op"] == "aten::sub.Tensor" and w.result["from_finite_inputs"] is False and w.result["nan"] == 3
    # the second result of a multi-result op is not checked
    v = OpWatch()
    v.observe("aten::_ctc_loss", (torch.zeros(2),), {}, (torch.zeros(2), torch.full((2,), float("-inf"))))
    assert v.result is None


def test_a_nan_first_made_in_a_later_step_is_located_by_a_rerun_up_to_that_step(tmp_path):
    rec = record_entry(f"{ENTRIES}:late_nan", device="cpu", steps=4, out=tmp_path / "late", cwd=str(HERE),
                       isolate=False)
    first = rec.manifest["first_nonfinite"]
    assert (first["op"], first["stage"], first["step"]) == ("aten::log", "forward", 2)
    assert first["location"]["line"] == _line("LATE_LINE") and first["from_finite_inputs"] is True
    assert (first["inputs"][0]["min"], first["inputs"][0]["max"]) == (-1.0, 0.0)
    detail = rec.manifest["nan_check_detail"]
    assert detail["rerun_steps"] == 3
    assert detail["nonfinite_seen"] == {"key": "activation:lin#0", "kind": "activation", "step": 2, "nan": 15, "inf": 0}


def test_inference_tensors_have_no_version_counter_and_are_checked_all_the_same():
    import torch

    from mpsready.numerics.watch import OpWatch

    w = OpWatch()
    with torch.inference_mode():
        x = -torch.ones(2)
        w.observe("aten::sqrt", (x,), {}, torch.sqrt(x))
    assert w.result["op"] == "aten::sqrt" and w.result["nan"] == 2


def test_deferred_checks_are_read_at_flush_in_call_order():
    """The accelerator path (cuda/mps: no synchronisation per op), exercised on CPU tensors."""
    import torch

    from mpsready.numerics.watch import OpWatch

    w = OpWatch(deferred=True)
    w.stage, w.step = "forward", 3
    a = torch.tensor([1.0, 4.0])
    w.observe("aten::sqrt", (a,), {}, torch.sqrt(a))
    b = torch.tensor([-1.0, 0.0])
    w.observe("aten::log", (b,), {}, torch.log(b))  # the first non-finite: NaN and -inf
    c = torch.tensor([0.0])
    w.observe("aten::reciprocal", (c,), {}, torch.reciprocal(c))  # later: inf
    assert w.result is None and w.checked == 3  # nothing read yet
    w.flush()
    first = w.result
    assert (first["op"], first["stage"], first["step"], first["nan"], first["inf"]) == ("aten::log", "forward", 3, 1, 1)
    assert first["inputs"][0]["min"] == -1.0 and first["check"] == "deferred: read at the end of the stage"
    # an input overwritten before the flush: its statistics would be the new values, so none are given
    v = OpWatch(deferred=True)
    x = torch.tensor([-1.0])
    v.observe("aten::log", (x,), {}, torch.log(x))
    x.fill_(2.0)
    v.flush()
    assert v.result["op"] == "aten::log" and v.result["inputs"] is None and v.result["from_finite_inputs"] is None


def test_one_element_results_are_read_without_a_reduction(monkeypatch):
    """A loss or a step count is its own sum: its value is read directly (one reduction less per check); NaN,
    Inf and large finite values are told apart exactly as with the sum."""
    import torch

    from mpsready.numerics.watch import OpWatch

    summed = []  # the tensors a reduction ran on (the report's statistics run theirs on float64 copies)
    real_sum = torch.Tensor.sum
    monkeypatch.setattr(torch.Tensor, "sum", lambda self, *a, **k: summed.append(self) or real_sum(self, *a, **k))

    def was_summed(t):
        return any(s is t for s in summed)

    w = OpWatch()
    loss = torch.tensor(1.0)
    w.observe("aten::mse_loss", (torch.ones(3), torch.zeros(3)), {}, loss)
    big = torch.tensor(65504.0, dtype=torch.float16)  # float16's largest finite value
    w.observe("aten::mul.Tensor", (big, torch.tensor(1.0, dtype=torch.float16)), {}, big)
    assert w.result is None and w.checked == 2 and summed == []
    a = torch.tensor([[-2.0]])
    root = torch.sqrt(a)
    w.observe("aten::sqrt", (a,), {}, root)  # one element, two dimensions
    first = w.result
    assert (first["op"], first["nan"], first["inf"], first["numel"]) == ("aten::sqrt", 1, 0, 1)
    assert first["from_finite_inputs"] is True and first["inputs"][0]["min"] == -2.0 and not was_summed(root)
    v = OpWatch()
    x = torch.tensor(60000.0, dtype=torch.float16)
    y = x * 2  # 120000 is inf in float16
    v.observe("aten::mul.Tensor", (x, x.new_tensor(2.0)), {}, y)
    assert (v.result["op"], v.result["dtype"], v.result["inf"]) == ("aten::mul.Tensor", "float16", 1)
    assert not was_summed(y)
    u = OpWatch()
    two = torch.ones(2)
    u.observe("aten::mul.Tensor", (torch.ones(2), torch.ones(2)), {}, two)  # two elements: the sum
    assert u.checked == 1 and was_summed(two)


def test_the_guards_are_entered_only_when_python_code_could_see_the_check():
    """With no dispatch or function mode on its stack and a plain result (torch.Tensor, nn.Parameter) the check
    runs without the two guards; with a mode, or a result class of its own, inside them, and neither the mode
    nor the class sees the check's reduction. The report is the same either way."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    from mpsready.numerics.watch import OpWatch

    entered = []

    class Counting:
        def __init__(self, guard):
            self.guard = guard

        def __call__(self):
            entered.append(self.guard.__name__)
            return self.guard()

    def watch():
        w = OpWatch()
        w._guard = tuple(Counting(g) for g in w._guard)
        return w

    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    class Function(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    class Sub(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    x = torch.tensor([1.0, 4.0])
    w = watch()
    w.observe("aten::sqrt", (x,), {}, torch.sqrt(x))
    p = torch.nn.Parameter(torch.ones(2))
    w.observe("aten::add_.Tensor", (p, x), {}, p, inplace=True)
    assert w.checked == 2 and w.result is None and entered == []  # no mode, plain results: no guard
    neg = torch.tensor([-1.0, 4.0])
    out = torch.sqrt(neg)
    sub = torch.sqrt(neg).as_subclass(Sub)
    seen.clear()
    for ctx, result in ((Dispatch, out), (Function, out), (None, sub)):
        v = watch()
        entered.clear()
        if ctx is None:
            v.observe("aten::sqrt", (neg,), {}, result)
        else:
            with ctx():
                v.observe("aten::sqrt", (neg,), {}, result)
        first = v.result
        assert (first["op"], first["nan"], first["from_finite_inputs"]) == ("aten::sqrt", 1, True)
        assert first["inputs"][0]["min"] == -1.0 and "_DisableTorchDispatch" in entered
        assert seen == []  # neither a mode nor the subclass saw the check or the report's statistics


def test_the_check_gives_up_after_max_propagated_results_from_nonfinite_inputs():
    import torch

    from mpsready.numerics.watch import MAX_PROPAGATED, OpWatch

    w = OpWatch()
    x = torch.tensor([1.0, float("nan")])
    for _ in range(MAX_PROPAGATED - 1):
        x = x * 2  # each result non-finite from a non-finite input: looked at, not reported as first
        w.observe("aten::mul.Tensor", (x / 2, 2.0), {}, x)
    assert w.gave_up is False and w.checked == MAX_PROPAGATED - 1
    w.observe("aten::mul.Tensor", (x, 2.0), {}, x * 2)
    assert w.gave_up is True and w.checked == MAX_PROPAGATED
    w.observe("aten::mul.Tensor", (x, 2.0), {}, x * 2)  # no further check: nothing more to find
    assert w.checked == MAX_PROPAGATED
    doc = w.to_dict()
    assert doc["gave_up"] is True and doc["first_nonfinite"]["op"] == "aten::mul.Tensor"
    assert doc["first_nonfinite"]["from_finite_inputs"] is False
    # a NaN made from finite inputs before the bound is still the one reported
    w2 = OpWatch()
    w2.observe("aten::log", (-torch.ones(2),), {}, torch.log(-torch.ones(2)))
    assert w2.result["op"] == "aten::log" and w2.result["from_finite_inputs"] is True and w2.gave_up is False


def test_a_dispatch_mode_on_its_stack_with_the_python_key_off_needs_no_guard():
    """The emulated device's direct path hands the watch its call with the Python key off while its dispatch mode
    is on the stack (emulate/direct.py): no mode can see the check then, so the guards are not entered, and the
    report is the one a guarded check makes."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from mpsready.numerics.watch import OpWatch

    seen = []

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    entered = []
    w = OpWatch()
    w._guard = tuple((lambda g=g: entered.append(g.__name__) or g()) for g in w._guard)
    neg = torch.tensor([-1.0, 4.0])
    out = torch.sqrt(neg)
    with Dispatch(), torch._C._DisableTorchDispatch():
        w.observe("aten::add.Tensor", (neg, neg), {}, neg + neg)  # finite: checked, nothing entered
        assert entered == [] and w.checked == 1
        w.observe("aten::sqrt", (neg,), {}, out)
    first = w.result
    assert (first["op"], first["nan"], first["from_finite_inputs"], first["inputs"][0]["min"]) == \
        ("aten::sqrt", 1, True, -1.0)
    # the report's statistics only (always read under the guards)
    assert entered == ["_DisableTorchDispatch", "DisableTorchFunction"]
    assert seen == [] and w.checked == 2
