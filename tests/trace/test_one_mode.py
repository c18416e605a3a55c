"""A trace on the emulated device hands each call from the recorder's dispatch mode to the emulator's directly
(``MPSDispatch.forward``) instead of through the dispatcher: the document must be what the two stacked modes
gave, call for call (only times differ)."""
from __future__ import annotations

import re

import pytest

pytest.importorskip("torch")

from mpsready.emulate.dispatch import MPSDispatch  # noqa: E402
from mpsready.step import load_entry  # noqa: E402
from mpsready.trace.api import trace_entry  # noqa: E402

ENTRIES = '''\
import torch
import torch.nn.functional as F
from torch import nn


def transformer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).to("mps")
    opt = torch.optim.Adam(layer.parameters())

    def step():
        x = torch.randn(2, 5, 16, device="mps")
        loss = layer(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def mixed():
    def step():
        w = torch.ones(3, device="mps", requires_grad=True)
        x = torch.zeros_like(w, dtype=torch.float64)
        y = torch.linalg.svd(torch.randn(4, 4, device="mps")).S.sum()
        z = F.conv_transpose3d(torch.randn(1, 1, 2, 2, 2, device="mps"), torch.randn(1, 1, 2, 2, 2, device="mps"))
        n = torch.log(torch.zeros(2, device="mps") - 1).sum()
        loss = (w * 2).sum() + y + z.sum() + x.sum().float() + n
        loss.backward()
        return loss
    return step


def raises():
    def step():
        a = torch.ones(2, 3, device="mps")
        return (a @ a).sum()
    return step
'''
_TIMEY = re.compile(r"(time|elapsed|duration|_s$|_ms$|_us$|seconds|created|traceback)", re.I)


def _scrub(o):
    if isinstance(o, dict):
        return {k: ("<t>" if _TIMEY.search(k) else _scrub(v)) for k, v in o.items()}
    if isinstance(o, list):
        return [_scrub(v) for v in o]
    return o


def _two_modes(self, func, types, args=(), kwargs=None):
    """What the recorder did before: call on through the dispatcher, to this mode below it."""
    return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name,torch_v", [("transformer", "2.13"), ("mixed", "2.5"), ("mixed", "2.13"),
                                          ("raises", "2.13")])
def test_direct_forward_records_what_two_modes_recorded(tmp_path, monkeypatch, name, torch_v):
    (tmp_path / "entries.py").write_text(ENTRIES)

    def run():
        return _scrub(trace_entry(load_entry(f"{tmp_path / 'entries.py'}:{name}"), torch=torch_v, macos="14.4",
                                  steps=2).to_dict())

    direct = run()
    with monkeypatch.context() as m:
        m.setattr(MPSDispatch, "forward", _two_modes)
        before = run()
    assert direct == before
    assert direct["trace"]["calls"]  # the step ran and was recorded


def test_forward_is_what_the_trace_uses(tmp_path, monkeypatch):
    seen = []
    real = MPSDispatch.forward

    def counting(self, func, types, args=(), kwargs=None):
        seen.append(func)
        return real(self, func, types, args, kwargs)

    monkeypatch.setattr(MPSDispatch, "forward", counting)
    (tmp_path / "entries.py").write_text(ENTRIES)
    trace_entry(load_entry(f"{tmp_path / 'entries.py'}:raises"), torch="2.13", macos="14.4")
    assert seen
