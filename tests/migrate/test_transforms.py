"""Every transform against its fixture: the exact expected output, look-alikes untouched, a second run a no-op.

Each ``fixtures/NAME`` holds the positives and the look-alike negatives of one transform;
``expected/NAME`` is the file after ``mpsready migrate --apply`` (reviewed by hand). The negatives
sit in the fixture unchanged, so the exact comparison also proves they were left alone.
"""

import ast
import json
import shutil
from pathlib import Path

import pytest

from mpsready.migrate.apply import apply_plan
from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

HERE = Path(__file__).parent
FIXTURES = sorted(p.name for p in (HERE / "fixtures").iterdir() if p.suffix in (".py", ".ipynb"))
CONFIG = ScanConfig(cache_dir=None)


def _copy(name: str, tmp_path: Path) -> Path:
    src = HERE / "fixtures" / name
    dst = tmp_path / name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)
    return dst


def _migrate(target: Path):
    plan = migrate_path(target, config=CONFIG)
    result = apply_plan(plan)
    assert result.refused == []
    return plan


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_gives_exactly_the_expected_output(name, tmp_path):
    target = _copy(name, tmp_path)
    _migrate(target)
    assert target.read_text(encoding="utf-8") == (HERE / "expected" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", FIXTURES)
def test_second_run_is_a_no_op(name, tmp_path):
    target = _copy(name, tmp_path)
    _migrate(target)
    once = target.read_text(encoding="utf-8")
    plan = migrate_path(target, config=CONFIG)
    assert (plan.edits, plan.files) == (0, [])
    assert target.read_text(encoding="utf-8") == once


@pytest.mark.parametrize("name", [n for n in FIXTURES if n.endswith(".py")])
def test_migrated_fixture_parses(name):
    ast.parse((HERE / "expected" / name).read_text(encoding="utf-8"))


def test_accelerator_floor_uses_torch_accelerator(tmp_path):
    target = _copy("accelerator_floor", tmp_path)
    plan = _migrate(target)
    assert plan.torch_floor == (2, 6)
    assert (target / "train.py").read_text() == (HERE / "expected" / "accelerator_floor" / "train.py").read_text()
    assert [(e.code, e.line) for f in plan.files for e in f.edits] == [("API104", 3), ("API104", 4), ("API101", 5)]


EDITS = {
    "api101_dot_cuda.py": [("API101", 6), ("API101", 7), ("API101", 12), ("API101", 13), ("API101", 14)],
    # line 7, torch.cuda.manual_seed_all: harmless on a Mac and left alone (no torch.mps twin: issue 35)
    "api102_torch_cuda.py": [("API102", 9), ("API102", 10), ("API102", 11), ("API102", 12),
                             ("API119", 29), ("API119", 30)],
    "api103_device_literal.py": [("API103", 8), ("API103", 9), ("API103", 13), ("API103", 14), ("API103", 15),
                                 ("API103", 16), ("API103", 17), ("API103", 22), ("API103", 23), ("API103", 37),
                                 ("API103", 38), ("API103", 39), ("API103", 40), ("API103", 46), ("API103", 46)],
    "api119_default_device.py": [("API119", 3), ("API119", 7), ("API119", 12)],
    "api104_selection.py": [("API104", 3), ("API104", 4), ("API104", 5), ("API104", 9)],
    "api104_considers_mps.py": [],
    "api107_nccl.py": [("API107", 8), ("API107", 9)],
    "api108_amp.py": [("API108", 2), ("API108", 6), ("API108", 7), ("API108", 9), ("API108", 15)],
    "api113_pin_memory.py": [("API113", 6)],
    "api115_device_string.py": [("API103", 3), ("API115", 4), ("API115", 5), ("API115", 6)],
    "ext108_cpu_keyed_fallback.py": [("EXT108", 10), ("EXT108", 16), ("EXT108", 38), ("EXT108", 46),
                                     ("EXT108", 52)],
    "dty102_numpy_float64.py": [("DTY102", 7)],
    "ext102_guarded_import.py": [("EXT102", 3), ("EXT102", 4), ("DEP107", 6)],
    "notebook.ipynb": [("API101", 1), ("API101", 2), ("API102", 2)],
}
MANUAL = {
    "api102_torch_cuda.py": [("API102", 17)],
    "api107_nccl.py": [("API107", 10)],
    "api119_default_device.py": [("API119", 13)],
    # no PyTorch floor: each rewrite stays off on MPS, as the original was, and says how to turn it on
    "api108_amp.py": [("API108", 6), ("API108", 7), ("API108", 9), ("API108", 15), ("API109", 16), ("API108", 17),
                      ("DTY103", 17)],
    "dty102_numpy_float64.py": [("DTY102", 8)],
}


@pytest.mark.parametrize("name", FIXTURES)
def test_edits_and_manual_leftovers_are_listed_by_rule_and_line(name, tmp_path):
    plan = migrate_path(_copy(name, tmp_path), config=CONFIG)
    edits = sorted(((e.code, e.line) for f in plan.files for e in f.edits), key=lambda x: (x[1], x[0]))
    assert edits == sorted(EDITS[name], key=lambda x: (x[1], x[0]))
    assert [(m.code, m.line) for m in plan.manual] == MANUAL.get(name, [])
    assert all(m.reason for m in plan.manual)


def test_manual_reasons_say_why():
    plan = migrate_path(HERE / "fixtures" / "api107_nccl.py", config=CONFIG)
    assert [m.reason for m in plan.manual] == ["the backend is named through a variable: choose 'gloo' when CUDA is absent"]
    plan = migrate_path(HERE / "fixtures" / "dty102_numpy_float64.py", config=CONFIG)
    assert plan.manual[0].reason.startswith("float64 reaches the device with no float32 cast after it")
    plan = migrate_path(HERE / "fixtures" / "api119_default_device.py", config=CONFIG)
    assert [m.reason for m in plan.manual] == ["torch.cuda.HalfTensor changes the default dtype too: use "
                                               "torch.set_default_dtype(...) and torch.set_default_device(...)"]
    assert [(k.code, k.line, k.reason) for k in plan.kept] == [
        ("API119", 20, "already behind a CUDA check: skipped on a Mac")]


def test_plan_lists_the_findings_its_edits_fix(tmp_path):
    """One edit can fix two findings: the API119 call and the API102 finding on its torch.cuda.FloatTensor argument."""
    plan = migrate_path(_copy("api102_torch_cuda.py", tmp_path), config=CONFIG)
    assert [(r.code, r.line) for r in plan.fixed] == [("API102", 9), ("API102", 10), ("API102", 12), ("API119", 29),
                                                     ("API102", 30), ("API119", 30)]


def test_notebook_keeps_outputs_metadata_and_magics(tmp_path):
    target = _copy("notebook.ipynb", tmp_path)
    before = json.loads(target.read_text())
    _migrate(target)
    after = json.loads(target.read_text())
    assert [c.get("outputs") for c in after["cells"]] == [c.get("outputs") for c in before["cells"]]
    assert [c["metadata"] for c in after["cells"]] == [c["metadata"] for c in before["cells"]]
    assert after["metadata"] == before["metadata"]
    assert after["cells"][0] == before["cells"][0]  # markdown
    assert after["cells"][3] == before["cells"][3]  # a %%bash cell is not Python: untouched
    assert after["cells"][1]["source"][0] == "%matplotlib inline\n"
    assert after["cells"][1]["source"][-1] == "!nvidia-smi\n"
    assert sum("def _mpsready_device" in line for c in after["cells"] for line in c["source"]) == 1


def test_comments_and_formatting_survive(tmp_path):
    target = _copy("api101_dot_cuda.py", tmp_path)
    _migrate(target)
    text = target.read_text()
    assert "    model = model.to(device)  # moves the model\n" in text
    assert "        model.cuda()  # behind a CUDA check: left as it is\n" in text
