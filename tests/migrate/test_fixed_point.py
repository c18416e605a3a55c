"""Issue 35: one run reaches the fixed point, threads the device it can see, and judges each notebook alone.

- A project whose selection migrate migrates and whose layer cannot see it: the first run migrated the selection
  and left the layer's ``.cuda()`` manual; a second run then saw no API104 finding and rewrote that call with the
  helper's independent choice (the mixing the first run refused). Now the migrated selection still counts as the
  project's own (:mod:`mpsready.migrate.selections`) and one run plans until a round changes nothing.
- The device that is visible: the module's own parameters, a neighbour operand, a tensor parameter.
- Notebooks: one notebook's ``device = ...`` never blocks the fix in another.
"""

import json
import shutil
from pathlib import Path

import pytest

from mpsready.migrate.apply import apply_plan
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.selections import for_file, mps_selections
from mpsready.migrate.verify import verify_plan
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)
HERE = Path(__file__).parent / "projects"

TRAIN = '''import torch
from model import Net

device = torch.device("cuda" if torch.cuda.is_available() and not NO_CUDA else "cpu")
net = Net().to(device)
'''
# a selection a flag can force to the CPU: an independent choice elsewhere could disagree with it (a plain
# `"cuda" if torch.cuda.is_available() else "cpu"` chooses as the helper does and blocks nothing)
MODEL = '''import torch


def make_noise():
    return torch.randn(3).cuda()
'''


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "train.py").write_text(TRAIN)
    (root / "model.py").write_text(MODEL)
    (root / "requirements.txt").write_text("torch>=2.3\n")
    return root


def test_a_second_run_never_makes_the_move_the_first_refused(tmp_path):
    root = _project(tmp_path)
    plan = migrate_path(root, config=CONFIG)
    assert [fp.path for fp in plan.files] == ["train.py"]
    assert [(m.code, m.path, m.line) for m in plan.manual] == [("API101", "model.py", 5)]
    assert "the project selects its device itself (train.py:4)" in plan.manual[0].reason
    assert plan.rounds == 2
    assert apply_plan(plan).written == ["train.py"]
    again = migrate_path(root, config=CONFIG)
    assert again.files == []  # before: model.py rewritten to `.to(_mpsready_device())`
    assert [(m.code, m.path, m.line) for m in again.manual] == [("API101", "model.py", 5)]
    assert "train.py:4" in again.manual[0].reason  # the migrated selection, now considering MPS
    assert "_mpsready_device" not in (root / "model.py").read_text()


