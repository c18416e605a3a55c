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
