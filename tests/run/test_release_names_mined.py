"""Names a target release lacks, from the mined table (ops/data/mined/api_names.json.gz, read by
ops/build/api_names.py from each release's macOS arm64 wheel; builder h33f, issue 33), not from a hand list:
``torch.nn.Buffer`` (first in 2.5.0's torch/nn/__init__.py), ``torch.optim.Adafactor`` (2.5.0),
``torch.get_default_device`` (2.3.0). None of them is in python_checks.yaml ``mps_api``."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

BUFFER = '''\
import torch
m = torch.nn.Module()
m.register_buffer("b", torch.zeros(2))
m.b2 = torch.nn.Buffer(torch.ones(2, device="mps"))
print(m.b2.device)
'''


def test_a_name_added_in_a_later_release_is_the_releases_attribute_error(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, BUFFER), torch="2.4", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], out) == ("failed", "")
    assert (ff["mac"], ff["kind"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        True, "release_api", "AttributeError", "module 'torch.nn' has no attribute 'Buffer'", 4)


def test_a_name_the_target_has_completes(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, BUFFER), torch="2.5", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "mps:0\n")


ADAFACTOR = '''\
import torch
p = torch.nn.Parameter(torch.ones(2, 2, device="mps"))
from torch.optim import Adafactor
print("never")
'''


def test_from_import_of_a_mined_name_is_the_releases_import_error(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, ADAFACTOR), torch="2.4", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], out) == ("failed", "")
    assert (ff["kind"], ff["exception"], ff["location"]["line"]) == ("release_api", "ImportError", 3)
    assert ff["message"].startswith("cannot import name 'Adafactor' from 'torch.optim' (")
    _, doc, out, _ = emulate(write(tmp_path, ADAFACTOR), torch="2.5", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "never\n")


DEFAULT_DEVICE = '''\
import torch
torch.set_default_device("mps")
print(torch.get_default_device())
'''


def test_a_torch_name_of_2_3_on_2_2(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, DEFAULT_DEVICE), torch="2.2", macos="14.4")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["exception"], ff["message"], ff["location"]["line"]) == (
        "failed", "AttributeError", "module 'torch' has no attribute 'get_default_device'", 3)
    _, doc, out, _ = emulate(write(tmp_path, DEFAULT_DEVICE), torch="2.3", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "mps:0\n")


STAR = '''\
import torch
from torch.nn import *
print("Buffer" in dir(), callable(Linear))
'''


def test_a_star_import_binds_the_targets_names(tmp_path):
    # the program's `from torch.nn import *` reads the target's __all__ (without Buffer on 2.4), never fails on it
    _, doc, out, _ = emulate(write(tmp_path, STAR), torch="2.4", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "False True\n")
    _, doc, out, _ = emulate(write(tmp_path, STAR), torch="2.5", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "True True\n")


LIBRARY = '''\
import torch


def make():  # a library written for the installed torch (2.13 here)
    return torch.nn.Buffer(torch.ones(2)), torch.get_default_device()
'''


def test_a_library_keeps_seeing_the_installed_torch(tmp_path):
    import torch

    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "mined_lib.py").write_text(LIBRARY)
    script = write(tmp_path, f"import sys\nsys.path.insert(0, {str(site)!r})\nimport mined_lib\n"
                             "b, d = mined_lib.make()\nprint(type(b).__name__, d)\n")
    _, doc, out, _ = emulate(script, torch="2.2", macos="14.4")
    assert (doc["outcome"], out) == ("completed", "Tensor cpu\n")  # nn.Buffer(...) gives the tensor
    assert "Buffer" in vars(torch.nn) and "__getattr__" not in vars(torch.nn)  # undone after the run


def _table(unknown: dict) -> dict:
    return {"modules": ["torch.nn"], "releases": ["2.4.0", "2.13.0"], "base": "2.4.0",
            "base_names": {"torch.nn": ["Linear"]}, "diff": {"2.13.0": {"torch.nn": ["+Buffer", "+RMSNorm"]}},
            "unknown": unknown, "absent": {}, "wheels": {"2.4.0": {"name": "w.whl", "sha256": "0" * 64}}}


def test_a_module_not_fully_known_never_hides_and_the_hand_list_stays(monkeypatch):
    from mpsready.emulate import release_api
    from mpsready.ops import api_names

    hand = {"torch.nn": frozenset({"RMSNorm"}), "torch.mps": frozenset({"compile_shader"})}
    monkeypatch.setattr(api_names, "load", lambda: _table({}))
    assert release_api._missing_names("2.4.0", hand) == {"torch.nn": frozenset({"Buffer", "RMSNorm"}),
                                                          "torch.mps": frozenset({"compile_shader"})}
    # torch.nn not fully known in the target (a globals() loop the reading cannot bound): nothing mined is hidden
    # there, the hand-listed RMSNorm still is
    monkeypatch.setattr(api_names, "load", lambda: _table({"2.4.0": {"torch.nn": "globals().update(...)"}}))
    assert release_api._missing_names("2.4.0", hand) == {"torch.nn": frozenset({"RMSNorm"}),
                                                          "torch.mps": frozenset({"compile_shader"})}
    # nor where the installed release's module is the one not fully known
    monkeypatch.setattr(api_names, "load", lambda: _table({"2.13.0": {"torch.nn": "exec(...)"}}))
    assert release_api._missing_names("2.4.0", hand)["torch.nn"] == frozenset({"RMSNorm"})
    # a release the table lacks: the hand list alone
    monkeypatch.setattr(api_names, "load", lambda: _table({}))
    assert release_api._missing_names("2.1.0", hand) == hand


def test_a_name_torchs_own_functions_read_as_a_global_stays():
    # 2.3's torch/__init__.py binds no `importlib`; 2.13's torch.__getattr__ reads it as a global to import its lazy
    # submodules (torch._dynamo, torch.onnx): taken out of torch's __dict__ it raised NameError in the program (fresh
    # report nnunet_compile_device_mps_23 ended inconclusive on "name 'importlib' is not defined")
    import torch

    from mpsready.emulate import release_api
    from mpsready.emulate.torch_api import _Patches
    from mpsready.ops.api_names import lacking

    got = lacking("2.3.0", torch.__version__)
    assert got is not None and "importlib" in got.global_reads["torch"] and "importlib" not in got.names["torch"]
    assert not got.has("torch", "importlib") and got.has("torch", "ones")
    p = _Patches()
    release_api._install_surface(p, release_api._missing_names("2.3.0", {}), lambda code: True)
    try:
        held = ("importlib" in vars(torch), "accelerator" in vars(torch))
    finally:
        p.undo()
    assert held == (True, False)
    assert "accelerator" in vars(torch)
