"""``migrate --verify -- nb.ipynb``: the notebook's cells run in order in plain children, as ``mpsready run`` runs
them, and the CPU numbers of the original and the migrated notebook are compared the same way as a script's."""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.errors import UsageError  # noqa: E402
from mpsready.migrate.engine import migrate_path  # noqa: E402
from mpsready.migrate.verify import traceback_line, verify_plan  # noqa: E402
from mpsready.migrate.verify_notebook import check_notebook, cpu_command, notebook_of, selection_line  # noqa: E402
from mpsready.scan import ScanConfig  # noqa: E402

CONFIG = ScanConfig(cache_dir=None)

# the teaching idiom (train_on_gpu), three cells, a %matplotlib line set aside as mpsready run sets it aside
TEACHING = (
    "import torch\nimport torch.nn as nn\n%matplotlib inline\ntrain_on_gpu = torch.cuda.is_available()\n",
    "model = nn.Linear(4, 2)\nif train_on_gpu:\n    model.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
    "for step in range(5):\n    x = torch.randn(8, 4)\n    if train_on_gpu:\n        x = x.cuda()\n"
    "    loss = (model(x) ** 2).mean()\n    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    "    print(step, round(loss.item(), 4))\n",
)


def _write(folder: Path, cells, name: str = "train.ipynb") -> Path:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": c.splitlines(True)} for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1) + "\n")
    return path


def test_a_migrated_teaching_notebook_verifies(tmp_path):
    # in a subfolder, importing a module beside it: the CPU children find it as mpsready run does (the notebook's
    # folder first on sys.path; without that, ModuleNotFoundError on the CPU and a run on the emulated Mac)
    _write(tmp_path / "nbs", ("from helper import SIZE\n" + TEACHING[0], *TEACHING[1:]))
    (tmp_path / "nbs" / "helper.py").write_text("SIZE = 4\n")
    result = verify_plan(migrate_path(tmp_path, config=CONFIG), ["nbs/train.ipynb"], releases=["2.13"], max_steps=2,
                         time_limit=120)
    assert (result.original.exit_code, result.original.steps, result.migrated.exit_code, result.migrated.steps) == \
        (0, 2, 0, 2)
    assert result.original.sha256 == result.migrated.sha256 is not None
    assert [(r.torch, r.outcome, r.mps_used) for r in result.mac] == [("2.13.0", "stopped", True)]
    assert (result.same_cpu_numbers, result.verified, result.reasons()) == (True, True, [])


def test_an_original_that_fails_on_the_cpu_names_the_cell_and_line(tmp_path):
    # python nb.ipynb: the same as nb.ipynb
    _write(tmp_path / "nbs", ("import torch\n", "x = torch.ones(2)\ny = x.cuda()\nprint(y.sum().item())\n"))
    result = verify_plan(migrate_path(tmp_path, config=CONFIG), ["python", "train.ipynb"], releases=[],
                         max_steps=2, time_limit=120, cwd="nbs")
    assert result.original.exit_code == 1 and result.migrated.exit_code == 0
    assert result.migrated.stdout == "2.0\n"
    assert result.reasons()[0] == {
        "check": "same CPU numbers", "torch": None, "line": "train.ipynb:cell 2:line 2",
        "reason": "the original does not run on this CPU (exit 1): nothing to compare; the original ends with: "
                  "AssertionError: Torch not compiled with CUDA enabled"}


def test_the_cpu_child_runs_the_cells_and_other_commands_are_kept():
    assert notebook_of(["nb.ipynb", "--x"]) == ("nb.ipynb", ["--x"])
    assert notebook_of(["python3", "a/nb.ipynb"]) == ("a/nb.ipynb", [])
    assert notebook_of(["python", "train.py"]) is None
    assert cpu_command(["python", "nb.ipynb", "--x", "1"]) == [
        sys.executable, "-m", "mpsready.migrate.verify_notebook", "nb.ipynb", "--x", "1"]
    assert cpu_command(["python", "train.py"]) == ["python", "train.py"]


def test_ipython_syntax_and_a_missing_notebook_are_usage_errors_before_any_run(tmp_path):
    _write(tmp_path, ("!pip install foo\nimport torch\n",))
    with pytest.raises(UsageError, match=r"^train.ipynb:cell 1:line 1: !pip install foo: IPython syntax"):
        check_notebook(tmp_path, ["train.ipynb"])
    with pytest.raises(UsageError, match=r"^--verify: notebook not found: other.ipynb \(relative to "):
        check_notebook(tmp_path, ["other.ipynb"])
    check_notebook(tmp_path, ["python", "train.py"])  # not a notebook: nothing to check here


def test_a_cell_frame_of_a_traceback_is_named_by_cell_and_line(tmp_path):
    text = (f'Traceback (most recent call last):\n  File "{tmp_path}/nbs/train.ipynb:cell 4", line 7, in <module>\n'
            "    y = x.cuda()\nAssertionError: Torch not compiled with CUDA enabled\n")
    assert traceback_line(text, str(tmp_path)) == "nbs/train.ipynb:cell 4:line 7"


def test_the_no_mps_line_of_a_notebook_is_its_selection_cell(tmp_path):
    _write(tmp_path, ("import torch\n", "flag = True\ndevice = torch.device('cuda' if torch.cuda.is_available() "
                      "else 'cpu')\n"))
    assert selection_line(tmp_path, Path("train.ipynb")) == "train.ipynb:cell 2:line 2"


def test_the_cli_refuses_a_notebook_with_a_shell_escape_with_exit_2(tmp_path):
    import subprocess

    _write(tmp_path, ("!pip install foo\nimport torch\nx = torch.ones(2).cuda()\n",))
    p = subprocess.run([sys.executable, "-m", "mpsready", "migrate", str(tmp_path), "--no-cache", "-q", "--verify",
                        "--", "train.ipynb"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "train.ipynb:cell 1:line 1: !pip install foo: IPython syntax" in p.stderr
    assert p.stdout == ""
