"""``torch.__version__`` as the target release's for the program's own files (builder h41, issue 33, 2026-12-07):
under ``--torch 2.5`` a program read the installed build's ``2.13.0+cpu`` and took the newer release's branch
(``Version(torch.__version__) >= Version("2.6")`` then ``torch.accelerator``: a false failure). PyTorch's and
mpsready's own files keep the installed string (emulate/release_api.py ``_version_answers``); ``platform.processor()``
is the Mac's (emulate/identity.py)."""
from __future__ import annotations

import sys

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write

PRINT = '''\
import torch
print(torch.__version__, torch.version.__version__, type(torch.__version__).__name__)
from torch import __version__ as v
print(v, v >= (2, 5), v < "2.6", getattr(torch, "__version__"))
'''


def test_the_program_reads_the_targets_version(tmp_path):
    import torch

    installed = torch.version.__version__
    _, doc, out, _ = emulate(write(tmp_path, PRINT), torch="2.5", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "2.5.1 2.5.1 TorchVersion\n2.5.1 True True 2.5.1\n")
    assert doc["target"]["torch_version_seen"] == {"value": "2.5.1", "installed": installed, "read": True}
    # after the run this process's torch is itself again
    assert torch.__version__ == installed and "__version__" in vars(torch) and "__getattr__" in vars(torch)
    assert "__version__" in vars(torch.version) and "__getattr__" not in vars(torch.version)


def test_a_program_that_never_reads_it_is_recorded_as_such(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, "import torch\nprint(torch.ones(1, device='mps').device)\n"), torch="2.2",
                           macos="14.4")
    assert doc["target"]["torch_version_seen"]["value"] == "2.2.2"
    assert doc["target"]["torch_version_seen"]["read"] is False


GATED = '''\
import torch
from packaging.version import Version
from torch.torch_version import TorchVersion
new = [Version(torch.__version__) >= Version("2.6"),
       tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 6),
       torch.__version__ >= TorchVersion("2.6"),
       torch.__version__.startswith("2.1")]
print(new)
if Version(torch.__version__.split("+")[0]) >= Version("2.6"):
    dev = torch.accelerator.current_accelerator()
else:
    dev = torch.device("mps")
print(torch.ones(2, device=dev).device)
'''


def test_a_version_gated_torch_accelerator_takes_the_targets_branch(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, GATED), torch="2.5", macos="15.5")
    assert (doc["outcome"], doc["first_failure"], out) == ("completed", None, "[False, False, False, False]\nmps:0\n")
    _, doc, out, _ = emulate(write(tmp_path, GATED), torch="2.13", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "[True, True, True, True]\nmps:0\n")


INTERNALS = '''\
import io, torch
import torch.serialization as ser
print(ser.check_module_version_greater_or_equal(torch, (2, 10)), torch.__version__)
x = torch.arange(3.0, device="mps")
buf = io.BytesIO()
torch.save({"x": x}, buf)
buf.seek(0)
print(torch.load(buf, weights_only=True)["x"].tolist())
f = torch.compile(lambda t: t * 2)
print(f(x.cpu()).tolist())  # CPU: 2.5 cannot compile for MPS (a predicted failure)
'''


def test_pytorchs_own_code_keeps_the_installed_version(tmp_path):
    # torch.serialization compares torch.__version__ itself (check_module_version_greater_or_equal): it reads 2.13
    _, doc, out, _ = emulate(write(tmp_path, INTERNALS), torch="2.5", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "True 2.5.1\n[0.0, 1.0, 2.0]\n[0.0, 2.0, 4.0]\n")


LIBRARY = '''\
import torch


def version():
    return torch.__version__
'''


def test_a_library_reads_the_installed_version_and_a_look_alike_is_untouched(tmp_path):
    import torch

    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "verlib.py").write_text(LIBRARY)
    (tmp_path / "mymod.py").write_text("__version__ = '0.3.1'\n")
    script = write(tmp_path, f"import sys\nsys.path.insert(0, {str(site)!r})\nimport verlib, mymod, torch\n"
                             "__version__ = '1.0'\n"
                             "print(verlib.version(), torch.__version__, __version__, mymod.__version__)\n")
    _, doc, out, _ = emulate(script, torch="2.5", macos="15.5")
    assert (doc["outcome"], out) == ("completed", f"{torch.__version__} 2.5.1 1.0 0.3.1\n")


def test_the_terminal_says_the_version_was_the_targets():
    from mpsready.run.render import render_terminal

    doc = {"target": {"torch": "2.5.1", "macos": "15.5", "fallback": False, "machine": "arm64",
                      "torch_version_seen": {"value": "2.5.1", "installed": "2.13.0+cpu", "read": True}},
           "outcome": "completed", "steps": 0, "seconds": 0.0, "failures": [], "predictions": [], "fallbacks": [],
           "limits": []}
    text = render_terminal(doc)
    assert ("  your files read torch.__version__ == '2.5.1': the target's (predicted), not this build's "
            "'2.13.0+cpu'") in text.splitlines()


@pytest.mark.parametrize("machine,torch,expected", [("arm64", "2.13", "arm arm Darwin\n"),
                                                      ("x86_64", "2.2", "i386 i386 Darwin\n")])
def test_platform_processor_is_the_macs(tmp_path, machine, torch, expected):
    script = write(tmp_path, "import platform\nprint(platform.processor(), platform.uname().processor, platform.system())\n")
    _, doc, out, _ = emulate(script, torch=torch, macos="14.4", machine=machine)
    assert (doc["outcome"], out) == ("completed", expected)
    import platform

    assert sys.platform == "linux" and not hasattr(platform.processor, "__wrapped__")


def test_dir_of_torch_lists_the_targets_names(tmp_path):
    """h40: dir(torch) lacked __version__ during a run; it also listed names the target lacks."""
    import torch

    prog = "import torch\nnames = dir(torch)\nprint('__version__' in names, 'accelerator' in names, 'ones' in names)\n"
    _, doc, out, _ = emulate(write(tmp_path, prog), torch="2.5", macos="15.5")
    assert (doc["outcome"], out) == ("completed", "True False True\n")
    assert "__dir__" not in vars(torch) and "accelerator" in dir(torch)  # undone after the run
