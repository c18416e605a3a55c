"""``mpsready trace ENTRY --device mps`` without a Mac: the step runs on the emulated MPS device, and only
tensors that reach MPS are judged (the device model of ``mpsready run``)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("numpy")

from mpsready.step import load_entry  # noqa: E402
from mpsready.trace.api import trace_entry  # noqa: E402

ENTRIES = '''\
import numpy as np
import torch
import torch.nn.functional as F
from mpsready.step import Step

A = np.linspace(0, 1, 12).reshape(3, 4)


def cast_before():
    x = torch.from_numpy(A).float()
    return Step(model=torch.nn.Linear(4, 2), batch=(x, torch.tensor([0, 1, 0])), loss_fn=F.cross_entropy,
                optimizer=lambda p: torch.optim.SGD(p, lr=0.1))


def cast_after():
    def step():
        x = torch.from_numpy(A).to("mps").float()
        return (x * 2).sum()
    return step


def svd():
    def step():
        w = torch.randn(4, 3, device="mps", requires_grad=True)
        u, s, v = torch.linalg.svd(w, full_matrices=False)
        loss = s.sum()
        loss.backward()
        return loss
    return step


def convt3d():
    def step():
        up = torch.nn.ConvTranspose3d(2, 2, 2).to("mps")
        return up(torch.randn(1, 2, 3, 3, 3, device="mps")).sum()
    return step
'''


@pytest.fixture()
def entries(tmp_path):
    (tmp_path / "entries.py").write_text(ENTRIES)
    return lambda name: load_entry(f"{tmp_path / 'entries.py'}:{name}")


def _codes(result):
    return sorted((f.code, f.location.line, f.location.operator) for f in result.findings)


def test_cast_before_the_move_is_clean(entries):
    r = trace_entry(entries("cast_before"), torch="2.13", macos="15.5", device="mps")
    assert _codes(r) == []
    assert [s["status"] for s in r.trace.stages][:3] == ["passed", "passed", "passed"]
    assert r.prediction.summary["emulated"] is True and r.trace.device == "mps"


def test_cast_after_the_move_is_a_float64_blocker_at_the_move(entries):
    r = trace_entry(entries("cast_after"), torch="2.13", macos="15.5", device="mps")
    assert _codes(r) == [("DTY201", 17, "aten::_to_copy")]
    assert r.exit_code == 1


@pytest.mark.parametrize("torch_v,want", [("2.5", [("OPS102", 25, "aten::linalg_svd")]), ("2.14", [])])
def test_linalg_svd_is_a_fallback_not_an_error(entries, torch_v, want):
    r = trace_entry(entries("svd"), torch=torch_v, macos="15.5", device="mps")
    assert _codes(r) == want
    assert not [o for o in r.prediction.ops if o.verdict == "error"]


@pytest.mark.parametrize("torch_v,want", [("2.7", [("OPS110", 35, "aten::_mps_convolution_transpose")]), ("2.8", [])])
def test_conv_transpose_3d_rule(entries, torch_v, want):
    r = trace_entry(entries("convt3d"), torch=torch_v, macos="15.5", device="mps")
    assert _codes(r) == want


def test_emulated_trace_json_validates_against_the_trace_schema(entries):
    import json
    from importlib import resources

    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("mpsready.trace").joinpath("data/trace.schema.json").read_text())
    for name, torch_v in (("svd", "2.5"), ("cast_after", "2.13"), ("convt3d", "2.7")):
        doc = trace_entry(entries(name), torch=torch_v, macos="15.5", device="mps").to_dict()
        jsonschema.validate(json.loads(json.dumps(doc)), schema)
