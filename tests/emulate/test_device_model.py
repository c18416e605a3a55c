"""The emulated device survives what training code does: autograd, optimizers, state_dict save and load,
default devices, generators, moves off the device, and gives PyTorch's errors where a Mac gives them."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from tests.run.helpers import emulate, write  # noqa: E402

SAME = "Expected all tensors to be on the same device, but found at least two devices, mps:0 and cpu!"

TRAIN = '''\
import io
import torch
import torch.nn as nn
dev = torch.device("mps")
torch.manual_seed(0)
torch.mps.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
model = model.to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, 1)
x = torch.randn(8, 1, 8, 8).to(dev)
y = torch.randint(0, 3, (8,), device=dev)
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
p = next(model.parameters())
state = opt.state[p]
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf, map_location=dev, weights_only=True)
model.load_state_dict(ckpt["model"])
opt.load_state_dict(ckpt["opt"])
model.eval()
with torch.inference_mode():
    pred = model(x).argmax(1)
print(p.device, p.grad.device, state["exp_avg"].device, state["step"].device, loss.device)
print(ckpt["model"]["0.weight"].device, next(model.parameters()).device, pred.device, pred.cpu().device)
print(type(loss.item()).__name__, x.data.device, x.detach().device, x.clone().device, x.new_zeros(2).device)
'''


def test_training_step_checkpoint_and_inference(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, TRAIN))
    assert (doc["outcome"], doc["failures"], doc["steps"]) == ("completed", [], 3)
    assert out == ("mps:0 mps:0 mps:0 cpu mps:0\n"    # Adam's step counter is a CPU tensor on a Mac too
                   "mps:0 mps:0 mps:0 cpu\n"
                   "float mps:0 mps:0 mps:0 mps:0\n")
    ops = {p["op"] for p in doc["predictions"]}
    assert {"aten::convolution_backward", "aten::native_batch_norm", "aten::_foreach_add_.List"} & ops


DEFAULTS = '''\
import torch
torch.set_default_device("mps")
a = torch.zeros(3)
g = torch.Generator(device="mps")
g.manual_seed(1)
b = torch.randn(2, generator=g)
print(a.device, b.device, torch.get_default_device(), isinstance(g, torch.Generator))
torch.set_default_device("cpu")
print(torch.zeros(1).device)
'''


def test_default_device_and_generators(tmp_path):
    import torch

    _r, doc, out, _e = emulate(write(tmp_path, DEFAULTS))
    assert doc["outcome"] == "completed"
    assert out == "mps:0 mps:0 mps:0 True\ncpu\n"
    # the program's set_default_device("cpu") left no global DeviceContext mode behind (it broke later traces)
    assert getattr(torch._GLOBAL_DEVICE_CONTEXT, "device_context", None) is None
    assert torch.Tensor.device is torch._C.TensorBase.device  # the class-level patches are gone too


NUMPY = '''\
import torch
x = torch.ones(2, device="mps")
print(x.cpu().numpy().tolist())
x.numpy()
'''


def test_numpy_of_an_mps_tensor_raises_pytorchs_error(tmp_path):
    pytest.importorskip("numpy")
    _r, doc, out, _e = emulate(write(tmp_path, NUMPY))
    ff = doc["first_failure"]
    assert out == "[1.0, 1.0]\n"
    # the emulated device raised it as PyTorch does on a Mac: a Mac failure (mac true), exit 1
    assert (ff["kind"], ff["exception"], ff["location"]["line"], ff["mac"], doc["outcome"], doc["exit_code"]) == (
        "mps_api", "TypeError", 4, True, "failed", 1)
    assert ff["message"].startswith("can't convert mps:0 device type tensor to numpy")


ONE_TENSOR = '''\
import threading
import torch
a = torch.ones(3, device="mps")
print(a.sum().item(), torch.is_complex(a), a.requires_grad, tuple(a.shape), a.device, a.cpu().device)
seen = {}
def work():
    b = torch.ones(2, device="mps")
    seen["thread"] = (b.max().item(), torch.is_floating_point(b), str(b.device), str(b.cpu().device))
t = threading.Thread(target=work)
t.start()
t.join()
print(seen["thread"])
c = torch.stack([torch.ones(3), a])
'''


def test_calls_of_one_tensor_are_forwarded_and_one_list_of_tensors_is_still_placed(tmp_path):
    """The function mode forwards a call of at most one tensor as it is (a property read, ``.item()``,
    ``torch.is_complex``), in the main thread and in the program's threads; a single list argument still holds a
    CPU tensor beside an MPS one (MPS's error at the user's line)."""
    _r, doc, out, _e = emulate(write(tmp_path, ONE_TENSOR))
    assert out == "3.0 False False (3,) mps:0 cpu\n(1.0, True, 'mps:0', 'cpu')\n"
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["op"], ff["location"]["line"]) == (
        "failed", "placement", "RuntimeError", "Placeholder storage has not been allocated on MPS device!",
        "aten::cat", 13)


ONE_TENSOR_KEYWORDS = '''\
import torch
import torch.nn.functional as F
a = torch.ones(3, device="mps")
print(F.relu(a, inplace=False).device, a.sum(dim=0).device, F.gelu(a, approximate="tanh").device)
c = torch.add(a, other=torch.ones(3))
'''


def test_one_tensor_with_keywords_is_forwarded_and_a_keyword_tensor_is_still_placed(tmp_path):
    """Keywords that hold no tensor leave a call of one tensor as it is; a CPU tensor given by keyword beside an
    MPS one is still MPS's error at the user's line."""
    _r, doc, out, _e = emulate(write(tmp_path, ONE_TENSOR_KEYWORDS))
    assert out == "mps:0 mps:0 mps:0\n"
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["message"], ff["op"], ff["location"]["line"]) == (
        "failed", "placement", SAME, "aten::add.Tensor", 5)


KEEP_GOING = '''\
import torch
dev = "mps"
a = torch.zeros(3, dtype=torch.float64, device=dev)
b = torch.randn(1, 2, 4, 4, 4, device=dev)
g = torch.nn.functional.grid_sample(b, torch.zeros(1, 2, 2, 2, 3, device=dev), align_corners=False)
print("reached the end", a.dtype, g.shape)
'''


def test_keep_going_lists_every_failure(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, KEEP_GOING), torch="2.5", keep_going=True)
    assert out == "reached the end torch.float64 torch.Size([1, 2, 2, 2, 2])\n"
    assert doc["outcome"] == "failed" and doc["exit_code"] == 1
    assert [(f["kind"], f["op"], f["location"]["line"]) for f in doc["failures"]] == [
        ("dtype", "aten::zeros", 3), ("missing", "aten::grid_sampler_3d", 5)]


def test_stops_at_the_first_failure_without_keep_going(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, KEEP_GOING), torch="2.5")
    assert out == ""
    assert [(f["kind"], f["location"]["line"]) for f in doc["failures"]] == [("dtype", 3)]


LOOP = '''\
import torch
w = torch.zeros(2, device="mps", requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
done = 0
for step in range(1000):
    (w - 1).pow(2).sum().backward()
    opt.step()
    opt.zero_grad()
    done += 1
print("never printed")
'''


def test_max_steps_stops_cleanly(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, LOOP), max_steps=5)
    assert (doc["outcome"], doc["steps"], doc["exit_code"], out) == ("stopped", 5, 0, "")
    assert doc["stop_reason"] == "--max-steps 5 reached (optimizer steps)"


SLOW = '''\
import time
import torch
x = torch.ones(2, device="mps")
while True:
    x = x + 1
    time.sleep(0.01)
'''


def test_time_limit_stops_cleanly(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, SLOW), time_limit=0.5)
    assert (doc["outcome"], doc["exit_code"], doc["stop_reason"]) == ("stopped", 0, "--time-limit 0.5 s reached")
    assert 0.4 < doc["seconds"] < 5


def test_cuda_calls_raise_the_macs_error_on_a_cuda_build_with_a_gpu(tmp_path, monkeypatch):
    """On a CUDA build with a working GPU the real ``torch.cuda._lazy_init`` succeeds, so ``.cuda()`` used to
    complete on the emulated Mac (a false pass; without a driver it said "Found no NVIDIA driver", which no Mac
    prints). The emulated Mac raises the macOS wheel's error, marked ``cuda_api``, whatever the local build."""
    import torch

    from mpsready.emulate import Emulator, Target
    from mpsready.emulate import residence
    from mpsready.emulate.session import mac_error_kind

    monkeypatch.setattr(torch.cuda, "_lazy_init", lambda: None)  # what a CUDA build with a GPU does
    emu = Emulator(Target("2.5", "15.5"), str(tmp_path), keep_going=True)
    emu.install()
    try:
        for call in (lambda: torch.ones(2).cuda(), lambda: torch.zeros(1, device="cuda"), torch.cuda.synchronize,
                     torch.cuda._lazy_init):
            with pytest.raises(AssertionError) as err:
                call()
            assert (str(err.value), mac_error_kind(err.value)) == ("Torch not compiled with CUDA enabled", "cuda_api")
        assert (torch.cuda.is_available(), torch.cuda.device_count()) == (False, 0)
    finally:
        emu.uninstall()
        residence.clear()
    assert torch.cuda._lazy_init() is None  # the local build's own again


