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


# the inline path of MPSDispatch.__torch_dispatch__ (issue 39): a plan that only counts is carried out there; every
# other call takes MPSDispatch._dispatch, whose checks the inline path must never skip


def test_a_plan_that_only_counts_is_quick_after_its_first_call(emu):
    x, y = torch.ones(2), torch.ones(2)
    residence.mark(x)
    mode = MPSDispatch(emu)
    with mode:
        first = x + y  # the second tensor is the program's own, unmarked: not in emu.cpu_operands here
        plan = _info(mode, torch.ops.aten.add.Tensor).plans[1][(torch.float32, torch.float32)]
        assert plan.quick is True
        again = [y + x, x.mul(y), x + y]  # y + x: the first argument is not resident, the second is
    rec = emu.records[("aten::add.Tensor", "runs", None, None)]
    assert plan.record is rec
    assert rec.calls == 3
    assert emu.records[("aten::mul.Tensor", "runs", None, None)].calls == 1
    assert [residence.on_mps(t) for t in [first, *again]] == [True, True, True, True]


def test_plans_that_expand_or_advise_are_never_quick(emu):
    a = torch.ones(4, dtype=torch.int32)
    residence.mark(a)
    mode = MPSDispatch(emu)
    with mode:
        for _ in range(2):
            a.bitwise_not()  # a wrong-result advisory's op in 2.5 (mps_wrong_results.yaml)
    plan = _info(mode, torch.ops.aten.bitwise_not.default).plans[1][torch.int32]
    assert (plan.advise, plan.quick) == ("aten::bitwise_not", False)
    assert emu.records[("aten::bitwise_not", "runs", None, None)].calls == 2


def test_a_cpu_operand_beside_a_memoised_kind_of_call_still_fails(emu):
    x, y, c = torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2)
    residence.mark(x)
    residence.mark(y)
    mode = MPSDispatch(emu)
    with mode:
        x + y
        x + y  # quick now
        emu.cpu_operands = {id(c): c}
        x + c
        emu.cpu_operands = {}
    assert [(f.judgement.kind, f.judgement.exception) for f in emu.failures] == [("placement", "RuntimeError")]
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 2


def test_the_deadline_is_checked_on_a_memoised_kind_of_call(emu):
    from mpsready.emulate.session import StopRun

    x = torch.ones(2)
    residence.mark(x)
    mode = MPSDispatch(emu)
    with mode:
        x + x
        x + x
        emu.deadline, emu.time_limit = 0.0, 1.0  # already past
        with pytest.raises(StopRun, match="--time-limit 1 s reached"):
            x + x
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 2


def test_calls_inside_a_kernel_are_marked_not_counted(emu):
    x = torch.ones(2)
    residence.mark(x)
    mode = MPSDispatch(emu)
    with mode:
        x + x
        x + x
        emu.inside_kernel = 1
        out = x + x
        emu.inside_kernel = 0
    assert residence.on_mps(out)
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 2


def test_the_numerics_watch_gets_the_tensors_collected_once(emu):
    seen = []

    class Watch:
        nan_active = False

        def observe(self, name, inplace, args, kwargs, out, depth, view, tensors):
            seen.append((name, kwargs, depth, view, [id(t) for t in tensors]))

    x, y = torch.ones(2), torch.ones(2)
    residence.mark(x)
    residence.mark(y)
    emu.numerics = Watch()
    mode = MPSDispatch(emu)
    with mode:
        x + y
        x + y
        torch.cat([x, y])
    assert seen == [("aten::add.Tensor", {}, 0, False, [id(x), id(y)])] * 2 + [
        ("aten::cat", {}, 0, False, [id(x), id(y)])]


def test_cpu_calls_run_as_they_are_and_a_resident_out_tensor_is_still_judged(emu):
    c, d = torch.ones(2), torch.ones(2)
    mode = MPSDispatch(emu)
    with mode:
        plain = [c + d, c.add(d, alpha=2), torch.zeros(2, dtype=torch.float64)]  # CPU calls, with and without keywords
        assert emu.records == {}
        assert [residence.on_mps(t) for t in plain] == [False, False, False]
        out = torch.empty(2)
        residence.mark(out)
        torch.add(c, d, out=out)  # the resident tensor is a keyword's: on MPS
    assert [(r.op, r.calls) for r in emu.records.values()] == [("aten::add.out", 1)]
    assert torch.equal(out, torch.full((2,), 2.0))


