"""The dispatch mode's memoised plans: one judgement per (op, argument dtypes, grad mode, depth) where the judge
reads nothing else, forwarded unchanged; every other call is judged afresh."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate import Emulator, Target, residence  # noqa: E402
from mpsready.emulate.dispatch import MPSDispatch  # noqa: E402
from mpsready.ops.judge import CallFacts  # noqa: E402


@pytest.fixture
def emu(tmp_path):
    e = Emulator(Target("2.5", "15.5"), str(tmp_path), keep_going=True)
    yield e
    residence.clear()


def _info(mode, func):
    return mode.infos[id(func)]


def test_repeated_calls_share_one_plan(emu):
    x = torch.ones(3)
    residence.mark(x)
    mode = MPSDispatch(emu)
    with mode:
        outs = [x + 1 for _ in range(3)]
    info = _info(mode, torch.ops.aten.add.Tensor)
    assert info.dtype_only is True
    assert list(info.plans[1]) == [torch.float32]  # grad on, depth 0: keyed by the one tensor's dtype
    assert info.plans[0] == info.plans[2] == info.plans[3] == {}
    plan = info.plans[1][torch.float32]
    assert plan.j == emu.judge.call("aten::add.Tensor", CallFacts(dtypes=("float32",)))
    assert (plan.dtype, plan.expand, plan.fails, plan.fallback) == ("float32", False, False, False)
    rec = emu.records[("aten::add.Tensor", "runs", None, None)]
    assert plan.record is rec
    assert (rec.calls, rec.dtypes) == (3, ["float32"])
    assert all(residence.on_mps(t) for t in outs)


def test_grad_mode_and_dtypes_are_separate_plans(emu):
    x, i = torch.ones(3), torch.ones(3, dtype=torch.int64)
    residence.mark(x)
    residence.mark(i)
    mode = MPSDispatch(emu)
    with mode:
        x + i
        with torch.no_grad():
            x + i
        x + 1
    info = _info(mode, torch.ops.aten.add.Tensor)
    assert list(info.plans[1]) == [(torch.float32, torch.int64), torch.float32]
    assert list(info.plans[0]) == [(torch.float32, torch.int64)]
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 3


def test_a_cpu_operand_is_judged_every_time(emu):
    x, c = torch.ones(2, 2), torch.ones(2, 2)
    residence.mark(x)
    emu.cpu_operands = {id(c): c}
    mode = MPSDispatch(emu)
    with mode:
        x + c
        x + c
    info = _info(mode, torch.ops.aten.add.Tensor)
    assert info.plans[1] == {}  # never memoised: the placement depends on which tensor is on the CPU
    assert [(f.judgement.kind, f.judgement.exception) for f in emu.failures] == [("placement", "RuntimeError")]
    assert emu.failures[0].judgement.message == ("Expected all tensors to be on the same device, but found at "
                                                 "least two devices, mps:0 and cpu!")


def test_ops_with_shape_rules_are_not_memoised(emu):
    x, w = torch.ones(1, 1, 4, 4), torch.ones(1, 1, 3, 3)
    residence.mark(x)
    residence.mark(w)
    mode = MPSDispatch(emu)
    with mode:
        torch.nn.functional.conv2d(x, w)
        torch.nn.functional.conv2d(x, w)
    info = _info(mode, torch.ops.aten.convolution.default)
    assert info.dtype_only is False
    assert info.plans == ({}, {}, {}, {})
    # a composite here, expanded: MPS's own kernel is what its callee routes to
    assert emu.records[("aten::convolution", "composite", None, None)].calls == 2
    assert emu.records[("aten::_mps_convolution", "runs", None, None)].calls == 2


def test_a_refused_result_dtype_fails_where_it_lands(emu):
    x = torch.ones(3)
    residence.mark(x)
    mode = MPSDispatch(emu)
    with mode:
        y = torch.ops.aten._to_copy.default(x, dtype=torch.float64)
    j = emu.failures[0].judgement
    assert (j.op, j.named, j.kind, j.exception, j.dtype) == ("aten::_to_copy", "aten::_to_copy", "dtype", "TypeError",
                                                             "float64")
    assert residence.on_mps(y)  # --keep-going: the program goes on with the tensor
