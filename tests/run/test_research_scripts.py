"""Small scripts written like research code, run as on a Mac: each ends as a Mac ends it."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write  # noqa: E402

ARGPARSE_CUDA = '''\
import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
args = p.parse_args()
model = torch.nn.Linear(4, 2).to(args.device)
x = torch.randn(3, 4, device=args.device)
print(model(x).device)
'''


def test_argparse_device_default_cuda_fails_at_the_model_move(tmp_path):
    _r, doc, _o, err = emulate(write(tmp_path, ARGPARSE_CUDA))
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "cuda_api", "AssertionError", "Torch not compiled with CUDA enabled", 6)
    assert "AssertionError: Torch not compiled with CUDA enabled" in err


def test_argparse_device_mps_runs_on_the_emulated_device(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, ARGPARSE_CUDA), argv=["--device", "mps"])
    assert (doc["outcome"], doc["exit_code"], out) == ("completed", 0, "mps:0\n")


HARDCODED_CUDA = '''\
import torch
net = torch.nn.Conv2d(3, 4, 3)
net.cuda()
'''


def test_hardcoded_cuda_call(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, HARDCODED_CUDA))
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"], ff["mac"], doc["exit_code"]) == (
        "cuda_api", "AssertionError", 3, True, 1)
    assert doc["program_error"] is None


CAST_BEFORE = '''\
import numpy as np
import torch
dev = torch.device("mps")
a = np.linspace(0, 1, 8)                       # float64, as NumPy makes it
x = torch.from_numpy(a).float().to(dev)        # cast on the CPU, then move: fine on a Mac
print(x.dtype, x.device)
'''
CAST_AFTER = '''\
import numpy as np
import torch
dev = torch.device("mps")
a = np.linspace(0, 1, 8)
x = torch.from_numpy(a).to(dev).float()        # the float64 tensor reaches MPS first: TypeError
print(x.dtype, x.device)
'''


def test_float64_cast_before_the_move_is_clean(tmp_path):
    pytest.importorskip("numpy")
    _r, doc, out, _e = emulate(write(tmp_path, CAST_BEFORE))
    assert (doc["outcome"], doc["failures"], out) == ("completed", [], "torch.float32 mps:0\n")


def test_float64_cast_after_the_move_fails_at_that_line(tmp_path):
    pytest.importorskip("numpy")
    _r, doc, _o, err = emulate(write(tmp_path, CAST_AFTER))
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["dtype"], ff["op"], ff["location"]["line"]) == (
        "dtype", "TypeError", "float64", "aten::_to_copy", 5)
    assert ("TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
            "Please use float32 instead.") in err


BRANCH = '''\
import torch
dev = torch.device("mps" if torch.backends.mps.is_available() else "cpu")
x = torch.ones(2, device=dev)
if x.device.type == "mps":
    path = "mac path"
    torch.mps.synchronize()
    torch.mps.empty_cache()
elif x.device.type == "cuda":
    path = "cuda path"
else:
    path = "cpu path"
print(path, x.is_mps, torch.backends.mps.is_built(), torch.cuda.is_available(), torch.mps.device_count())
print(torch.mps.current_allocated_memory())
'''


def test_device_type_branch_takes_the_mac_path(tmp_path):
    _r, doc, out, err = emulate(write(tmp_path, BRANCH))
    assert doc["outcome"] == "completed"
    assert out == "mac path True True False 1\n8\n"  # two float32 elements resident: 8 bytes (emulated)
    assert "torch.mps memory figures are emulated" in err
    assert doc["memory"] == {"emulated": True, "queried": True}


def test_mps_unavailable_below_the_releases_minimum_macos(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, BRANCH), torch="2.13", macos="13.5")
    assert out.startswith("cpu path False True False 0\n")
    assert doc["target"]["mps_available"] is False


CTC = '''\
import torch
import torch.nn.functional as F
dev = "mps"
logits = torch.randn(30, 2, 5, device=dev, requires_grad=True)
targets = torch.randint(1, 5, (2, 8), device=dev)
lens = torch.full((2,), 30, dtype=torch.long)
tl = torch.full((2,), 8, dtype=torch.long)
loss = F.ctc_loss(logits.log_softmax(-1), targets, lens, tl)
loss.backward()
print(loss.device, logits.grad.device)
'''


def test_ctc_loss_without_fallback_raises_mps_not_implemented(tmp_path):
    _r, doc, _o, err = emulate(write(tmp_path, CTC), torch="2.13")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["op"], ff["location"]["line"], ff["fixed_in"]) == (
        "missing", "NotImplementedError", "aten::_ctc_loss.Tensor", 8, "2.14.0")
    assert "https://github.com/pytorch/pytorch/issues/141287" in ff["message"]


def test_ctc_loss_with_fallback_runs_and_counts_both_ops(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, CTC), torch="2.13", fallback=True)
    assert (doc["outcome"], doc["exit_code"], out) == ("completed", 0, "mps:0 mps:0\n")
    assert sorted((f["op"], f["calls"], f["location"]["line"]) for f in doc["fallbacks"]) == [
        ("aten::_ctc_loss.Tensor", 1, 8), ("aten::_ctc_loss_backward.Tensor", 1, 9)]


def test_ctc_loss_runs_natively_from_2_14(tmp_path):
    _r, doc, _o, _e = emulate(write(tmp_path, CTC), torch="2.14")
    assert (doc["outcome"], doc["fallbacks"]) == ("completed", [])


SVD = '''\
import torch
a = torch.randn(6, 4, device="mps")
u, s, v = torch.linalg.svd(a, full_matrices=False)
print(s.device)
'''


@pytest.mark.parametrize("torch_v,fallbacks", [("2.5", [("aten::linalg_svd", "always_fallback")]), ("2.14", [])])
def test_linalg_svd_is_a_cpu_fallback_before_native_support(tmp_path, torch_v, fallbacks):
    _r, doc, out, err = emulate(write(tmp_path, SVD), torch=torch_v)
    assert (doc["outcome"], out) == ("completed", "mps:0\n")
    assert [(f["op"], f["kind"]) for f in doc["fallbacks"]] == fallbacks
    assert ("UserWarning: The operator 'aten::linalg_svd' is not currently supported on the MPS backend" in err) \
        == bool(fallbacks)


CONVT3D = '''\
import torch
dev = "mps"
up = torch.nn.ConvTranspose3d(4, 2, kernel_size=2, stride=2).to(dev)
x = torch.randn(1, 4, 3, 3, 3, device=dev)
print(up(x).shape)
'''


@pytest.mark.parametrize("torch_v,want", [
    ("2.7", ("failed", "ConvTranspose 3D is not supported on MPS", 5)), ("2.8", ("completed", None, None))])
def test_conv_transpose_3d(tmp_path, torch_v, want):
    _r, doc, _o, _e = emulate(write(tmp_path, CONVT3D), torch=torch_v)
    ff = doc["first_failure"]
    got = (doc["outcome"], ff and ff["message"], ff and ff["location"]["line"])
    assert got == want
    if ff:
        assert (ff["kind"], ff["exception"], ff["fixed_in"]) == ("shape", "RuntimeError", "2.8.0")


ACCEL = '''\
import torch
use = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use else torch.device("cpu")
torch.accelerator.synchronize()
print(device, torch.accelerator.device_count(), torch.ones(1, device=device).device)
'''


def test_torch_accelerator_names_mps(tmp_path):
    _r, doc, out, _e = emulate(write(tmp_path, ACCEL))
    assert (doc["outcome"], out) == ("completed", "mps 1 mps:0\n")


SDPA_DROPOUT = '''\
import torch
import torch.nn.functional as F
q = torch.randn(2, 2, 8, 4, device="mps", requires_grad=True)
y = F.scaled_dot_product_attention(q, q, q, dropout_p=0.2, is_causal=True)
y.sum().backward()
print(q.grad.device)
'''


def test_callee_of_a_composite_decomposed_by_another_release_is_not_a_certain_failure(tmp_path):
    # torch 2.13 (installed) decomposes _safe_softmax with isneginf, which has no MPS kernel in 2.5.1; 2.5.1's own
    # _safe_softmax compares with -inf instead (nanoGPT trains on 2.5 Macs): reported unknown, not raised; and
    # since a call judged on no data is never a pass, the run is unverified (issue 33), exit code 4
    _r, doc, out, _e = emulate(write(tmp_path, SDPA_DROPOUT), torch="2.5")
    assert (doc["outcome"], doc["exit_code"], out) == ("unverified", 4, "mps:0\n")
    assert [(u["op"], u["kind"]) for u in doc["unverified"]] == [("aten::isneginf.out", "callee_of_other_release")]
    unknown = [p for p in doc["predictions"] if p["outcome"] == "unknown"]
    assert [(p["op"], p["kind"]) for p in unknown] == [("aten::isneginf.out", "callee_of_other_release")]


CUDA_OR_CPU = '''\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
model = torch.nn.Linear(3, 1).to(device)
print(model(torch.randn(2, 3, device=device)).device)
'''


def test_device_selection_that_checks_only_cuda_runs_on_the_cpu(tmp_path):
    from mpsready.run.render import render_terminal

    _r, doc, out, _e = emulate(write(tmp_path, CUDA_OR_CPU))
    assert (doc["outcome"], doc["mps_used"], doc["predictions"], out) == ("completed", False, [], "cpu\n")
    assert "no tensor reached the emulated MPS device: on a Mac this program runs on the CPU" in render_terminal(doc)


AUTOCAST = '''\
import torch
m = torch.nn.Linear(4, 4).to("mps")
x = torch.randn(2, 4, device="mps")
with torch.autocast("mps", dtype=torch.float16):
    y = m(x)
    z = torch.nn.functional.mse_loss(y, torch.zeros_like(y))
y.float().sum().backward()
print(y.dtype, z.dtype, m.weight.grad.dtype)
'''


@pytest.mark.parametrize("torch_v,out,known", [("2.5", "torch.float16 torch.float32 torch.float32\n", True),
                                               ("2.13", "torch.float32 torch.float32 torch.float32\n", False)])
def test_mps_autocast_per_release(tmp_path, torch_v, out, known):
    # 2.5.1's AutocastMPS list: linear is lower_precision_fp, mse_loss fp32 (autocast_mode.cpp KERNEL_MPS)
    _r, doc, got, _e = emulate(write(tmp_path, AUTOCAST), torch=torch_v)
    assert (doc["outcome"], got, doc["autocast"]["used"], doc["autocast"]["list_known"]) == ("completed", out, True,
                                                                                              known)


def test_mps_autocast_does_not_exist_before_2_5(tmp_path):
    _r, doc, _o, err = emulate(write(tmp_path, AUTOCAST), torch="2.4")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"], ff["fixed_in"]) == ("autocast", "RuntimeError", 4,
                                                                                     "2.5.0")
    assert "RuntimeError: User specified an unsupported autocast device_type 'mps'" in err
