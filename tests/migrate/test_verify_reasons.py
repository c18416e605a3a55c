"""Issue 31 item 4: every "no" of ``migrate --verify`` carries its reason and line (``VerifyResult.reasons``, printed
under the table and in JSON)."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from mpsready.migrate.engine import migrate_path  # noqa: E402
from mpsready.migrate.verify import VerifyResult, CpuRun, MacRun, render_verify, traceback_line, verify_plan  # noqa: E402
from mpsready.scan import ScanConfig  # noqa: E402

CONFIG = ScanConfig(cache_dir=None)
LAYER = ("import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def forward(self, x):\n"
         "        return x * torch.ones(x.shape[1]).cuda()\n\n\nx = torch.ones(2, 3)\nprint(Scale()(x).sum().item())\n")
SELECT = ('import torch\n\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\nx = torch.ones(3, device=device)\n'
          "print(x.sum().item())\n")


def test_the_cpu_no_and_the_mps_no_carry_their_reasons_and_lines(tmp_path):
    (tmp_path / "t.py").write_text(LAYER)
    result = verify_plan(migrate_path(tmp_path, config=CONFIG), ["python", "t.py"], releases=["2.13"],
                         max_steps=2, time_limit=120)
    assert result.reasons() == [
        {"check": "same CPU numbers", "torch": None, "line": "t.py:7",
         "reason": "the original does not run on this CPU (exit 1): nothing to compare; the original ends with: "
                   "AssertionError: Torch not compiled with CUDA enabled"},
        {"check": "tensors on MPS", "torch": "2.13.0", "line": None,
         "reason": "no tensor reached the emulated MPS device: on a Mac the migrated program runs on the CPU; no "
                   "CUDA-or-CPU device selection found in the migrated files (does the program move a tensor to a "
                   "device at all?)"}]
    text = render_verify(result).splitlines()
    assert text[-4:] == [
        '  why not verified (each "no" above):',
        "  - same CPU numbers: no: the original does not run on this CPU (exit 1): nothing to compare; the original "
        "ends with: AssertionError: Torch not compiled with CUDA enabled (at t.py:7)",
        "  - torch 2.13.0, tensors on MPS: no: no tensor reached the emulated MPS device: on a Mac the migrated "
        "program runs on the CPU; no CUDA-or-CPU device selection found in the migrated files (does the program "
        "move a tensor to a device at all?) (no line known)",
        "verified: no"]
    assert result.to_dict()["reasons"] == result.reasons()


def test_a_device_selection_left_cuda_or_cpu_is_the_line_of_the_mps_no(tmp_path):
    """A plan that leaves the CUDA-or-CPU choice (here: the migrated text put back by hand) names that line."""
    (tmp_path / "t.py").write_text(SELECT)
    plan = migrate_path(tmp_path, config=CONFIG)
    plan.files[0].after = SELECT
    result = verify_plan(plan, ["python", "t.py"], releases=["2.13"], max_steps=2, time_limit=120)
    assert result.same_cpu_numbers is True
    assert result.reasons() == [{
        "check": "tensors on MPS", "torch": "2.13.0", "line": "t.py:3",
        "reason": "no tensor reached the emulated MPS device: on a Mac the migrated program runs on the CPU; the "
                  "device is chosen between CUDA and the CPU only there"}]


def test_reasons_of_a_failed_and_an_unfinished_emulated_run():
    cpu = CpuRun(0, "1\n", "", steps=1, sha256="a")
    result = VerifyResult(["python", "t.py"], cpu, cpu, [
        MacRun("2.3.1", "failed", True, "dtype aten::ones t.py:4 Cannot convert a MPS Tensor to float64", 0,
               reason="predicted Mac failure: dtype aten::ones t.py:4 Cannot convert a MPS Tensor to float64",
               line="t.py:4"),
        MacRun("2.13.0", "timed out", False, reason="mpsready run did not end within 420 s")])
    assert result.reasons() == [
        {"check": "emulated Mac", "torch": "2.3.1", "line": "t.py:4",
         "reason": "predicted Mac failure: dtype aten::ones t.py:4 Cannot convert a MPS Tensor to float64"},
        {"check": "emulated Mac", "torch": "2.13.0", "line": None, "reason": "mpsready run did not end within 420 s"},
        {"check": "tensors on MPS", "torch": "2.13.0", "line": None,
         "reason": "no tensor reached the emulated MPS device: on a Mac the migrated program runs on the CPU; no "
                   "CUDA-or-CPU device selection found in the migrated files (does the program move a tensor to a "
                   "device at all?)"}]
    assert VerifyResult(["python", "t.py"], cpu, cpu, []).reasons() == [
        {"check": "emulated Mac", "torch": None, "reason": "no release was run on the emulated Mac", "line": None}]


def test_traceback_line_is_the_projects_innermost_frame(tmp_path):
    import torch

    text = (f'Traceback (most recent call last):\n  File "{tmp_path}/t.py", line 11, in <module>\n'
            f'    print(Scale()(x))\n  File "{tmp_path}/pkg/m.py", line 7, in forward\n'
            f'  File "{Path(torch.__file__).parent}/cuda/__init__.py", line 403, in _lazy_init\n'
            "AssertionError: Torch not compiled with CUDA enabled\n")
    assert traceback_line(text, str(tmp_path)) == "pkg/m.py:7"
    assert traceback_line("no traceback\n", str(tmp_path)) is None


def test_the_header_gives_each_side_its_steps_when_they_differ():
    # nanoGPT train.py (device = 'cuda' hard-coded): the original stopped before its first step on this CPU while the
    # migrated copy stepped 3 times; the header said "0 optimizer step(s) each"
    original = CpuRun(1, "", "AssertionError: Torch not compiled with CUDA enabled", steps=0)
    migrated = CpuRun(0, "", "", steps=3, sha256="a")
    mac = [MacRun("2.13.0", "stopped", True)]
    head = render_verify(VerifyResult(["python", "train.py"], original, migrated, mac)).splitlines()[0]
    assert head == ("verify: python train.py (CPU: original and migrated, the original 0, the migrated 3 optimizer "
                    "step(s); emulated Mac: predicted, not observed on a Mac)")
    head = render_verify(VerifyResult(["python", "train.py"], migrated, migrated, mac)).splitlines()[0]
    assert head == ("verify: python train.py (CPU: original and migrated, 3 optimizer step(s) each; emulated Mac: "
                    "predicted, not observed on a Mac)")