def test_a_later_round_makes_the_edit_the_first_could_not_see(tmp_path):
    """The first round adds ``import torch``; only then does the scan report ``torch.cuda.synchronize()``, which
    the second round guards: one run, and a second run changes nothing."""
    (tmp_path / "net.py").write_text("import os\n\n\ndef f(x):\n    return x.cuda()\n\n\ntorch.cuda.synchronize()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert plan.rounds == 3
    assert [(e.code, e.line) for e in plan.files[0].edits] == [("API101", 5), ("API102", 8)]
    apply_plan(plan)
    assert migrate_path(tmp_path, config=CONFIG).files == []


def test_the_visible_device_is_threaded(tmp_path):
    root = tmp_path / "threaded_devices"
    shutil.copytree(HERE / "threaded_devices", root)
    plan = migrate_path(root, config=CONFIG)
    model = next(fp for fp in plan.files if fp.path == "model.py")
    assert [(e.line, e.what) for e in model.edits] == [
        (12, ".cuda() -> .to(next(self.parameters()).device)"),  # the module's own parameters
        (19, ".cuda() -> .to(h.device)"),  # the neighbour operand
        (23, ".cuda() -> .to(y.device)"),  # a tensor parameter of a plain function, for a tensor it makes
    ]
    assert plan.manual == []


def test_the_threaded_project_runs_on_one_device_on_the_emulated_mac(tmp_path):
    """Every tensor of a step on one device: an MPS kernel given a CPU operand fails the emulated run
    (predicted, not observed on a Mac)."""
    root = tmp_path / "threaded_devices"
    shutil.copytree(HERE / "threaded_devices", root)
    plan = migrate_path(root, config=CONFIG)
    result = verify_plan(plan, ["python", "train.py"], releases=["2.13"], max_steps=2, time_limit=120)
    assert result.original.exit_code == 1  # the original's bare .cuda() does not run on this CPU
    assert (result.migrated.exit_code, result.migrated.steps) == (0, 2)
    assert [(r.torch, r.outcome, r.mps_used, r.failure) for r in result.mac] == [("2.13.0", "stopped", True, None)]


def test_what_stays_manual_says_which_device_source_was_missing(tmp_path):
    root = _project(tmp_path)
    (root / "model.py").write_text("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n"
                                   "    def __init__(self):\n        super().__init__()\n"
                                   "        self.scale = torch.ones(3).cuda()\n")
    plan = migrate_path(root, config=CONFIG)
    assert [(m.path, m.line) for m in plan.manual] == [("model.py", 8)]
    assert ("a tensor made in a module's __init__ and kept as a plain attribute is not moved by the module's "
            ".to(device): register it with self.register_buffer(...) without .cuda()") in plan.manual[0].reason


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_each_notebook_is_its_own_program(tmp_path):
    (tmp_path / "a.ipynb").write_text(_notebook("import torch\n",
                                                'device = "cuda" if torch.cuda.is_available() else "cpu"\n'))
    (tmp_path / "b.ipynb").write_text(_notebook("import torch\n", "x = torch.ones(2).cuda()\n"))
    plan = migrate_path(tmp_path, config=CONFIG)
    b = next(fp for fp in plan.files if fp.path == "b.ipynb")
    assert [(e.cell, e.line, e.what) for e in b.edits] == [(2, 1, ".cuda() -> .to(_mpsready_device())")]
    assert plan.manual == []  # before: "the project selects its device itself (a.ipynb:...)"
    assert apply_plan(plan).written == ["a.ipynb", "b.ipynb"]
    assert migrate_path(tmp_path, config=CONFIG).files == []


def test_selections_found_in_code_and_followed_per_program():
    assert mps_selections("t.py", b'import torch\nd = "cuda" if torch.cuda.is_available() and not o else "mps" if '
                                  b'torch.backends.mps.is_available() and not o else "cpu"\n') == ["t.py:2"]
    # the plain form chooses as the helper does, in both forms
    assert mps_selections("t.py", b'import torch\nd = "cuda" if torch.cuda.is_available() else "mps" if '
                                  b'torch.backends.mps.is_available() else "cpu"\n') == []
    assert mps_selections("t.py", b'import torch\nif torch.cuda.is_available():\n    d = torch.device("cuda")\n'
                                  b'    go(x)\nelif torch.backends.mps.is_available():\n    d = torch.device("mps")\n'
                                  b'else:\n    d = torch.device("cpu")\n') == []
    # a test of MPS that selects no device (migrate's own guard of a CUDA call) is no selection
    assert mps_selections("t.py", b"import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n"
                                  b"elif torch.backends.mps.is_available():\n    torch.mps.synchronize()\n"
                                  b"m = torch.mps.current_allocated_memory() if torch.backends.mps.is_available() "
                                  b"else 0\n") == []
    helper = (b"def _mpsready_device(index=None):\n    if torch.backends.mps.is_available():\n"
              b"        return torch.device('mps')\n")
    assert mps_selections("h.py", helper) == []  # the helper's choices all agree: not a selection of the project
    nb = _notebook("%matplotlib inline\nimport torch\n", "if torch.backends.mps.is_available():\n    d = 'mps'\n")
    assert mps_selections("n.ipynb", nb.encode()) == ["n.ipynb:cell 2:line 1"]
    places = ("t.py:2", "n.ipynb:cell 2:line 1", "m.ipynb:cell 1:line 3")
    assert for_file("x.py", places) == ("t.py:2",)
    assert for_file("n.ipynb", places) == ("n.ipynb:cell 2:line 1",)
    assert for_file("o.ipynb", places) == ()


@pytest.mark.parametrize("rounds", [1, 2])
def test_the_rounds_are_bounded(tmp_path, monkeypatch, rounds):
    import mpsready.migrate.engine as engine

    monkeypatch.setattr(engine, "MAX_ROUNDS", rounds)
    (tmp_path / "net.py").write_text("import os\n\n\ndef f(x):\n    return x.cuda()\n\n\ntorch.cuda.synchronize()\n")
    assert migrate_path(tmp_path, config=CONFIG).rounds == rounds


ELSE_SELECTION = '''import argparse

import torch

args = argparse.ArgumentParser().parse_args()
if args.cpu:
    device = torch.device("cpu")
else:
    device = torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() else torch.device("cpu")
torch.manual_seed(0)
torch.cuda.manual_seed(0)
torch.cuda.manual_seed_all(0)
'''


def test_a_selection_built_with_a_plus_inside_an_else_is_migrated_and_seeds_are_left_alone(tmp_path):
    (tmp_path / "train.py").write_text(ELSE_SELECTION)
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [(e.code, e.line) for e in plan.files[0].edits] == [("API104", 9)]
    assert ('    device = torch.device("cuda:" + str(args.device)) if torch.cuda.is_available() else '
            'torch.device("mps") if torch.backends.mps.is_available() else torch.device("cpu")\n') in plan.files[0].after
    # harmless on a Mac (torch.manual_seed seeds MPS; torch.cuda.manual_seed is ignored without CUDA): no if/elif
    assert "torch.mps.manual_seed" not in plan.files[0].after
    assert [(m.code, m.line) for m in plan.kept] == [("API102", 11), ("API102", 12)]
    assert plan.manual == []


def _cells(*cells: tuple[str, str]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {"tags": [f"t{i}"]}, "source": src.splitlines(True),
                                  **({"execution_count": i, "outputs": [{"output_type": "stream", "name": "stdout",
                                                                         "text": [f"out {i}\n"]}]}
                                     if kind == "code" else {})}
                                 for i, (kind, src) in enumerate(cells, 1)],
                       "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


