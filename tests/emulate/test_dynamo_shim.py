"""Dynamo's disable wrapper around the dispatch mode (emulate/dynamo_shim.py, issue 39): once ``torch._dynamo`` is
imported, it is taken only while a Dynamo callback is set (a compiled region runs or is traced); an aten call
outside one pays none of it, and a function Dynamo compiles on the emulated device still computes as eagerly."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from mpsready.emulate import residence  # noqa: E402


def test_an_aten_call_outside_a_compiled_region_pays_no_disable_wrapper(installed, monkeypatch):
    import torch._dynamo.eval_frame as ef

    calls = []
    real = ef.set_eval_frame

    def counted(callback):
        calls.append(callback)
        return real(callback)

    monkeypatch.setattr(ef, "set_eval_frame", counted)
    x = torch.ones(3, device="mps")
    y = (x + x).mul(2)
    assert (y.tolist(), residence.on_mps(y), calls) == ([4.0, 4.0, 4.0], True, [])

    def f(t):
        return (t * 2).sin() + 1

    # the program's own Dynamo (the emulated torch.compile runs eagerly): its region's aten calls take the wrapper
    assert torch.equal(torch._dynamo.optimize("eager")(f)(x), f(x))
    assert None in calls