def test_a_factory_naming_mps_inside_a_cpu_call_is_still_made_on_the_device(emu):
    mode = MPSDispatch(emu)
    with mode:
        t = torch.ops.aten.zeros.default([2], device=torch.device("mps"))
    assert residence.on_mps(t) and t.device.type == "cpu"
    assert [(r.op, r.calls) for r in emu.records.values()] == [("aten::zeros", 1)]


def test_the_inline_path_reads_the_plans_from_one_table_by_dtypes_and_grad_mode(emu):
    x, i = torch.ones(3), torch.ones(3, dtype=torch.int64)
    residence.mark(x)
    residence.mark(i)
    mode = MPSDispatch(emu)
    with mode:
        for _ in range(2):
            x + i
            with torch.no_grad():
                x + i
            x + 1
    add = torch.ops.aten.add.Tensor
    info = _info(mode, add)
    table_info, plans, sized = mode.quick[id(add)]
    assert table_info is info and sized is info.sized
    assert plans == {(torch.float32, torch.int64, True): info.plans[1][(torch.float32, torch.int64)],
                     (torch.float32, torch.int64, False): info.plans[0][(torch.float32, torch.int64)],
                     (torch.float32, True): info.plans[1][torch.float32]}
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 6
    mode.forget_plans()
    assert mode.quick == {}


def test_a_sparse_tensor_is_not_answered_by_the_plan_of_a_dense_one(emu):
    x, s = torch.ones(3), torch.ones(3).to_sparse()
    residence.mark(x)
    residence.mark(s)
    mode = MPSDispatch(emu)
    with mode:
        x + x
        x + x
        out = s + s
    add = torch.ops.aten.add.Tensor
    assert list(mode.quick[id(add)][1]) == [(torch.float32, torch.float32, True)]
    assert out.layout is torch.sparse_coo
    assert [(r.op, r.outcome, r.kind, r.calls) for r in emu.records.values()] == [
        ("aten::add.Tensor", "runs", None, 2), ("aten::add.Tensor", "error", "sparse", 1)]  # MPS has no sparse add in 2.5


class _Probe:
    """A numerics watch that notes the residence hint each judged call saw (RunWatch's interface)."""

    nan_active = False

    def __init__(self):
        self.seen: list = []

    def observe(self, name, *_args):
        self.seen.append((name, residence._MARKS.hint))

    def observe_cpu(self, *_args):
        pass


def test_the_function_mode_hints_a_resident_first_argument_for_its_call_only(emu):
    probe = emu.numerics = _Probe()
    emu.install()
    try:
        xm, ym = torch.ones(2).to("mps"), torch.ones(2).to("mps")
        c = torch.ones(2)
        probe.seen.clear()
        torch.add(xm, ym)
        xm.mul(ym)
        torch.neg(xm)
        hint_after = residence._MARKS.hint
    finally:
        emu.uninstall()
    assert probe.seen == [("aten::add.Tensor", xm), ("aten::mul.Tensor", xm), ("aten::neg", None)]
    assert hint_after is None
    residence.mark(c)
    residence._MARKS.hint = c
    residence.unmark(c)  # unmarking anything drops the hint: it only ever names a marked tensor
    assert residence._MARKS.hint is None and not residence.on_mps(c)


class _Counting:
    """Counts the calls that reach MPSDispatch.__torch_dispatch__ (the C++ side looks it up on every call)."""

    def __init__(self):
        self.calls = 0
        self.real = MPSDispatch.__dict__["__torch_dispatch__"]

    def __enter__(self):
        real = self.real

        def counted(mode, func, types, args=(), kwargs=None):
            self.calls += 1
            return real(mode, func, types, args, kwargs)
        MPSDispatch.__torch_dispatch__ = counted
        return self

    def __exit__(self, *exc):
        MPSDispatch.__torch_dispatch__ = self.real


def test_a_two_tensor_call_whose_one_aten_call_only_counts_runs_directly_once_learnt(emu):
    emu.install()
    try:
        x, y = torch.ones(3).to("mps"), torch.ones(3).to("mps")
        with _Counting() as seen:
            outs = [torch.add(x, y) for _ in range(3)]
            torch.subtract(x, y)
            torch.subtract(x, y)
        direct, indirect = dict(emu.dispatch.direct), set(emu.dispatch.indirect)
        resident = [residence.on_mps(t) for t in outs]
    finally:
        emu.uninstall()
    # the first torch.add went through the dispatch mode and was learnt; the next two ran with the Python key off
    assert seen.calls == 1 + 2
    add = torch.ops.aten.add.Tensor
    entry = direct[(torch.add, torch.float32, torch.float32, True)]
    assert entry[0] is emu.dispatch.quick[id(add)][1][(torch.float32, torch.float32, True)] and entry[2] is True
    # torch.subtract is aten::sub.Tensor: not the aten op of its own name (x @ y, aten::dot, was the example until
    # dot got an envelope regime, an empty tensor: ops/envelope.py, which puts its calls on the wrong-result path)
    assert indirect == {torch.subtract}
    assert emu.records[("aten::add.Tensor", "runs", None, None)].calls == 3
    assert emu.records[("aten::sub.Tensor", "runs", None, None)].calls == 2
    assert resident == [True, True, True]


