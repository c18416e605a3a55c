"""Nothing resident on MPS (a CPU-only program, a test suite's CPU tests under ``pytest --mps-emulate``): the
device mode forwards without its walk for CPU operands (issue 39), and the walk is back once a tensor is."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate import Emulator, Target, residence  # noqa: E402
from mpsready.emulate.device import _forward  # noqa: E402


@pytest.fixture
def emu(tmp_path):
    residence.clear()
    e = Emulator(Target("2.5", "15.5"), str(tmp_path), keep_going=True)
    yield e
    residence.clear()


def test_the_placement_walk_starts_with_the_first_resident_tensor(emu):
    a, b = torch.ones(2), torch.ones(2)
    seen = []

    def fn(*args, **kwargs):
        seen.append(dict(emu.cpu_operands))
        return len(args) + len(kwargs)

    assert _forward(emu, fn, ([a, b],), {"other": b}) == 2
    residence.mark(a)
    assert _forward(emu, fn, ([a, b],), {"other": b}) == 2
    assert seen == [{}, {id(b): b}]
    assert emu.cpu_operands == {}


def test_a_cpu_call_runs_below_the_dispatch_mode_until_a_tensor_is_resident(installed, aten_spy):
    """Nothing resident: a torch function written in C++ on plain tensors reaches none of the emulator's Python at
    the aten level (the dispatch mode would only forward it); once a tensor is resident, CPU calls are seen again
    (their placement is checked there)."""
    seen = aten_spy()
    x, y = torch.ones(3), torch.ones(3)
    w = torch.nn.Parameter(torch.ones(2, 3))
    out = torch.nn.functional.linear(x, w).sum() + torch.add(x, y, alpha=2).mul_(2)[0]
    assert (out.item(), seen) == (12.0, [])
    m = torch.ones(2, device="mps")
    assert residence.on_mps(m) and "aten.ones.default" in seen  # the factory onto MPS, judged there
    seen.clear()
    torch.add(x, y)
    assert seen == ["aten.add.Tensor"]


def test_a_programs_own_dispatch_mode_still_sees_every_call(installed, names_mode):
    x = torch.ones(3)
    with names_mode() as mode:
        torch.add(x, x).mul_(2)
    assert mode.names == ["aten.add.Tensor", "aten.mul_.Tensor"]


def test_a_tensor_subclass_with_its_own_dispatch_is_still_served(installed):
    class Logged(torch.Tensor):  # a wrapper without storage: only its __torch_dispatch__ can compute with it
        calls: list[str] = []
        __torch_function__ = torch._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(str(func))
            return func(*[a.elem if isinstance(a, Logged) else a for a in args], **(kwargs or {}))

    assert torch.add(Logged(torch.ones(2)), torch.ones(2)).tolist() == [2.0, 2.0]
    assert Logged.calls == ["aten.add.Tensor"]


def test_a_device_or_generator_given_to_a_cpu_call_still_reaches_the_dispatch_mode(installed, aten_spy):
    """While nothing is resident, a C++ torch call given a device naming MPS (``Tensor.is_pinned(device)``, the one
    positional device argument of 2.13's functions) or a generator is still seen at the aten level; an MPS
    generator given to a CPU random op is MPS's error there."""
    seen = aten_spy()
    with pytest.warns(DeprecationWarning):
        assert torch.ones(2).is_pinned("mps") is False
    g = torch.Generator(device="mps")
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'mps'"):
        torch.randn(2, generator=g)
    assert seen == ["aten.is_pinned.default", "aten.randn.generator"]
