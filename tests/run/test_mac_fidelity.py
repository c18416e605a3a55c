"""The emulated Mac refuses what a Mac refuses and looks like a Mac: device placement, platform identity,
threads, spawned children, Module.to keywords, the fallback variable's setdefault idiom (issue 18)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write  # noqa: E402

SAME = "Expected all tensors to be on the same device, but found at least two devices, mps:0 and cpu!"
PLACEHOLDER = "Placeholder storage has not been allocated on MPS device!"


def _first(doc):
    ff = doc["first_failure"]
    return ff["kind"], ff["exception"], ff["message"], ff["op"], ff["location"]["line"]


@pytest.mark.parametrize(("torch", "message"), [
    ("2.3", PLACEHOLDER),
    # from 2.4 _mps_linear checks its tensors' devices itself (Linear.mm; test_mps.py asserts the text)
    ("2.13", "Tensor for argument input is on cpu but expected on mps"),
])
def test_a_cpu_batch_into_a_model_on_mps_raises_the_linear_kernels_refusal(tmp_path, torch, message):
    s = write(tmp_path, "import torch\n"
                        "m = torch.nn.Linear(3, 2).to('mps')\n"
                        "x = torch.ones(4, 3)\n"
                        "y = m(x)\n")
    _r, doc, _o, _e = emulate(s, torch=torch)
    assert doc["outcome"] == "failed" and doc["exit_code"] == 1
    assert _first(doc) == ("placement", "RuntimeError", message, "aten::linear", 4)


def test_mps_plus_cpu_raises_the_same_device_error_in_operand_order(tmp_path):
    s = write(tmp_path, "import torch\n"
                        "a = torch.ones(3, device='mps')\n"
                        "b = torch.ones(3)\n"
                        "c = a + b\n")
    _r, doc, _o, _e = emulate(s)
    assert _first(doc) == ("placement", "RuntimeError", SAME, "aten::add.Tensor", 4)
    s2 = write(tmp_path, "import torch\n"
                         "b = torch.ones(3)\n"
                         "b.mul_(torch.ones(3, device='mps'))\n", "inplace.py")
    _r, doc, _o, _e = emulate(s2)
    # the in-place op's output (the CPU tensor) comes first in TensorIterator's common-device check
    assert _first(doc) == ("placement", "RuntimeError",
                           "Expected all tensors to be on the same device, but found at least two devices, cpu and "
                           "mps:0!", "aten::mul_.Tensor", 3)


def test_an_embedding_on_mps_fed_cpu_ids_fails_where_the_ids_are_gathered(tmp_path):
    s = write(tmp_path, "import torch\n"
                        "emb = torch.nn.Embedding(10, 4).to('mps')\n"
                        "ids = torch.tensor([[1, 2, 3]])\n"
                        "out = emb(ids)\n")
    _r, doc, _o, _e = emulate(s)
    assert _first(doc) == ("placement", "RuntimeError", PLACEHOLDER, "aten::index_select", 4)


ALLOWED = """\
import torch
import torch.nn.functional as F
a = torch.ones(3, 4, device="mps")
s = torch.tensor(2.0)                      # a 0-dim CPU tensor is a scalar to TensorIterator
b = a * s + s
idx = torch.tensor([0, 2])                 # CPU index tensors move to the indexed tensor's device
c = a[idx]
a[idx] = torch.tensor(5.0)
a[torch.tensor([True, False, True])] = 1.0
d = a.masked_fill(a > 2, torch.tensor(0.0, device="mps"))
oh = F.one_hot(torch.tensor([0, 2], device="mps"), 4)   # one_hot's own zeros are allocated on MPS
m = torch.nn.Linear(4, 2).to("mps")
opt = torch.optim.Adam(m.parameters())
for _ in range(2):
    loss = m(a).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
