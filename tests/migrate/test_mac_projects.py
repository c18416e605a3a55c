"""Research-style projects migrated and then proved with ``--verify``: the same CPU numbers as the original and,
under the emulated Mac of ``mpsready run`` for PyTorch 2.3 and 2.13, a completed run with tensors on MPS.

Each project is a shape the migration used to leave on the CPU or turn into device mixing:
``no_cuda_flag`` (``args.cuda = not args.no_cuda and torch.cuda.is_available()`` with ``if args.cuda:`` moves),
``layer_selection`` (a multi-statement if/else selection and a layer that moves its mask only ``if x.is_cuda``),
``amp_floor`` (``torch.cuda.amp`` with a PyTorch floor of 2.1, below MPS autocast: ``torch.amp.autocast('mps')``
raises there even when disabled). All emulated outcomes are predictions, not observations of a Mac.
"""

import json
import shutil
from pathlib import Path

import pytest

from mpsready.cli import main
from mpsready.migrate.engine import migrate_path
from mpsready.migrate.verify import render_verify, verify_plan
from mpsready.scan import ScanConfig

HERE = Path(__file__).parent / "projects"
CONFIG = ScanConfig(cache_dir=None)
COMMANDS = {"no_cuda_flag": ["python", "main.py", "--steps", "3"], "layer_selection": ["python", "train.py"],
            "amp_floor": ["python", "train.py"]}
# the lines each migration must write (the rest of the diff is checked by the second-run and re-scan tests)
WRITES = {
    "no_cuda_flag": {"main.py": [
        '    args.device = torch.device("cuda" if args.cuda else "mps" if not args.no_cuda and '
        'torch.backends.mps.is_available() else "cpu")',
        "    if args.device.type != 'cpu':", "        model.to(args.device)",
        "            data, target = data.to(args.device), target.to(args.device)",
        "    if args.cuda:", "        torch.cuda.manual_seed(0)"]},  # the CUDA-only seed stays behind its flag
    "layer_selection": {"train.py": ["elif torch.backends.mps.is_available():", '    device = torch.device("mps")',
                                     "    n_gpu = 0"],
                        "model.py": ["        if x.device.type != 'cpu':", "            mask = mask.to(x.device)"]},
    "amp_floor": {"train.py": ["    with torch.amp.autocast('cuda'):", "scaler = torch.cuda.amp.GradScaler()"]},
}


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(HERE / name, dst)
    return dst


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_migrated_project_is_verified_on_the_cpu_and_the_emulated_mac(name, tmp_path):
    plan = migrate_path(_copy(name, tmp_path), config=CONFIG)
    after = {fp.path: fp.after.splitlines() for fp in plan.files}
    for path, lines in WRITES[name].items():
        assert [line for line in lines if line not in after[path]] == []
    assert "_mpsready_device" not in "".join(fp.after for fp in plan.files)  # no choice of its own anywhere
    result = verify_plan(plan, COMMANDS[name], releases=["2.3", "2.13"], max_steps=2, time_limit=120)
    assert (result.original.exit_code, result.migrated.exit_code) == (0, 0)
    assert result.original.steps == result.migrated.steps == 2
    assert result.original.sha256 == result.migrated.sha256 is not None
    assert result.same_output
    assert [(r.torch, r.outcome, r.mps_used, r.failure) for r in result.mac] == [
        ("2.3.1", "stopped", True, None), ("2.13.0", "stopped", True, None)]
    assert result.verified
    assert render_verify(result).splitlines()[-1] == "verified: yes"


def test_a_plan_that_changes_the_cpu_numbers_is_not_verified(tmp_path):
    # a hand-made plan that changes the learning rate: the parameters differ after the same two steps
    plan = migrate_path(_copy("amp_floor", tmp_path), config=CONFIG)
    fp = plan.files[0]
    fp.after = fp.after.replace("lr=0.1", "lr=0.2")
    result = verify_plan(plan, COMMANDS["amp_floor"], releases=["2.13"], max_steps=2, time_limit=120)
    assert (result.same_cpu_numbers, result.verified) == (False, False)
    assert result.original.sha256 != result.migrated.sha256
    text = render_verify(result)
    assert "  CPU: not the same (parameters differ after the same steps)" in text
    assert text.splitlines()[-1] == "verified: no"


def test_apply_with_verify_writes_nothing_when_the_original_cannot_run_on_the_cpu(tmp_path, capsys):
    # `.cuda()` in a layer: the original stops on this CPU ("Torch not compiled with CUDA enabled"), so the CPU
    # numbers cannot be compared; the migrated layer follows its input (x.device) and runs on the emulated Mac
    (tmp_path / "t.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def forward(self, x):\n"
        "        return x * torch.ones(x.shape[1]).cuda()\n\n\nx = torch.ones(2, 3)\nprint(Scale()(x).sum().item())\n")
    before = (tmp_path / "t.py").read_text()
    code = main(["migrate", str(tmp_path), "--apply", "--verify", "--torch", "2.13", "--format", "json", "--",
                 "python", "t.py"])
    assert code == 1
    assert (tmp_path / "t.py").read_text() == before
    doc = json.loads(capsys.readouterr().out)
    v = doc["verify"]
    assert (v["verified"], v["cpu"]["original"]["exit_code"], v["cpu"]["migrated"]["exit_code"]) == (False, 1, 0)
    assert [(r["outcome"], r["mps_used"]) for r in v["emulated_mac"]] == [("completed", False)]
    assert "applied" not in doc


def test_verify_needs_a_command_and_a_command_needs_verify(tmp_path, capsys):
    (tmp_path / "t.py").write_text("x = 1\n")
    assert main(["migrate", str(tmp_path), "--verify"]) == 2
    assert "--verify needs the command that runs the project" in capsys.readouterr().err
    assert main(["migrate", str(tmp_path), "--", "python", "t.py"]) == 2
    assert "a command goes with --verify" in capsys.readouterr().err
