"""torch 2.2 on the emulated Mac and the Intel Mac (x86_64 with an AMD GPU) as a second machine (issue 33, round of
2026-12-07): each fact with its exact message, line and outcome. Facts read in the 2.2.2 macOS wheels (arm64 and
x86_64: the same yaml and MPS messages); docs/emulation.md "torch 2.2 and the Intel Mac"."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.cli import main
from mpsready.emulate.identity import _mac_answers
from mpsready.ops.judge import Judge

from .helpers import emulate, write

BF16 = '''\
import torch
dev = "mps"
x = torch.ones(3, device=dev)
print(x.sum().item())
w = torch.nn.Linear(2, 2).to(dev, torch.bfloat16)
print("never")
'''


@pytest.mark.parametrize("machine", ["arm64", "x86_64"])
def test_bfloat16_is_refused_on_2_2_on_every_macos(tmp_path, machine):
    # libtorch_cpu.dylib of 2.2.2 (both wheels): "BFloat16 is not supported on MPS" (no macOS 14 path before 2.3)
    _, doc, out, _ = emulate(write(tmp_path, BF16), torch="2.2", macos="15.1", machine=machine)
    ff = doc["first_failure"]
    assert (doc["outcome"], doc["target"]["torch"], doc["target"]["machine"], out) == (
        "failed", "2.2.2", machine, "3.0\n")
    assert (ff["kind"], ff["exception"], ff["message"], ff["location"]["line"], ff["dtype"]) == (
        "dtype", "TypeError", "BFloat16 is not supported on MPS", 5, "bfloat16")
    # on Apple silicon 2.3.0 fixes it (macOS 14+); no later release reaches an Intel Mac
    assert (ff["fixed_in"], ff.get("fixed_in_apple_silicon")) == (
        ("2.3.0", None) if machine == "arm64" else (None, "2.3.0"))


def test_bfloat16_on_2_3_still_needs_macos_14():
    assert Judge("2.3", "13.6").allocation("bfloat16").message == "MPS BFloat16 is only supported on MacOS 14 or newer"
    assert Judge("2.3", "14.4").allocation("bfloat16") is None
    assert Judge("2.2", "14.4").allocation("bfloat16").message == "BFloat16 is not supported on MPS"
    j = Judge("2.2", "14.4").allocation("complex64")
    assert (j.exception, j.message) == ("TypeError", "Complex types are unsupported on MPS")
    assert Judge("2.2", "14.4").allocation("float32") is None


CONV3D = '''\
import torch
conv = torch.nn.Conv3d(1, 2, 3).to("mps")
x = torch.randn(1, 1, 4, 4, 4, device="mps")
y = conv(x)
'''


def test_conv3d_is_refused_on_2_2_and_runs_on_2_3(tmp_path):
    # 2.2.2's binary: "Conv3D is not supported on MPS"; 2.3 has Conv3D from macOS 13.2
    _, doc, _, _ = emulate(write(tmp_path, CONV3D), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "RuntimeError", "Conv3D is not supported on MPS", 4)
    _, doc, _, _ = emulate(write(tmp_path, CONV3D), torch="2.3", macos="14.4")
    assert doc["outcome"] == "completed"


STD_MEAN = '''\
import torch
x = torch.randn(4, 5, device="mps")
s, m = torch.std_mean(x, dim=1)
'''


def test_std_mean_has_no_mps_kernel_on_2_2(tmp_path):
    # 2.2.2's yaml: std_mean.correction has no MPS key (the hf_whisper_std_mean case, torch 2.2); 2.3.0 has one
    _, doc, _, _ = emulate(write(tmp_path, STD_MEAN), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["exception"], ff["op"], ff["location"]["line"], ff["fixed_in"]) == (
        "failed", "NotImplementedError", "aten::std_mean.correction", 3, "2.3.0")
    assert "https://github.com/pytorch/pytorch/issues/77764" in ff["message"]


GRADSCALER = '''\
import torch
scaler = torch.amp.GradScaler("mps")
'''


def test_torch_amp_grad_scaler_does_not_exist_in_2_2(tmp_path):
    # torch/amp of the 2.2.2 wheel has no grad_scaler.py (torch.amp.GradScaler from 2.3.0)
    _, doc, _, _ = emulate(write(tmp_path, GRADSCALER), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "release_api", "AttributeError", "module 'torch.amp' has no attribute 'GradScaler'", 2)


def test_availability_floor_of_2_2_is_macos_12_3():
    assert (Judge("2.2", "12.2").available, Judge("2.2", "12.3").available) == (False, True)
    assert Judge("2.2", "12.2").unavailable_message() == (
        "The MPS backend is supported on MacOS 12.3+.Current OS version can be queried using `sw_vers`")


MACHINE = '''\
import platform
print(platform.machine(), platform.mac_ver()[2], platform.system())
'''


def test_intel_mac_identity(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, MACHINE), torch="2.2", macos="15.1", machine="x86_64")
    assert (doc["outcome"], out) == ("completed", "x86_64 x86_64 Darwin\n")
    answers = _mac_answers("15.1", "x86_64")
    assert (answers["platform"], answers["uname"].machine, answers["os_uname"].machine) == (
        "macOS-15.1-x86_64-i386-64bit", "x86_64", "x86_64")
    assert _mac_answers("14.4")["platform"] == "macOS-14.4-arm64-arm-64bit"


def test_intel_mac_is_2_2_only():
    with pytest.raises(ValueError, match=r"^an Intel Mac \(x86_64\) has no torch 2\.3\.1: the last macOS x86_64 "
                                         r"wheel is torch 2\.2\.2 \(use --torch 2\.2\)$"):
        Judge("2.3", "14.4", machine="x86_64")
    with pytest.raises(ValueError, match="unknown Mac machine 'ppc'"):
        Judge("2.2", "14.4", machine="ppc")
    assert Judge("2.2", "14.4", machine="x86_64").machine == "x86_64"


@pytest.mark.parametrize("argv,message", [
    (["run", "--mac", "intel", "--torch", "2.3", "--", "python", "x.py"],
     "an Intel Mac (x86_64) has no torch 2.3.1: the last macOS x86_64 wheel is torch 2.2.2 (use --torch 2.2)"),
    (["run", "--mac", "intel", "--torch", "2.2,2.3", "--", "python", "x.py"],
     "--mac intel goes with one release, --torch 2.2: the last macOS x86_64 wheel is torch 2.2.2"),
])
def test_run_refuses_an_intel_mac_past_2_2(tmp_path, monkeypatch, capsys, argv, message):
    (tmp_path / "x.py").write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err


SGD_FUSED = '''\
import torch
m = torch.nn.Linear(2, 2).to("mps")
opt = torch.optim.SGD(m.parameters(), lr=0.1, fused=True)
'''


def test_sgd_has_no_fused_argument_in_2_2(tmp_path):
    # torch/optim/sgd.py of the 2.2.2 wheel: no `fused` parameter (added in 2.3.0)
    _, doc, _, _ = emulate(write(tmp_path, SGD_FUSED), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "release_api", "TypeError", "SGD.__init__() got an unexpected keyword argument 'fused'", 3)
    _, doc, _, _ = emulate(write(tmp_path, SGD_FUSED), torch="2.3", macos="14.4")
    assert doc["outcome"] == "completed"  # 2.3 takes the argument; its step meets _fused_sgd_ (no MPS kernel)
