"""``mpsready replay``: a layer whose own op computes differently ("op") and one whose error came from upstream.

The "device with a faulty kernel" is this CPU with aten::tanh's CPU kernel replaced (torch.library) by one
whose float32 results are 1 % too large, while float64 stays exact: the float64 re-run of each op is then the
correct answer, as it is for a real device kernel that rounds differently.
"""
import contextlib
import warnings
from pathlib import Path

import pytest
import torch

from mpsready.errors import UsageError
from mpsready.replay.engine import replay
from mpsready.record.recorder import record_entry

HERE = Path(__file__).parent


@contextlib.contextmanager
def faulty_tanh():
    def tanh(x):
        e = torch.exp(2 * x)
        y = (e - 1) / (e + 1)
        return y * 1.01 if x.dtype == torch.float32 else y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
        lib = torch.library.Library("aten", "IMPL")
        lib.impl("tanh", tanh, "CPU")
    try:
        yield
    finally:
        lib._destroy()


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    kw = {"device": "cpu", "steps": 1, "cwd": str(HERE), "isolate": False}
    for layer in ("mid", "head"):
        record_entry("entries.py:replay_model", out=d / f"a-{layer}", save_inputs=layer, **kw)
        with faulty_tanh():
            record_entry("entries.py:replay_model", out=d / f"b-{layer}", save_inputs=layer, **kw)
    return d


def test_record_saves_the_layer_inputs_as_safetensors(records):
    from mpsready.record.layout import RunRecord

    rec = RunRecord.open(records / "a-mid")
    assert rec.manifest["layer_inputs"] == {"layer": "mid", "module_type": "Block", "steps": [0],
                                            "files": ["layer_inputs/mid/step-0000.safetensors"], "error": None}
    from safetensors.torch import load_file

    t = load_file(str(records / "a-mid" / "layer_inputs/mid/step-0000.safetensors"))
    assert sorted(t) == ["input.0", "output", "state.lin.bias", "state.lin.weight"]
    assert list(t["input.0"].shape) == [16, 8] and list(t["output"].shape) == [16, 8]


def test_the_perturbed_layer_alone_reproduces_it_and_the_op_is_named(records):
    with faulty_tanh():  # the device here computes tanh as B's did
        res = replay(records / "a-mid", records / "b-mid", cwd=str(HERE), devices=["cpu"])
    assert res.layer == "mid" and res.step == 0 and res.module_type == "Block"  # the first diverging layer
    assert res.verdict == "op" and res.op == "aten::tanh" and res.reproduced_on == "cpu"
    assert res.divergence == pytest.approx(0.01, rel=1e-3)
    assert res.err_b == pytest.approx(0.01, rel=1e-3) and res.inputs == 0.0
    cpu = res.devices[0]
    assert cpu.ops[0].op == "aten::tanh" and cpu.ops[0].error == pytest.approx(0.01, rel=1e-3)
    assert all(o.error < 1e-6 for o in cpu.ops[1:])
    (f,) = res.findings
    assert f.code == "NUM303" and f.location.operator == "aten::tanh"


def test_without_the_faulty_device_here_it_is_still_an_op_but_unnamed(records):
    res = replay(records / "a-mid", records / "b-mid", cwd=str(HERE), devices=["cpu"])
    assert res.verdict == "op" and res.op is None and res.reproduced_on is None
    assert "no device here reproduces it" in res.note and "replay on the device of B (cpu)" in res.note


def test_a_layer_fed_diverged_inputs_says_accumulated(records):
    res = replay(records / "a-head", records / "b-head", layer="head", cwd=str(HERE), devices=["cpu"])
    assert res.verdict == "accumulated" and res.op is None
    assert res.divergence > 1e-3 and res.inputs == pytest.approx(res.divergence, rel=1e-4)
    assert res.err_a < 1e-6 and res.err_b < 1e-6 and res.devices[0].error < 1e-6
    (f,) = res.findings
    assert f.code == "NUM304" and "accumulated upstream" in f.message


def test_no_saved_inputs_says_how_to_record_them(records):
    with pytest.raises(UsageError, match=r"has no saved inputs of layer 'pre' at step 0; record it with "
                                         r"`mpsready record \.\.\. --save-inputs pre`"):
        replay(records / "a-mid", records / "b-mid", layer="pre", cwd=str(HERE))


def test_cli_json(records, capsys):
    from mpsready.cli import main

    with faulty_tanh():
        rc = main(["replay", str(records / "a-mid"), str(records / "b-mid"), "--device", "cpu", "--format", "json",
                   "--entry", str(HERE / "entries.py") + ":replay_model"])
    import json

    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["verdict"] == "op" and doc["op"] == "aten::tanh" and doc["schema"] == {"name": "mpsready.replay", "version": 1}