def test_modules_built_with_device_mps_have_their_parameters_on_mps(tmp_path):
    """``nn.Parameter(t)`` is a new Python object over ``t`` (``Tensor._make_subclass``): the residence mark was
    lost, so ``nn.Linear(2, 2, device="mps").weight`` read as the CPU and ``nn.RMSNorm(1024, device="mps")(x)``
    was a false placement failure ("found at least two devices, mps:0 and cpu"), seen on a public report's script.
    A parameter made from a CPU tensor stays on the CPU."""
    import torch

    from mpsready.emulate import Emulator, Target, residence

    emu = Emulator(Target("2.7", "15.5"), str(tmp_path))
    emu.install()
    try:
        lin = torch.nn.Linear(2, 2, device="mps")
        norm = torch.nn.RMSNorm(8, device="mps")
        devices = [str(t.device) for t in (lin.weight, lin.bias, norm.weight, torch.nn.Parameter(torch.ones(2)),
                                           torch.nn.Parameter(torch.ones(2, device="mps")))]
        assert devices == ["mps:0", "mps:0", "mps:0", "cpu", "mps:0"]
        out = norm(torch.randn(3, 8, device="mps"))
        assert (str(out.device), tuple(out.shape)) == ("mps:0", (3, 8))
        assert str(lin(torch.ones(1, 2, device="mps")).device) == "mps:0"
    finally:
        emu.uninstall()
        residence.clear()
    assert str(torch.nn.Linear(2, 2).weight.device) == "cpu"
