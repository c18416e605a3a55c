"""``mpsready run -- NB.ipynb`` (issue 35 item 4): the code cells run in order on the emulated Mac, in one namespace,
from the notebook's folder; a failure is located as ``nb.ipynb:cell N:line M``; IPython syntax is refused before
anything runs (exit 2), except ``%matplotlib``, set aside with a note."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError  # noqa: E402
from mpsready.run.command import parse_program  # noqa: E402
from mpsready.run.notebook import read_cells  # noqa: E402


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": text.splitlines(keepends=True)} if kind == "code" else
                                 {"cell_type": kind, "metadata": {}, "source": text} for kind, text in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _mpsready(*args, cwd):
    return subprocess.run([sys.executable, "-m", "mpsready", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


PASSING = _notebook(
    ("code", "%matplotlib inline\nimport torch\n"),
    ("markdown", "# Train\n"),
    ("code", 'device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"\n'
             "model = torch.nn.Linear(3, 2).to(device)\n"),
    ("code", "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "for _ in range(2):\n"
             "    loss = model(torch.randn(4, 3, device=device)).sum()\n"
             "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
             "print(open('data.txt').read().strip(), loss.device)\n"),
)

FAILING = _notebook(
    ("code", "import torch\n"),
    ("code", "x = torch.ones(2, device='mps')\n"),
    ("code", "y = x * 2\n\nz = torch.zeros(2, dtype=torch.float64).to('mps')\n"),
    ("code", "print('never reached')\n"),
)


def test_a_notebook_runs_cell_by_cell_on_the_emulated_mac(tmp_path):
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "train.ipynb").write_text(PASSING)
    (tmp_path / "nbs" / "data.txt").write_text("read from the notebook's folder\n")
    p = _mpsready("run", "--torch", "2.13", "--format", "json", "-o", "out.json", "--", "nbs/train.ipynb",
                  cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "read from the notebook's folder mps:0\n"
    assert "mpsready run: train.ipynb:cell 1:line 1: %matplotlib set aside" in p.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert (doc["outcome"], doc["first_failure"], doc["steps"]) == ("completed", None, 2)
    assert doc["program"] == {"kind": "notebook", "target": str(tmp_path / "nbs" / "train.ipynb"),
                              "argv": ["nbs/train.ipynb"]}


def test_a_failure_in_a_notebook_is_located_by_cell_and_line(tmp_path):
    (tmp_path / "fail.ipynb").write_text(FAILING)
    p = _mpsready("run", "--torch", "2.13", "--format", "json", "-o", "out.json", "--", "fail.ipynb", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert "never reached" not in p.stdout
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["outcome"] == "failed"
    assert doc["first_failure"]["location"] == {"path": "fail.ipynb:cell 3", "line": 3, "function": "<module>"}
    assert doc["first_failure"]["exception"] == "TypeError"
    # the traceback shows the cell's own line
    assert 'File "' + str(tmp_path / "fail.ipynb") + ":cell 3\", line 3, in <module>\n    z = torch.zeros(2, " \
        "dtype=torch.float64).to('mps')\n" in p.stderr
    p = _mpsready("run", "--torch", "2.13", "--", "fail.ipynb", cwd=tmp_path)
    assert "first failure on the Mac: fail.ipynb:cell 3:line 3" in p.stdout


def test_ipython_syntax_is_refused_with_its_place(tmp_path):
    nb = tmp_path / "magic.ipynb"
    nb.write_text(_notebook(("code", "import torch\n"), ("code", "!pip install timm\nx = 1\n%time y = 2\n"),
                            ("code", "%%bash\necho hi\n")))
    with pytest.raises(UsageError) as err:
        parse_program(["magic.ipynb"], cwd=str(tmp_path))
    assert str(err.value) == (
        "magic.ipynb:cell 2:line 1: !pip install timm (and 2 more): IPython syntax (a magic, a shell escape or help) "
        "that a plain Python interpreter cannot run; mpsready run executes a notebook's code cells as Python. Remove "
        "those lines (run shell steps such as pip installs beforehand), then run again")
    p = _mpsready("run", "--", "magic.ipynb", cwd=tmp_path)
    assert p.returncode == 2
    assert "magic.ipynb:cell 2:line 1: !pip install timm (and 2 more)" in p.stderr
    (tmp_path / "bad.ipynb").write_text("{not json")
    with pytest.raises(UsageError, match=r"^bad.ipynb is not a notebook mpsready can read: not JSON"):
        parse_program(["bad.ipynb"], cwd=str(tmp_path))


def test_cells_read_with_the_program_s_own_syntax_error_kept_for_the_run(tmp_path):
    nb = tmp_path / "s.ipynb"
    nb.write_text(_notebook(("code", "%matplotlib inline\nimport torch\n"), ("code", "x = (1,\n")))
    cells = read_cells(str(nb))
    assert [(c.index, c.source, c.set_aside) for c in cells] == [(1, "\nimport torch\n", (1,)), (2, "x = (1,\n", ())]


def test_help_on_a_dotted_name_is_refused_as_ipython_syntax(tmp_path):
    # pytorch-Deep-Learning's tensor tutorial: torch.nn.Module?? and torch.*Tensor? were kept and then failed as the
    # program's own SyntaxError at run time
    nb = tmp_path / "help.ipynb"
    nb.write_text(_notebook(("code", "import torch\n"), ("code", "torch.nn.Module??\n"), ("code", "torch.*Tensor?\n")))
    with pytest.raises(UsageError) as err:
        parse_program(["help.ipynb"], cwd=str(tmp_path))
    assert str(err.value).startswith("help.ipynb:cell 2:line 1: torch.nn.Module?? (and 1 more): IPython syntax")
