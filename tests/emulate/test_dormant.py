"""The dispatch mode off the stack while nothing is resident (emulate/dormant.py, issue 39): it comes off at a
plain C++ call, goes back on, under any mode the program pushed meanwhile, for every other call, and what it
sees, what the calls compute and what lands on MPS are what they were with it always on."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate import residence  # noqa: E402

_stack_len = torch._C._len_torch_dispatch_stack
_stack_at = torch._C._get_dispatch_stack_at


def _on_stack(emu) -> bool:
    return _stack_len() == 1 and _stack_at(0) is emu.dispatch


def test_off_at_a_plain_call_and_back_for_a_python_function(installed, aten_spy):
    seen = aten_spy()
    assert _on_stack(installed) and not installed.dormant  # as installed
    x = torch.tensor([1.0, -2.0, 3.0])
    assert installed.dormant and _stack_len() == 0
    assert torch.add(x, x).tolist() == [2.0, -4.0, 6.0]
    # a torch function written in Python: its aten calls reach the dispatch mode, back on the stack first
    y = torch.tensor([1.0, 0.0, 1.0])
    out = torch.nn.functional.binary_cross_entropy_with_logits(x, y)
    assert not installed.dormant and _on_stack(installed)
    assert seen == ["aten.binary_cross_entropy_with_logits.default"]
    assert round(out.item(), 6) == 0.162926  # mean of log(1 + e^-1), log(1 + e^-2), log(1 + e^-3)
    assert installed.dormant  # x.item(): off again


def test_values_and_attributes_while_off(installed, aten_spy):
    """``p.grad``, ``x.T``, the emulator's own ``Tensor.device`` and ``device="cpu"`` factories keep it off; their
    values are the CPU's."""
    seen = aten_spy()
    p = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    (p * p).sum().backward()
    seen.clear()
    torch.mul(p, 1)  # off the stack from here
    assert installed.dormant
    assert p.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert p.T.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert p.device == torch.device("cpu") and not p.is_mps
    assert torch.zeros(2, device="cpu").tolist() == [0.0, 0.0]
    assert torch.zeros(2, device=torch.device("cpu")).tolist() == [0.0, 0.0]
    p.grad = None
    assert p.grad is None
    assert installed.dormant and seen == []


def test_a_factory_onto_mps_wakes_it_and_lands(installed, aten_spy):
    seen = aten_spy()
    torch.add(torch.ones(2), 1)
    assert installed.dormant
    m = torch.zeros(2, device=torch.device("mps"))
    assert residence.on_mps(m) and not installed.dormant and _on_stack(installed)
    seen.clear()
    torch.add(torch.ones(2), 1)  # something is resident: CPU calls are seen (their placement is checked there)
    assert seen == ["aten.ones.default", "aten.add.Tensor"] and not installed.dormant


def test_a_backward_hook_that_creates_on_mps_is_still_seen(installed):
    """A backward pass runs with the dispatch mode on the stack (a hook's own calls reach no function mode): a
    hook's factory naming MPS lands there as before."""
    x = torch.ones(2, requires_grad=True)
    torch.mul(x, 2)
    assert installed.dormant
    made = []
    x.register_hook(lambda g: made.append(torch.full((2,), 7.0, device="mps")))
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert len(made) == 1 and residence.on_mps(made[0]) and made[0].tolist() == [7.0, 7.0]


def test_a_programs_mode_pushed_while_off_stays_above_it(installed, names_mode):
    x = torch.ones(3)
    torch.add(x, x)
    assert installed.dormant
    with names_mode() as mode:
        y = torch.add(x, x).mul_(2)  # plain calls: the program's mode sees them (ours, off, would only forward)
        assert _stack_len() == 1 and installed.dormant
        assert torch.nn.functional.relu(y).tolist() == [4.0, 4.0, 4.0]  # Python-level: ours back, under it
        assert _stack_len() == 2 and _stack_at(0) is installed.dispatch and _stack_at(1) is mode
    assert mode.names == ["aten.add.Tensor", "aten.mul_.Tensor", "aten.relu.default"]
    assert _on_stack(installed) and not installed.dormant


def test_an_optimizer_step_computes_the_same(installed):
    """``Optimizer.step``'s profiler range marks (``record_function``) keep it off; the step's values exact."""
    w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = torch.optim.SGD([w], lr=0.5, momentum=0.5)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    # step 1: g = 2w = [2, -2], buf = g, w = [0, 0]; step 2: g = 0, buf = 0.5 * buf = [1, -1], w = [-0.5, 0.5]
    assert w.tolist() == [-0.5, 0.5]
    assert installed.dormant


def test_uninstall_while_off_leaves_no_mode(tmp_path):
    from mpsready.emulate import Emulator, Target

    residence.clear()
    e = Emulator(Target("2.13", "15.5"), str(tmp_path))
    e.install()
    try:
        torch.add(torch.ones(1), 1)
        assert e.dormant and _stack_len() == 0
    finally:
        e.uninstall()
    assert _stack_len() == 0 and not e.dormant
    assert torch.add(torch.ones(1), 1).tolist() == [2.0]