TEACHING = _cells(
    ("code", "import torch\nimport torch.nn as nn\nmodel = nn.Linear(2, 2)\n"),
    ("code", "# check if CUDA is available\ntrain_on_gpu = torch.cuda.is_available()\nif not train_on_gpu:\n"
             "    print('CPU')\n"),
    ("markdown", "Move the model"),
    ("code", "%matplotlib inline\nif train_on_gpu:\n    model.cuda()\nx = torch.ones(2)\nif(train_on_gpu):\n"
             "    x = x.cuda()"),
    ("code", "print(model(x)"),  # does not parse: left to the per-cell pass, which lists it
)


def test_the_teaching_idiom_is_migrated_across_cells(tmp_path):
    (tmp_path / "lesson.ipynb").write_text(TEACHING)
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [(e.code, e.cell, e.line) for e in plan.files[0].edits] == [  # a guard, then its move (two views)
        ("API104", 2, 2), ("API104", 4, 2), ("API101", 4, 3), ("API101", 4, 3), ("API104", 4, 5), ("API101", 4, 6),
        ("API101", 4, 6)]
    assert [(m.code, m.line, m.reason[:41]) for m in plan.manual] == [
        ("INP", None, "cell 5 left as it is: lesson.ipynb cell 5")]
    apply_plan(plan)
    doc = json.loads((tmp_path / "lesson.ipynb").read_text())
    src = ["".join(c["source"]) for c in doc["cells"]]
    assert src[1] == ("# check if CUDA is available\ntrain_on_gpu = torch.cuda.is_available()\n"
                      'device = torch.device("cuda" if train_on_gpu else "mps" if torch.backends.mps.is_available() '
                      'else "cpu")\nif not train_on_gpu:\n    print(\'CPU\')\n')
    assert src[3] == ("%matplotlib inline\nif device.type != 'cpu':\n    model.to(device)\nx = torch.ones(2)\n"
                      "if(device.type != 'cpu'):\n    x = x.to(device)")  # the author's parentheses kept
    assert src[4] == "print(model(x)"
    # outputs, execution counts and metadata as they were
    assert [c.get("outputs") for c in doc["cells"]] == [c.get("outputs") for c in json.loads(TEACHING)["cells"]]
    assert [c["metadata"] for c in doc["cells"]] == [{"tags": [f"t{i}"]} for i in range(1, 6)]
    assert migrate_path(tmp_path, config=CONFIG).files == []