m.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})   # copy_ across devices
logits = torch.randn(30, 2, 5, device="mps", requires_grad=True)
targets = torch.randint(1, 5, (2, 8), device="mps")
lens, tl = torch.full((2,), 30, dtype=torch.long), torch.full((2,), 8, dtype=torch.long)
F.ctc_loss(logits.log_softmax(-1), targets, lens, tl).backward()   # CTC reads its lengths on the host
print(b.device, c.device, d.device, oh.device, int(oh.sum()))
"""


def test_what_pytorch_allows_across_devices_completes(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, ALLOWED), torch="2.14")
    assert (doc["outcome"], doc["failures"], out) == ("completed", [], "mps:0 mps:0 mps:0 mps:0 2\n")


def test_platform_identity_in_the_programs_own_code(tmp_path):
    s = write(tmp_path, "import sys, os, platform, torch\n"
                        "dev = 'mps' if sys.platform == 'darwin' else 'cuda'\n"
                        "from sys import platform as plat\n"
                        "print(plat, platform.system(), platform.machine(), platform.mac_ver()[0], os.uname().sysname,"
                        " platform.platform())\n"
                        "print(torch.ones(2, device=dev).device)\n")
    _r, doc, out, _e = emulate(s, macos="14.4")
    assert doc["outcome"] == "completed"
    assert out == "darwin Darwin arm64 14.4 Darwin macOS-14.4-arm64-arm-64bit\nmps:0\n"
    # outside the program (here, this test's process after the run) the machine is itself again
    import platform
    assert sys.platform == "linux" and platform.system() == "Linux" and sys.modules["sys"] is sys


def test_a_thread_of_the_program_runs_on_the_emulated_device(tmp_path):
    s = write(tmp_path, "import threading, torch\n"
                        "out = {}\n"
                        "def work():\n"
                        "    t = torch.ones(3, device='mps')\n"
                        "    out['dev'] = str(t.device)\n"
                        "    out['dd'] = t.double()\n"
                        "th = threading.Thread(target=work)\n"
                        "th.start(); th.join()\n"
                        "print(out.get('dev'))\n")
    _r, doc, out, _e = emulate(s)
    assert out == "mps:0\n"
    f = doc["failures"][0]
    assert (doc["outcome"], f["kind"], f["exception"], f["location"]["line"]) == ("failed", "dtype", "TypeError", 6)


def test_module_to_with_device_and_dtype_keywords_reaches_mps(tmp_path):
    s = write(tmp_path, "import torch\n"
                        "m = torch.nn.Linear(3, 2)\n"
                        "m.to(device='mps', dtype=torch.float32)\n"
                        "print(m.weight.device)\n")
    _r, doc, out, _e = emulate(s)
    assert (doc["outcome"], out, doc["mps_used"]) == ("completed", "mps:0\n", True)


def test_setdefault_of_the_fallback_variable_before_importing_torch_turns_the_fallback_on(tmp_path):
    s = write(tmp_path, "import os\n"
                        "os.environ.setdefault('PYTORCH_ENABLE_MPS_FALLBACK', '1')\n"
                        "import torch\n"
                        "x = torch.randn(2, 4, 4, 4, 4, device='mps')\n"
                        "y = torch.nn.functional.avg_pool3d(x, 2)\n")
    saved = os.environ.pop("PYTORCH_ENABLE_MPS_FALLBACK", None)
    try:
        _r, doc, _o, _e = emulate(s, torch="2.5")
    finally:
        if saved is not None:
            os.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = saved
    assert (doc["outcome"], doc["target"]["fallback"]) == ("completed", True)
    assert [f["op"] for f in doc["fallbacks"]] == ["aten::avg_pool3d.out"]


def _cli_run(tmp_path: Path, script: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    out = tmp_path / "doc.json"
    return subprocess.run([sys.executable, "-m", "mpsready", "run", "--torch", "2.8", "--format", "json", "-o",
                           str(out), *extra, "--", "python", str(script)], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(tmp_path))


def test_dataloader_workers_without_a_main_guard_are_a_predicted_spawn_failure(tmp_path):
    import json

    s = write(tmp_path, "import torch\n"
                        "from torch.utils.data import DataLoader, TensorDataset\n"
                        "data = TensorDataset(torch.arange(8, dtype=torch.float32).unsqueeze(1))\n"
                        "loader = DataLoader(data, batch_size=4, num_workers=1)\n"
                        "(batch,) = next(iter(loader))\n")
    p = _cli_run(tmp_path, s)
    doc = json.loads((tmp_path / "doc.json").read_text())
    ff = doc["first_failure"]
    assert (p.returncode, doc["outcome"], ff["kind"], ff["exception"], ff["location"]["line"], ff["mac"]) == (
        1, "failed", "spawn", "RuntimeError", 5, True)
    assert ff["message"].startswith("An attempt has been made to start a new process before the current process "
                                    "has finished its bootstrapping phase.")
    assert "put the program's top-level code under `if __name__ == \"__main__\":`" in ff["message"]


def test_a_spawned_worker_sees_the_mac_too(tmp_path):
    import json

    s = write(tmp_path, "import sys, torch\n"
                        "from torch.utils.data import DataLoader, Dataset\n"
                        "class D(Dataset):\n"
                        "    def __len__(self): return 2\n"
                        "    def __getitem__(self, i):\n"
                        "        return torch.tensor([float(sys.platform == 'darwin'),"
                        " float(torch.backends.mps.is_available()), float(torch.cuda.is_available())])\n"
                        "if __name__ == '__main__':\n"
                        "    b = next(iter(DataLoader(D(), batch_size=2, num_workers=1)))\n"
                        "    print(b[0].tolist())\n")
    p = _cli_run(tmp_path, s)
    doc = json.loads((tmp_path / "doc.json").read_text())
    assert (p.returncode, doc["outcome"]) == (0, "completed")
    assert "[1.0, 1.0, 0.0]" in p.stdout + p.stderr


def test_a_scalar_overload_expanded_as_a_composite_computes(tmp_path):
    # remainder.Scalar / bitwise_left_shift.Scalar_Tensor refuse a redispatch of their Scalar argument ("Unable
    # to cast 37 to Tensor"); the emulator then computes them plainly instead of ending inconclusive
    s = write(tmp_path, "import torch\n"
                        "t = torch.as_tensor(50000017, device='mps')\n"
                        "print(int(t % 37), (1 << torch.tensor([2], device='mps')).tolist())\n")
    _r, doc, out, _e = emulate(s, torch="2.13")
    assert (doc["outcome"], out) == ("completed", "30 [4]\n")  # 50000017 = 37 * 1351351 + 30


def test_a_torch_mps_name_no_release_has_is_a_mac_failure(tmp_path):
    s = write(tmp_path, "import torch\n"
                        "x = torch.ones(2, device='mps')\n"
                        "ok = hasattr(torch.mps, 'current_device')\n"
                        "torch.mps.current_device()\n")
    _r, doc, _o, _e = emulate(s, torch="2.6")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"], ff["mac"]) == (
        "failed", "release_api", "AttributeError", "module 'torch.mps' has no attribute 'current_device'", 4, True)


def test_more_than_65536_conv_output_channels_raise_not_implemented(tmp_path):
    s = write(tmp_path, "import torch\n"
                        "conv = torch.nn.Conv1d(1, 65537, 1).to('mps')\n"
                        "y = conv(torch.ones(1, 1, 4, device='mps'))\n")
    _r, doc, _o, _e = emulate(s, torch="2.7")
    # judged at the MPS kernel the convolution routes to (mps_dtype_checks.yaml: every output size is checked)
    assert _first(doc) == ("shape", "NotImplementedError", "Output channels > 65536 not supported at the MPS device. ",
                           "aten::_mps_convolution", 3)


def test_tensors_made_from_an_mps_tensor_live_where_pytorch_puts_them(tmp_path):
    # kornia's suite: (x > .5).type_as(x) was left on the CPU here and gave 50 false placement failures;
    # type_as is self.to(other.options()), new_tensor creates on self's device, an explicit device= wins
    s = write(tmp_path, "import torch\n"
                        "x = torch.rand(4, device='mps')\n"
                        "made = {'type_as': torch.ones(4).type_as(x), 'mask_type_as': (x > .5).type_as(x),\n"
                        "        'new_tensor': x.new_tensor([1., 2., 3., 4.]), 'new_zeros': x.new_zeros(4),\n"
                        "        'ones_like_cpu': torch.ones_like(x, device='cpu'), 'to_cpu_type': x.type_as(torch.ones(1))}\n"
                        "print(sorted((k, str(v.device)) for k, v in made.items()))\n"
                        "print((x * made['type_as'] + made['new_tensor'] + made['new_zeros']).sum().item() > 0)\n")
    _r, doc, out, _e = emulate(s)
    assert doc["outcome"] == "completed"
    assert out.splitlines() == [
        "[('mask_type_as', 'mps:0'), ('new_tensor', 'mps:0'), ('new_zeros', 'mps:0'), ('ones_like_cpu', 'cpu'), "
        "('to_cpu_type', 'cpu'), ('type_as', 'mps:0')]", "True"]


def test_a_factory_naming_mps_inside_a_library_function_is_made_on_the_device(tmp_path):
    # F.fractional_max_pool2d draws its samples with torch.rand(device=input.device) inside torch's own Python
    s = write(tmp_path, "import torch\n"
                        "pool = torch.nn.FractionalMaxPool2d(kernel_size=2, output_ratio=0.5)\n"
                        "out = pool(torch.randn(1, 3, 12, 12, device='mps'))\n")
    _r, doc, _o, _e = emulate(s, torch="2.14", macos="15.5")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["location"]["line"], ff["mac"]) == (
        "failed", "missing", "NotImplementedError", 3, True)
    assert "'aten::fractional_max_pool2d.output' is not currently implemented for the MPS device" in ff["message"]
