"""Public names an older target release lacks, reached the ways a program reaches them (builder h40, round of
2026-12-07): ``from torch.amp import GradScaler`` on 2.2 is the Mac's ``ImportError`` (a predicted failure, kind
``release_api``), not "missing here: module torch.amp; install the package"; ``torch.accelerator`` (2.6+),
``torch.nn.RMSNorm`` and ``torch.nn.functional.rms_norm`` (2.4+) fail on the releases before them instead of
ending ``completed``. Facts and sources: ops/data/curated/python_checks.yaml ``mps_api``."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

FROM_IMPORT = '''\
import torch
x = torch.ones(2, device="mps")
from torch.amp import GradScaler
print("never")
'''


def test_from_import_of_a_name_the_release_lacks_is_the_macs_import_error(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, FROM_IMPORT), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], doc["program_error"], out) == ("failed", None, "")
    assert (ff["mac"], ff["kind"], ff["exception"], ff["location"]["line"]) == (True, "release_api", "ImportError", 3)
    assert ff["message"].startswith("cannot import name 'GradScaler' from 'torch.amp' (")
    # the release that has it imports it as before
    _, doc, out, _ = emulate(write(tmp_path, FROM_IMPORT), torch="2.3", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "never\n")


FROM_IMPORT_MPS = '''\
import torch
from torch.mps import compile_shader
'''


def test_from_import_of_a_torch_mps_name(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, FROM_IMPORT_MPS), torch="2.6", macos="15.5")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["location"]["line"]) == (
        "failed", "release_api", "ImportError", 2)
    assert ff["message"].startswith("cannot import name 'compile_shader' from 'torch.mps' (")


ACCELERATOR = '''\
import torch
dev = torch.accelerator.current_accelerator()
x = torch.ones(2, device=dev)
print(x.device)
'''


def test_torch_accelerator_does_not_exist_before_2_6(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, ACCELERATOR), torch="2.5", macos="15.5")
    ff = doc["first_failure"]
    assert (doc["outcome"], out) == ("failed", "")
    assert (ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "release_api", "AttributeError", "module 'torch' has no attribute 'accelerator'", 2)
    _, doc, out, _ = emulate(write(tmp_path, ACCELERATOR), torch="2.6", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "mps:0\n")


PROBE = '''\
import torch
if hasattr(torch, "accelerator"):
    dev = torch.accelerator.current_accelerator()
else:
    dev = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
print(dev)
'''


def test_a_probe_of_torch_accelerator_takes_the_older_branch(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, PROBE), torch="2.2", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "mps\n")


RMSNORM = '''\
import torch
import torch.nn.functional as F
x = torch.randn(2, 4, device="mps")
y = F.rms_norm(x, (4,))
n = torch.nn.RMSNorm(4)
'''


@pytest.mark.parametrize(("torch", "line", "message"), [
    ("2.2", 4, "module 'torch.nn.functional' has no attribute 'rms_norm'"),
    ("2.3", 4, "module 'torch.nn.functional' has no attribute 'rms_norm'"),
])
def test_rms_norm_does_not_exist_before_2_4(tmp_path, torch, line, message):
    _, doc, _, _ = emulate(write(tmp_path, RMSNORM), torch=torch, macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "release_api", "AttributeError", message, line)


def test_rms_norm_module_before_2_4_and_both_from_2_4(tmp_path):
    script = write(tmp_path, "import torch\nn = torch.nn.RMSNorm(4).to('mps')\nprint(n(torch.ones(1, 4, device='mps')).shape)\n")
    _, doc, _, _ = emulate(script, torch="2.3", macos="14.4")
    ff = doc["first_failure"]
    assert (ff["exception"], ff["message"], ff["location"]["line"]) == (
        "AttributeError", "module 'torch.nn' has no attribute 'RMSNorm'", 2)
    _, doc, out, _ = emulate(script, torch="2.4", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "torch.Size([1, 4])\n")
    _, doc, _, _ = emulate(write(tmp_path, RMSNORM), torch="2.4", macos="14.4")
    assert doc["outcome"] == "completed"


SELECTS_MPS = '''\
import torch
dev = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
x = torch.ones(2, device=dev)
'''


def test_no_mps_line_names_the_unavailable_mps_not_a_cuda_only_selection(tmp_path):
    # macOS 12.0 is below 2.2's floor (12.3): the program asked for MPS and got the CPU; the line must not blame a
    # device selection that checks only CUDA
    from mpsready.run.render import render_terminal

    _, doc, _, _ = emulate(write(tmp_path, SELECTS_MPS), torch="2.2", macos="12.0")
    text = render_terminal(doc)
    assert doc["outcome"] == "completed"
    assert ("no tensor reached the emulated MPS device: on a Mac this program runs on the CPU (MPS is not available "
            "on macOS 12.0 with torch 2.2.2)") in text.splitlines()
    _, doc, _, _ = emulate(write(tmp_path, "import torch\nx = torch.ones(2)\n"), torch="2.2", macos="14.4")
    assert ("no tensor reached the emulated MPS device: on a Mac this program runs on the CPU (a device selection "
            "that checks only CUDA, or no --device mps given)") in render_terminal(doc).splitlines()


LIBRARY = '''\
import torch


def pick():  # a library gating on the installed torch.__version__ (2.13 here), as transformers/accelerate do
    return torch.accelerator.current_accelerator() if hasattr(torch, "accelerator") else torch.device("cpu")
'''


def test_a_library_keeps_seeing_the_installed_torch(tmp_path):
    # only the program's own files see the release's missing names: a library keeps seeing this machine's torch
    # (and its version), as it keeps seeing this machine's platform
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "somelib.py").write_text(LIBRARY)
    script = write(tmp_path, f"import sys\nsys.path.insert(0, {str(site)!r})\nimport somelib\nprint(somelib.pick())\n")
    _, doc, out, _ = emulate(script, torch="2.5", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "mps\n")


def test_matrix_row_of_a_completed_run_with_a_predicted_wrong_result_names_it():
    # builder h40: `--torch 2.2,2.4 -- python wr.py` (GELU of a transposed tensor) showed "2.2.2 completed - -": the
    # advisory only in the exit code (1) and in "first release where it completes: 2.4.1"
    from mpsready.run import matrix
    from mpsready.run.render import render_matrix_terminal

    wrong = {"id": "gelu-noncontiguous", "op": "aten::gelu", "dtype": "float32", "calls": 1, "fixed_in": "2.4.0",
             "location": {"path": "wr.py", "line": 4}}
    doc = {"outcome": "completed", "exit_code": 1, "first_failure": None, "fallbacks": [], "seconds": 0.5,
           "steps": 0, "stop_reason": None, "wrong_results": [wrong]}
    m = matrix.build_matrix_document([matrix.ReleaseRun("2.2", "2.2.2", doc, 1, "", 1.0)], "2.2",
                                     {"macos": "15.5", "fallback": False},
                                     {"kind": "script", "target": "/x/wr.py", "argv": ["wr.py"], "root": "/x"},
                                     {"keep_going": False, "max_steps": None, "time_limit": None, "jobs": 1},
                                     show_output=False)
    row = [line for line in render_matrix_terminal(m, width=200).splitlines() if line.startswith("2.2.2")]
    assert row and row[0].split() [:9] == ["2.2.2", "completed", "wrong", "result:", "aten::gelu", "(float32);",
                                           "fixed", "in", "2.4.0"]
    assert "wr.py:4" in row[0]
