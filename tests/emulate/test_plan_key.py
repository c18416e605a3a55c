"""Issue 39: a memoised plan (emulate/dispatch.py) never outlives what its judgement assumed: a call judged before
the program's first ``import torch`` read ``PYTORCH_ENABLE_MPS_FALLBACK=1`` is judged again after it (a fallback,
not the error judged without the variable)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_a_plan_judged_before_the_fallback_variable_was_read_is_judged_again(tmp_path, monkeypatch):
    import torch.nn.functional as F

    from mpsready.emulate import Emulator, Target
    from mpsready.run.child import watch_fallback_variable

    monkeypatch.delenv("PYTORCH_ENABLE_MPS_FALLBACK", raising=False)
    emu = Emulator(Target("2.3", "15.5", False), str(tmp_path), keep_going=True)
    emu.install()
    try:
        x = torch.randn(1, 2, 4, 4, 4, device="mps")
        F.avg_pool3d(x, 2)  # aten::avg_pool3d.out has no MPS kernel in 2.3.1: an error without the fallback
        undo = watch_fallback_variable(emu)
        monkeypatch.setenv("PYTORCH_ENABLE_MPS_FALLBACK", "1")
        __import__("torch")  # the program's first import of torch: the variable is read now
        undo()
        F.avg_pool3d(x, 2)
    finally:
        emu.uninstall()
    pools = sorted((r.op, r.outcome, r.calls) for r in emu.records.values() if "avg_pool3d" in r.op)
    assert pools == [("aten::avg_pool3d", "error", 1), ("aten::avg_pool3d", "fallback", 1)]
