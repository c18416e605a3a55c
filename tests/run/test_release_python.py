"""The target release's Python-level behaviour (emulate/release_api.py, data/curated/python_checks.yaml):
exact texts of that release at the user's line, and the later release completing."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

FUSED = '''\
import torch
model = torch.nn.Linear(4, 2).to("mps")
opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
model(torch.randn(3, 4, device="mps")).sum().backward()
opt.step()
print("stepped")
'''


def test_fused_adam_refused_by_the_2_4_constructor(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, FUSED), torch="2.4")
    ff = doc["first_failure"]
    # torch/optim/adam.py __init__ + _get_fused_kernels_supported_devices (2.4.0)
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["location"]["line"], ff["fixed_in"]) == (
        "failed", "release_api", "RuntimeError", 3, "2.5.0")
    assert ff["message"] == ("`fused=True` requires all the params to be floating point Tensors of supported "
                             "devices: ['cuda', 'xpu', 'cpu', 'privateuseone'].")
    assert len(doc["failures"]) == 1 and out == ""


def test_fused_adam_2_3_lists_no_cpu(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, FUSED), torch="2.3")
    assert doc["first_failure"]["message"].endswith("supported devices: ['cuda', 'xpu', 'privateuseone'].")


def test_fused_adam_runs_from_2_5(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, FUSED), torch="2.5")
    ops = {p["op"]: p["outcome"] for p in doc["predictions"]}
    assert (doc["outcome"], out, ops.get("aten::_fused_adam_")) == ("completed", "stepped\n", "runs")


def test_capturable_adam_asserts_at_step(tmp_path):
    script = write(tmp_path, FUSED.replace("fused=True", "capturable=True"))
    _, doc, out, _ = emulate(script, torch="2.4")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"], out) == ("release_api", "AssertionError", 5, "")
    assert ff["message"] == ("If capturable=True, params and state_steps must be on supported devices: "
                             "['cuda', 'privateuseone', 'xla'].")
    _, doc, _, _ = emulate(script, torch="2.3")
    assert doc["first_failure"]["message"] == "If capturable=True, params and state_steps must be CUDA or XLA tensors."


CLIP = '''\
import torch
model = torch.nn.Linear(4, 2).to("mps")
model(torch.randn(3, 4, device="mps")).sum().backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
print("clipped")
'''


def test_clip_grad_norm_takes_the_per_tensor_path_of_a_mac(tmp_path):
    # foreach kernels are used only on _get_foreach_kernels_supported_devices (+cpu for clip_grad), never mps
    _, doc, out, _ = emulate(write(tmp_path, CLIP), torch="2.3")
    ops = {p["op"] for p in doc["predictions"]}
    assert (doc["outcome"], out) == ("completed", "clipped\n")
    assert not any(o.startswith("aten::_foreach") for o in ops) and "aten::linalg_vector_norm" in ops


SCALER = '''\
import torch
model = torch.nn.Linear(4, 2).to("mps")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("mps")
scaler.scale(model(torch.randn(3, 4, device="mps")).sum()).backward()
scaler.step(opt)
print("scaled")
'''


def test_grad_scaler_unscale_needs_float64_before_2_8(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, SCALER), torch="2.7")
    ff = doc["first_failure"]
    # torch/amp/grad_scaler.py unscale_ (2.7.0): self._scale.double().reciprocal().float()
    assert (ff["kind"], ff["exception"], ff["dtype"], ff["location"]["line"], out) == (
        "dtype", "TypeError", "float64", 6, "")


def test_grad_scaler_runs_on_2_8(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, SCALER), torch="2.8")
    assert (doc["outcome"], out) == ("completed", "scaled\n")


AUTOCAST_BF16 = '''\
import torch
x = torch.randn(2, 4, device="mps")
with torch.autocast("mps", dtype=torch.bfloat16):
    print(torch.is_autocast_enabled("mps"))
'''


@pytest.mark.parametrize("torch_v,macos,enabled,warning", [
    ("2.5", "14.4", "False", ("In MPS autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "MPS Autocast only supports dtype of torch.bfloat16 currently.")),
    ("2.6", "13.6", "False", ("In MPS autocast, but the target dtype torch.bfloat16 is not supported on macOS "
                              "versions below 14. Disabling autocast.")),
    ("2.6", "14.4", "True", None),
    ("2.10", "14.4", "True", None),  # 2.9+ need macOS 14 (global_rules.yaml min_macos)
])
def test_autocast_bfloat16_per_release(tmp_path, torch_v, macos, enabled, warning):
    _, doc, out, err = emulate(write(tmp_path, AUTOCAST_BF16), torch=torch_v, macos=macos)
    assert (doc["outcome"], out) == ("completed", enabled + "\n")
    if warning is None:
        assert "Disabling autocast" not in err
    else:
        assert f"UserWarning: {warning}\n" in err


SURFACE = '''\
import torch
print(hasattr(torch.mps, "compile_shader"), torch.backends.mps.is_available())
torch.manual_seed(0)
print(torch.mps.compile_shader)
'''


def test_mps_function_missing_in_the_target_raises_attribute_error(tmp_path):
    _, doc, out, err = emulate(write(tmp_path, SURFACE), torch="2.6")
    assert (doc["outcome"], out) == ("failed", "False True\n")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"]) == ("release_api", "AttributeError", 4)
    assert "AttributeError: module 'torch.mps' has no attribute 'compile_shader'\n" in err
    assert doc["exit_code"] == 1


def test_mps_function_of_the_target_works(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, SURFACE), torch="2.7")
    assert doc["outcome"] == "completed" and out.startswith("True True\n<function compile_shader")


def test_backends_mps_get_name_from_2_9(tmp_path):
    script = write(tmp_path, "import torch\nprint(callable(torch.backends.mps.get_name))\n")
    _, doc, _, err = emulate(script, torch="2.8")
    assert "AttributeError: module 'torch.backends.mps' has no attribute 'get_name'\n" in err
    assert doc["outcome"] == "failed"
    _, doc, out, _ = emulate(script, torch="2.9")
    assert (doc["outcome"], out) == ("completed", "True\n")


COMPILE = '''\
import torch
def f(x):
    return torch.nn.functional.gelu(x) * 2
g = torch.compile(f)
x = torch.randn(8, device="mps")
y = g(x)
print(y.device, bool((y == f(x)).all()))
'''


def test_compile_unsupported_before_2_7(tmp_path):
    _, doc, out, err = emulate(write(tmp_path, COMPILE), torch="2.6")
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["location"]["line"], ff["fixed_in"], out) == (
        "compile", "BackendCompilerFailed", 6, "2.7.0", "")
    # graph.py's init_wrapper_code asserts before the Scheduler is built (2.3.1-2.6.0 wheels; pytorch#125254)
    assert ff["message"] == "backend='inductor' raised:\nAssertionError: Device mps not supported"
    assert "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:" in err


def test_compile_experimental_2_7_warns(tmp_path):
    _, doc, out, err = emulate(write(tmp_path, COMPILE), torch="2.7")
    # 2.7's Metal back-end is a prototype: the region runs, but the emulated Mac cannot vouch for it (issue 33)
    assert (doc["outcome"], doc["exit_code"], out) == ("unverified", 4, "mps:0 True\n")
    assert [(u["kind"], u["location"]["line"]) for u in doc["unverified"]] == [("compile", 6)]
    assert err.count("torch.compile for Metal is an early protoype and might not work as expected.") == 1


def test_compile_supported_runs_eagerly_with_ops_judged(tmp_path):
    _, doc, out, err = emulate(write(tmp_path, COMPILE), torch="2.8")
    ops = {p["op"]: p["outcome"] for p in doc["predictions"]}
    assert (doc["outcome"], out, ops.get("aten::gelu")) == ("completed", "mps:0 True\n", "runs")
    assert "protoype" not in err


COMPILE_MODULE = '''\
import torch
model = torch.compile(torch.nn.Linear(4, 2).to("mps"))
print(type(model).__name__, list(model.state_dict())[0])
model(torch.randn(3, 4, device="mps"))
print("ran")
'''


def test_compiled_module_keeps_orig_mod_and_fails_at_the_call(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, COMPILE_MODULE), torch="2.5")
    ff = doc["first_failure"]
    assert (out, ff["kind"], ff["location"]["line"]) == ("OptimizedModule _orig_mod.weight\n", "compile", 4)
    _, doc, out, _ = emulate(write(tmp_path, COMPILE_MODULE), torch="2.13")
    assert (doc["outcome"], out) == ("completed", "OptimizedModule _orig_mod.weight\nran\n")


CPU_ONLY = '''\
import torch
model = torch.nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
g = torch.compile(lambda x: model(x).sum())
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = g(torch.randn(3, 4))
loss.backward()
opt.step()
print(torch.mps.device_count() if hasattr(torch.mps, "device_count") else "no device_count", "done")
'''


def test_cpu_only_program_is_unaffected(tmp_path):
    _, doc, out, err = emulate(write(tmp_path, CPU_ONLY), torch="2.3")
    assert (doc["outcome"], doc["failures"], doc["mps_used"], out) == ("completed", [], False,
                                                                       "no device_count done\n")
    assert "protoype" not in err and "Disabling" not in err


LOAD_NUMPY = """\
import numpy as np
import torch
torch.save(np.arange(3.0), "arr.pt")
print(torch.load("arr.pt").tolist())
"""


def test_torch_load_defaults_to_the_target_releases_weights_only(tmp_path, monkeypatch):
    # before 2.6 torch.load's weights_only defaults to False (torch/serialization.py 2.5.0): a pickled NumPy
    # array loads on that Mac; from 2.6 the default is True and the same call fails there as here
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    script = write(tmp_path, LOAD_NUMPY)
    _r, doc, out, _e = emulate(script, torch="2.5")
    assert (doc["outcome"], out) == ("completed", "[0.0, 1.0, 2.0]\n")
    _r, doc, _o, _e = emulate(script, torch="2.13")
    pe = doc["program_error"]
    assert (doc["outcome"], pe["exception"], pe["location"]["line"]) == ("inconclusive", "UnpicklingError", 4)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    _r, doc, _o, _e = emulate(script, torch="2.5")
    assert doc["outcome"] == "inconclusive"
