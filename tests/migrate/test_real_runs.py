"""Bugs found running migrated research projects on the emulated Mac (issue 35, round 3); each one is a test with a
fixture of our own."""

from mpsready.migrate.engine import migrate_path
from mpsready.scan import ScanConfig

CONFIG = ScanConfig(cache_dir=None)


def _plan(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return migrate_path(tmp_path, config=CONFIG)


def _after(plan, name: str) -> str:
    return next(f.after for f in plan.files if f.path == name)


LAYER = '''import torch
import torch.nn as nn


class SparseAttention(nn.Module):
    def forward(self, input, adj):
        dv = 'cuda' if input.is_cuda else 'cpu'
        ones = torch.ones(size=(input.shape[0], 1), device=dv)
        other = 'cuda' if input.is_cuda else 'cuda:1'
        flag = input.is_cuda and adj.is_cuda
        return ones, other, flag
'''


def test_a_device_named_from_is_cuda_follows_the_tensor(tmp_path):
    # pyGAT layers.py (SpGraphAttentionLayer): dv = 'cuda' if input.is_cuda else 'cpu' made torch.ones(..., device=dv)
    # a CPU tensor beside MPS operands; the emulated Mac failed at the sparse matmul ("Placeholder storage has not
    # been allocated on MPS device!") after migrate had moved everything else to MPS. No scan rule reports it.
    plan = _plan(tmp_path, {"layers.py": LAYER})
    assert _after(plan, "layers.py") == LAYER.replace("dv = 'cuda' if input.is_cuda else 'cpu'", "dv = input.device.type")
    [edit] = [e for f in plan.files for e in f.edits]
    assert (edit.code, edit.line, edit.review) == ("API115", 7, None)
    assert plan.fixed == []  # no scan finding: found by the transform itself
    assert edit.what == "'cuda' if x.is_cuda else 'cpu' -> x.device.type ('cpu' for an MPS tensor before)"


def test_the_is_cuda_rewrite_is_a_fixed_point(tmp_path):
    plan = _plan(tmp_path, {"layers.py": LAYER})
    (tmp_path / "layers.py").write_text(_after(plan, "layers.py"))
    again = migrate_path(tmp_path, config=CONFIG)
    assert (again.edits, again.files) == (0, [])


def test_the_is_cuda_test_beside_autocast_below_the_floor_is_left_with_its_reason(tmp_path):
    # autocast keyed on the value would turn on on MPS: the same rule as the string test (API115) below the floor
    src = ("import torch\n\n\ndef step(x):\n    dv = 'cuda' if x.is_cuda else 'cpu'\n"
           "    with torch.autocast(dv):\n        return x * 2\n")
    plan = _plan(tmp_path, {"t.py": src})
    assert [e.code for f in plan.files for e in f.edits if e.code == "API115"] == []
    [m] = [m for m in plan.manual if m.code == "API115"]
    assert (m.path, m.line) == ("t.py", 5)
    assert m.reason.startswith("'cuda' if ....is_cuda else 'cpu' gives 'cpu' for an MPS tensor; left as it is, to "
                                  "keep the Mac path: .device.type would turn on autocast on MPS, which needs PyTorch 2.5.1")


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n"


def _cells(text: str) -> list[str]:
    import json

    return ["".join(c["source"]) for c in json.loads(text)["cells"]]


def test_a_magic_keeps_its_trailing_spaces(tmp_path):
    # PyTorch-FastCampus (03_CNN_Basics, 3 notebooks): "%matplotlib inline  " came back as "%matplotlib inline" in a
    # cell migrate edited: a change nobody asked for, in the JSON diff and the per-cell review diff
    first = "import torch\nimport matplotlib.pyplot as plt\n%matplotlib inline  \n\nx = torch.ones(2).cuda()\n"
    plan = _plan(tmp_path, {"nb.ipynb": _notebook(first)})
    [cell] = _cells(_after(plan, "nb.ipynb"))
    assert "\n%matplotlib inline  \n" in cell
    assert cell.endswith("x = torch.ones(2).to(_mpsready_device())\n")


def test_eleven_magics_in_a_cell_come_back_each_in_its_place(tmp_path):
    # the placeholder of magic 1 was a prefix of magic 10's: putting magic 1 back wrote it into magic 10's place too
    magics = [f"%env V{i}={i}" for i in range(11)]
    first = "import torch\n" + "\n".join(magics) + "\nx = torch.ones(2).cuda()\n"
    plan = _plan(tmp_path, {"nb.ipynb": _notebook(first)})
    [cell] = _cells(_after(plan, "nb.ipynb"))
    lines = cell.splitlines()
    assert lines[lines.index(magics[0]):][:12] == magics + ["x = torch.ones(2).to(_mpsready_device())"]


def test_ipython_help_lines_are_magics_not_unparsable_cells(tmp_path):
    # pytorch-Deep-Learning 01-tensor_tutorial.ipynb: 'torch.*Tensor?', 'torch.nn.Module?', 'torch.nn.Module??' made
    # four "manual INP ... cell N left as it is: libcst cannot parse it" lines; the cells are IPython help requests
    cells = ("import torch\n", "# help\ntorch.*Tensor?\n", "torch.nn.Module?\n", "torch.nn.Module??\n",
             "x = torch.ones(2).cuda()\n")
    plan = _plan(tmp_path, {"nb.ipynb": _notebook(*cells)})
    assert [(m.code, m.reason) for m in plan.manual] == []
    out = _cells(_after(plan, "nb.ipynb"))
    assert out[1:4] == list(cells[1:4])
    assert out[4] == "x = torch.ones(2).to(_mpsready_device())\n"


def test_a_finding_no_transform_answers_names_its_cell_and_line(tmp_path):
    # pytorch-Deep-Learning: "manual DTY101 01-tensor_tutorial.ipynb:776" named the notebook's JSON line, not
    # "cell 77:line 2" as every other notebook location
    cells = ("import torch\nm = torch.ones(2, 2)\n", "# float64\nm_double = m.double()\n")
    plan = _plan(tmp_path, {"nb.ipynb": _notebook(*cells)})
    assert [(m.code, m.path, m.line, m.reason) for m in plan.manual] == [
        ("DTY101", "nb.ipynb", 2, "cell 2: Use float32 on MPS; keep float64 only for CPU-side computations.")]
    # the JSON entry names the cell as a key, as edits do (h40: only the reason's text named it)
    assert plan.manual[0].to_dict() == {
        "code": "DTY101", "path": "nb.ipynb", "line": 2, "cell": 2,
        "reason": "cell 2: Use float32 on MPS; keep float64 only for CPU-side computations.", "count": 1}


TRAIN = '''import argparse
import torch
from models import Net

parser = argparse.ArgumentParser()
parser.add_argument("--no-cuda", action="store_true")
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()
model = Net()
if args.cuda:
    model.cuda()
'''
MODELS = '''import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x


def make_noise(n):
    return torch.randn(n).cuda()
'''
VIZ = '''import torch
import models

inputs = torch.randn(10, 5).cuda()
model = models.Net().cuda()
print(model(inputs).sum().item())
'''


def test_a_standalone_script_beside_a_flagged_selection_takes_the_helper(tmp_path):
    # pyGAT: visualize_graph.py (no other file imports it, and it imports only models.py) kept three module-level
    # .cuda() for a person because train.py selects with a --no-cuda flag; the selection never runs in its process,
    # so the helper there mixes with nothing. models.py runs in train.py's program too: it still follows train.py.
    plan = _plan(tmp_path, {"train.py": TRAIN, "models.py": MODELS, "viz.py": VIZ})
    viz = _after(plan, "viz.py")
    assert viz.endswith("inputs = torch.randn(10, 5).to(_mpsready_device())\n"
                        "model = models.Net().to(_mpsready_device())\nprint(model(inputs).sum().item())\n")
    assert [(m.code, m.path, m.line) for m in plan.manual] == [("API101", "models.py", 10)]
    assert plan.manual[0].reason.startswith("the project selects its device itself (train.py:8, train.py:9) and this "
                                            "code cannot see that choice")


def test_code_loaded_dynamically_keeps_every_script_following_every_selection(tmp_path):
    # the programs cannot be told when a file loads code the imports do not show (nanoGPT: exec(open(...).read()))
    viz = VIZ.replace("import models\n", "import importlib\nmodels = importlib.import_module('models')\n")
    plan = _plan(tmp_path, {"train.py": TRAIN, "models.py": MODELS, "viz.py": viz})
    assert sorted((m.path, m.line) for m in plan.manual if m.code == "API101") == [
        ("models.py", 10), ("viz.py", 5), ("viz.py", 6)]
