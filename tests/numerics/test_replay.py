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


# issue 34 item 3: a record is data; the entry it names is shown and run only from inside the folder named

def _with_entry(records, tmp_path, entry: str) -> Path:
    import json
    import shutil

    a = tmp_path / "a"
    shutil.copytree(records / "a-mid", a)
    doc = json.loads((a / "record.json").read_text())
    doc["entry"] = entry
    (a / "record.json").write_text(json.dumps(doc))
    return a


def test_a_record_naming_code_outside_the_project_is_refused(records, tmp_path):
    evil = tmp_path / "evil.py"
    marker = tmp_path / "RAN"
    evil.write_text(f"open({str(marker)!r}, 'w').write('x')\ndef replay_model():\n    pass\n")
    for entry in (f"{evil}:replay_model", "../" * 12 + f"{str(evil).lstrip('/')}:replay_model", "antigravity:fly"):
        a = _with_entry(records, tmp_path / entry.replace("/", "_")[:40], entry)
        with pytest.raises(UsageError) as err:
            replay(a, records / "b-mid", cwd=str(HERE), devices=["cpu"])
        assert str(err.value) == (f"replay: record A's entry {entry} is not a file inside {HERE} (a record is data: it "
                                  "must not choose the code replay runs); run replay from the project's folder "
                                  f"(--project DIR), or give --entry {entry} to run it anyway")
    assert not marker.exists()


def test_the_entry_from_the_record_is_shown_before_it_is_run(records, capsys):
    replay(records / "a-mid", records / "b-mid", cwd=str(HERE), devices=["cpu"])
    assert capsys.readouterr().err == (f"replay: building the model with record A's entry entries.py:replay_model "
                                       f"({HERE / 'entries.py'})\n")


def test_the_entrys_own_error_is_the_entrys_exit_2(records, tmp_path, capsys):
    from mpsready.cli import main

    (tmp_path / "broken.py").write_text("raise RuntimeError('no data folder')\n")
    a = _with_entry(records, tmp_path, "broken.py:replay_model")
    rc = main(["replay", str(a), str(records / "b-mid"), "--device", "cpu", "--project", str(tmp_path)])
    assert rc == 2
    assert capsys.readouterr().err.endswith(
        "mpsready replay: error: replay: the entry broken.py:replay_model raised RuntimeError: no data folder\n")
