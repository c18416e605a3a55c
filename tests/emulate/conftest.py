"""Fixtures shared by the emulator's tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def installed(tmp_path):
    """The emulated Mac (torch 2.13, macOS 15.5) installed in this process as ``pytest --mps-emulate`` installs it
    (no numerics watch); residence cleared before, uninstalled after."""
    pytest.importorskip("torch")
    from mpsready.emulate import Emulator, Target, residence

    residence.clear()
    e = Emulator(Target("2.13", "15.5"), str(tmp_path))
    e.install()
    try:
        yield e
    finally:
        e.uninstall()


@pytest.fixture
def aten_spy(monkeypatch):
    """A function that starts recording, by name, the aten calls reaching the emulator's dispatch mode from the
    moment it is called, and returns the list it records into."""

    def start() -> list[str]:
        from mpsready.emulate.dispatch import MPSDispatch

        seen: list[str] = []
        real = MPSDispatch.__torch_dispatch__

        def spy(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return real(self, func, types, args, kwargs)

        monkeypatch.setattr(MPSDispatch, "__torch_dispatch__", spy)
        return seen
    return start


@pytest.fixture
def names_mode():
    """A program's own dispatch mode (a fresh class per test) that records, by name, every aten call it sees in
    ``.names`` and runs it unchanged."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    return Names