class _Mine(torch.Tensor):
    pass


def test_the_direct_path_leaves_a_sparse_tensor_and_another_dispatch_mode_to_the_dispatch_mode(emu):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Outer(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(func)
            return func(*args, **(kwargs or {}))

    emu.install()
    try:
        x = torch.ones(3).to("mps")
        s = torch.ones(3).to_sparse()
        residence.mark(s)
        torch.add(x, x)
        m = x.as_subclass(_Mine)
        residence.mark(m)
        with _Counting() as seen:
            torch.add(x, x)  # direct
            torch.add(s, s)  # the same dtypes, sparse: through the dispatch mode, judged
            torch.add(m, m)  # a subclass (its own __torch_dispatch__ would need the Python key): through it too
        outer = Outer()
        with outer:
            torch.add(x, x)  # another dispatch mode on the stack: through the modes
    finally:
        emu.uninstall()
    assert seen.calls == 2
    assert outer.seen == [torch.ops.aten.add.Tensor]
    assert [(r.op, r.outcome, r.kind, r.calls) for r in emu.records.values()] == [
        ("aten::add.Tensor", "runs", None, 4), ("aten::add.Tensor", "error", "sparse", 1)]


def test_a_function_written_in_python_is_never_run_directly(emu):
    emu.install()
    try:
        x, y = torch.ones(3).to("mps"), torch.ones(3).to("mps")
        for _ in range(2):
            x // y  # Tensor.__floordiv__, written in Python: torch.floor_divide inside it
            torch.sub(x, y)
        direct = dict(emu.dispatch.direct)
    finally:
        emu.uninstall()
    assert direct[(torch.Tensor.__floordiv__, torch.float32, torch.float32, True)] == 2  # tries, nothing learnt
    assert isinstance(direct[(torch.sub, torch.float32, torch.float32, True)], tuple)  # written in C++: learnt
    assert emu.records[("aten::sub.Tensor", "runs", None, None)].calls == 2
    assert emu.records[("aten::floor_divide", "runs", None, None)].calls == 2


def test_the_direct_path_runs_under_the_numerics_watch_and_hands_it_each_call(emu):
    """With ``mpsready run``'s watch installed, a learnt two-tensor call still runs with the Python key off; the
    watch is handed it as the inline path hands it (the check counted, the shapes per line, a result that
    overflowed from finite inputs reported with its inputs), and its reduction is seen by no mode (no aten::sum
    counted on the emulated device)."""
    from mpsready.numerics.hooks import RunWatch

    emu.install()
    watch = RunWatch(emu)
    try:
        x, y = torch.ones(3).to("mps"), torch.ones(3).to("mps")
        big, big2 = torch.full((3,), 3e38).to("mps"), torch.full((2, 3), 3e38).to("mps")
        watch.install()
        with _Counting() as seen:
            for _ in range(3):
                torch.add(x, y)
            torch.add(big, big2)  # finite inputs, inf result (float32 overflow)
        learnt = isinstance(emu.dispatch.direct[(torch.add, torch.float32, torch.float32, True)], tuple)
    finally:
        watch.uninstall()
        emu.uninstall()
    assert learnt and seen.calls == 1  # the first call learnt; the other three ran directly
    assert [(r.op, r.calls) for r in emu.records.values()] == [("aten::add.Tensor", 4)]
    doc = watch.to_dict()
    assert doc["checked"] == 4
    first = doc["first_nonfinite"]
    assert (first["op"], first["dtype"], first["inf"], first["nan"], first["from_finite_inputs"], first["device"]) \
        == ("aten::add.Tensor", "float32", 6, 0, True, "mps")
    top = float(torch.tensor(3e38))  # 3e38 in float32
    assert [(i["shape"], i["max"]) for i in first["inputs"]] == [([3], top), ([2, 3], top)]
