"""``mpsready trace``: input shapes per op and line over the steps (PRF301) and the first NaN (NUM301)."""
from pathlib import Path

from mpsready.step.entry import load_entry
from mpsready.trace.api import trace_entry

HERE = Path(__file__).parent


def _line(marker: str) -> int:
    lines = (HERE / "entries.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# {marker}"))


def _trace(fn, device="mps", steps=4):
    return trace_entry(load_entry(f"entries.py:{fn}", cwd=str(HERE)), torch="2.13", macos="15.5", device=device,
                       steps=steps)


def test_a_new_sequence_length_every_step_is_reported_at_its_line():
    for device in ("mps", "cpu"):  # the emulated device and the CPU trace
        res = _trace("variable_length", device)
        doc = res.to_dict()
        assert doc["numerics"]["steps_observed"] == 4
        dyn = {(d["op"], d["location"]["line"]) for d in doc["numerics"]["dynamic_shapes"]}
        assert ("aten::tanh", _line("SEQ_LINE")) in dyn, device
        (tanh,) = [d for d in doc["numerics"]["dynamic_shapes"]
                   if d["op"] == "aten::tanh" and d["location"]["line"] == _line("SEQ_LINE")]
        assert tanh["shapes"] == [[[2, 3, 6]], [[2, 4, 6]], [[2, 5, 6]], [[2, 6, 6]]]
        assert tanh["new_in_steps"] == [1, 2, 3] and tanh["distinct"] == 4
        prf = [f for f in res.findings if f.code == "PRF301" and f.location.operator == "aten::tanh"]
        assert len(prf) == 1 and prf[0].location.line == _line("SEQ_LINE") and prf[0].severity.value == "degrades"


def test_fixed_shapes_and_too_few_steps_are_not_reported():
    assert _trace("fixed_length").to_dict()["numerics"]["dynamic_shapes"] == []
    # two steps cannot show a shape changing in most steps
    assert _trace("variable_length", steps=2).to_dict()["numerics"]["dynamic_shapes"] == []


def test_first_nan_in_a_trace():
    res = _trace("log_negative", "mps", steps=1)
    first = res.to_dict()["numerics"]["first_nonfinite"]
    assert (first["op"], first["stage"], first["location"]["line"]) == ("aten::log", "forward", _line("LOG_LINE"))
    (num,) = [f for f in res.findings if f.code == "NUM301"]
    assert num.basis.value == "predicted" and num.message.startswith("first NaN/Inf on emulated mps: aten::log")
