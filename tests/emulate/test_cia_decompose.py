"""The CIA kernels' decomposition (emulate/cia.py ``decomposer``): ``OpOverload.decompose`` without its per-call
kernel look-up (issue 39, the plugin's overhead), same values, same autograd graph, a Python decomposition of the
key still first."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate.cia import _CIA, decomposer  # noqa: E402


def test_the_decomposition_is_the_overloads_own():
    op = torch.ops.aten.linear.default
    x = torch.tensor([[1.0, 2.0], [3.0, -4.0]])
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    b = torch.tensor([1.0, -2.0], requires_grad=True)
    out = decomposer(op)(x, w, b)
    assert out.tolist() == [[-0.5, 0.5], [6.5, 3.0]]
    assert out.grad_fn.name() == "AddmmBackward0"  # the CIA decomposition's graph, as op.decompose records it
    out.sum().backward()
    assert (w.grad.tolist(), b.grad.tolist()) == ([[4.0, -2.0], [4.0, -2.0]], [2.0, 2.0])
    assert op.decompose(x, w, b).tolist() == out.tolist()


def test_a_python_decomposition_of_the_key_still_wins():
    op = torch.ops.aten.linear.default
    calls = []

    def mine(*args, **kwargs):
        calls.append(len(args))
        return "mine"

    assert _CIA not in op.py_kernels
    op.py_kernels[_CIA] = mine
    try:
        assert decomposer(op)(torch.ones(1, 1), torch.ones(1, 1)) == "mine"
    finally:
        del op.py_kernels[_CIA]
    assert calls == [2]