def test_notebook_locations_and_the_cell_diff_for_review(tmp_path, capsys):
    from mpsready.cli import main

    (tmp_path / "a.ipynb").write_text(_cells(("code", "import torch\n"), ("code", "x = torch.ones(2)\ny = x.cuda()\n"),
                                             ("code", 'device = "cuda" if torch.cuda.is_available() and not cpu else "cpu"\n'),
                                             ("code", "def f():\n    return torch.zeros(2).cuda()\n")))
    assert main(["migrate", str(tmp_path), "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert '"source"' in captured.out  # stdout: the JSON diff git apply reads
    assert ("--- a/a.ipynb:cell 3\n+++ b/a.ipynb:cell 3\n@@ -1 +1 @@\n"
            '-device = "cuda" if torch.cuda.is_available() and not cpu else "cpu"\n'
            '+device = "cuda" if torch.cuda.is_available() and not cpu else "mps" if torch.backends.mps.is_available() '
            'and not cpu else "cpu"\n') in captured.err
    assert "  manual API101 a.ipynb:cell 2:line 2: the project selects its device itself (a.ipynb:cell 3:line 1)" \
        in captured.err
    # cell 4 runs after cell 3: its function sees the notebook's `device` (the cells are one program)
    assert "+    return torch.zeros(2).to(device)\n" in captured.err
    assert "cell 4:line" not in captured.err.split("mpsready migrate:")[1]


PLAIN = {"train.py": 'import torch\nfrom model import Net\n\ndevice = torch.device("cuda" if torch.cuda.is_available() '
                     'else "cpu")\nnet = Net().to(device)\ntorch.cuda.synchronize()\n',
         "eval.py": "import torch\nif torch.cuda.is_available():\n    device = 'cuda'\n    print('gpu')\n"
                    "else:\n    device = 'cpu'\n",
         "model.py": MODEL}


def test_a_plain_selection_chooses_as_the_helper_and_blocks_nothing(tmp_path):
    """mar, co-tracker: `"cuda" if torch.cuda.is_available() else "cpu"` (or the if/else statement) is migrated to
    the helper's own choice, so code that cannot see it takes the helper (before: manual, 5 of 26 moves in mar,
    8 of 16 in co-tracker); and migrate's own `elif torch.backends.mps.is_available(): torch.mps.synchronize()`
    no longer counts as a selection in the second round."""
    for name, text in PLAIN.items():
        (tmp_path / name).write_text(text)
    plan = migrate_path(tmp_path, config=CONFIG)
    model = next(fp for fp in plan.files if fp.path == "model.py")
    assert [(e.code, e.line, e.what) for e in model.edits] == [
        ("API101", 5, ".cuda() -> .to(_mpsready_device())")]
    assert plan.manual == []
    apply_plan(plan)
    assert migrate_path(tmp_path, config=CONFIG).files == []


def test_round_two_carries_round_one_s_records_instead_of_planning_again(tmp_path, monkeypatch):
    """Issue 35 item 4: a file round 1 changed is planned again in round 2 only when the scan of the result reports
    something round 1 did not leave there (the rounds cost 1.5x one round on 4DGaussians, 1.3x after)."""
    import mpsready.migrate.engine as engine

    planned: list[list[str]] = []
    real = engine._outcomes
    monkeypatch.setattr(engine, "_outcomes", lambda todo, jobs: (planned.append([j.rel for j in todo]),
                                                                 real(todo, jobs))[1])
    # round 1 guards empty_cache (an info finding it leaves as it is) and keeps get_device_name manual
    (tmp_path / "t.py").write_text("import torch\nx = torch.ones(2).cuda()\ntorch.cuda.empty_cache()\n"
                                   "print(torch.cuda.get_device_name(0))\n")
    (tmp_path / "u.py").write_text("import os\n\n\ndef f(x):\n    return x.cuda()\n\n\ntorch.cuda.synchronize()\n")
    plan = migrate_path(tmp_path, config=CONFIG)
    assert planned[1] == ["u.py"]  # its new `import torch` makes the scan report synchronize(): planned again
    assert [(m.code, m.path, m.line) for m in plan.manual] == [("API102", "t.py", 4)]
    assert plan.rounds == 3
    apply_plan(plan)
    assert migrate_path(tmp_path, config=CONFIG).files == []


def test_a_plain_selection_a_flag_can_override_still_blocks(tmp_path):
    # `if args.cpu: device = "cpu"` after the plain selection can force the CPU: the helper could disagree
    files = {"train.py": 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'
                         'if CPU:\n    device = "cpu"\n',
             "model.py": MODEL}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    plan = migrate_path(tmp_path, config=CONFIG)
    assert [(m.code, m.path, m.line) for m in plan.manual] == [("API101", "model.py", 5)]
    assert "the project selects its device itself (train.py:2)" in plan.manual[0].reason
    apply_plan(plan)
    assert migrate_path(tmp_path, config=CONFIG).files == []


@pytest.mark.parametrize("name", sorted(p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("_")))
def test_carrying_round_one_s_records_gives_the_plan_planning_again_gives(name, tmp_path, monkeypatch):
    import mpsready.migrate.engine as engine

    root = tmp_path / name
    shutil.copytree(HERE / name, root)
    carried = migrate_path(root, config=CONFIG)
    monkeypatch.setattr(engine, "_settled", lambda state, job: False)
    planned = migrate_path(root, config=CONFIG)
    assert (carried.manual, carried.kept, carried.fixed) == (planned.manual, planned.kept, planned.fixed)
    assert [(f.path, f.after, f.edits) for f in carried.files] == [(f.path, f.after, f.edits) for f in planned.files]
