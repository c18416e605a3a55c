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
