"""The per-release public names (ops/build/api_names.py, ops/api_names.py; builder h33f, issue 33): the reading of a
wheel's Python files with ast, its dynamic forms, the shipped table's shape and sources."""
from __future__ import annotations

import zipfile
from pathlib import Path

from mpsready.ops import api_names as runtime
from mpsready.ops.build import api_names as build


def _wheel(tmp_path: Path, files: dict[str, str], name: str = "torch-9.9.0-cp311-none-macosx_11_0_arm64.whl",
           lib: bytes = b"") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in files.items():
            zf.writestr(member, text)
        if lib:
            zf.writestr("torch/lib/libtorch_python.dylib", lib)
    return path


TORCH_INIT = '''\
import sys
from typing import TYPE_CHECKING
from torch._C import *
from .functional import *
from . import nn as nn
from torch.serialization import save, load as load
__all__ = ["Tensor"]
__all__ += ["extra"]

def public_fn(): pass
class Tensor: pass
if TYPE_CHECKING:
    from torch._C._VariableFunctions import *
for __name in dir(_C._VariableFunctions):
    globals()[__name] = getattr(_C._VariableFunctions, __name)
for __n in ("sqrt", "cos"):
    __sym = f"_sym_{__n}"
    globals()[__sym] = None
try:
    from .maybe import thing
except ImportError:
    thing = None

def _register():
    global late_name
    late_name = 1

def __getattr__(name):
    if name in {"lazy_mod"}:
        return 1
    raise AttributeError(name)
'''


def test_reading_a_wheel_resolves_star_imports_stubs_loops_and_getattr(tmp_path):
    w = _wheel(tmp_path, {
        "torch/__init__.py": TORCH_INIT,
        "torch/functional.py": "__all__ = ['einsum']\ndef einsum(): pass\ndef _private(): pass\n",
        "torch/_C/__init__.pyi": "def cpp_fn() -> None: ...\nclass Generator: ...\n",
        "torch/_C/_VariableFunctions.pyi": "def add(x): ...\ndef rms_norm(x): ...\n",
        "torch/nn/__init__.py": "from .modules import *\n",
        "torch/nn/modules/__init__.py": "from .linear import Linear\n__all__ = ['Linear']\n",
        "torch/nn/modules/linear.py": "class Linear: pass\n",
        "torch/mps/__init__.py": "names = {}\nglobals().update(names)\n",
        "torch/accelerator/__init__.py": "def current_accelerator(): pass\n",
        "torch/sub_only/__init__.py": "",
    })
    doc = build.read_wheel(w)
    assert doc["wheel"] == w.name and len(doc["sha256"]) == 64
    t = doc["modules"]["torch"]
    assert t["known"] is True
    # lazy_mod, extra, sqrt, cos: the module __getattr__ may answer any string constant of the file
    assert set(t["names"]) == {"sys", "TYPE_CHECKING", "cpp_fn", "Generator", "einsum", "nn", "save", "load",
                               "public_fn", "Tensor", "add", "rms_norm", "thing", "late_name", "lazy_mod", "extra",
                               "sqrt", "cos", "functional", "accelerator", "sub_only", "mps"}
    assert set(t["c_only"]) == {"cpp_fn", "Generator", "add", "rms_norm"}
    # a star import counts every public name of the module (its submodule `linear` too): never fewer than it binds
    assert doc["modules"]["torch.nn"]["names"] == ["Linear", "linear", "modules"]
    # globals().update(...) cannot be read: torch.mps is not fully known (nothing hidden there)
    assert (doc["modules"]["torch.mps"]["known"], doc["modules"]["torch.mps"]["why"]) == (
        False, ["globals().update(...) (line 2)"])
    # a module the release does not ship
    assert doc["modules"]["torch.amp"] == {"names": [], "known": True, "why": ["absent: no file in the wheel"],
                                          "absent": True}


def test_unreadable_dynamic_forms_make_the_module_not_fully_known(tmp_path):
    w = _wheel(tmp_path, {
        "torch/__init__.py": "import sys\nfor k in make():\n    globals()[k] = 1\n",
        "torch/nn/__init__.py": "from torch.not_shipped import *\n",
        "torch/optim/__init__.py": "import sys\nm = sys.modules[__name__]\nsetattr(m, name_of(), 1)\n",
        "torch/amp/__init__.py": "exec('x = 1')\n",
    })
    mods = build.read_wheel(w)["modules"]
    assert mods["torch"]["why"] == ["globals()[k] = ... (line 3)"]
    assert mods["torch.nn"]["why"] == ["from torch.not_shipped import *: no Python file or stub for torch.not_shipped"]
    assert mods["torch.optim"]["why"] == ["setattr on the module itself (line 3)"]
    assert mods["torch.amp"]["why"] == ["exec(...) at module level (line 1)"]
    assert not any(mods[m]["known"] for m in ("torch", "torch.nn", "torch.optim", "torch.amp"))


def _doc(release: str, torch_names: list[str], c_only: list[str], strings: list[str]) -> dict:
    modules = {m: {"names": [], "known": True, "why": [], "c_only": []} for m in build.MODULES}
    modules["torch"] = {"names": torch_names, "known": True, "why": [], "c_only": c_only}
    return {"wheel": f"torch-{release}.whl", "sha256": release * 2, "modules": modules, "library_strings": strings}


def test_table_is_diffs_against_the_first_release_and_checks_c_names_in_the_library():
    docs = {"2.2.2": _doc("2.2.2", ["ones", "zeros"], [], ["set_vital"]),
            "2.13.0": _doc("2.13.0", ["ones", "set_vital", "accelerator"], ["set_vital"], [])}
    table = build.build_table(docs)
    # set_vital: only 2.13's stubs list it, 2.2.2's libtorch_python holds the string: counted present in 2.2.2
    assert table["base_names"]["torch"] == ["ones", "set_vital", "zeros"]
    assert table["diff"] == {"2.13.0": {"torch": ["+accelerator", "-zeros"]}}
    assert table["wheels"]["2.2.2"] == {"name": "torch-2.2.2.whl", "sha256": "2.2.22.2.2"}
    got = runtime.lacking("2.2.2", "2.13.0+cpu", table)
    assert got is not None and got.names == {"torch": frozenset({"accelerator"})}
    assert got.can_say("torch", "accelerator") and not got.can_say("torch", "never_read")
    assert runtime.lacking("2.1.0", "2.13.0", table) is None
    assert build.coverage(table)[-1].split()[:2] == ["2.13.0", "0"]
    assert build.coverage(table)[1].split()[:2] == ["2.2.2", "1"]


def test_shipped_table_sources_and_known_facts():
    t = runtime.load()
    assert t is not None and t["schema"] == build.SCHEMA
    assert t["releases"] == list(build.RELEASES) and t["modules"] == list(build.MODULES)
    assert t["wheels"]["2.13.0"]["name"] == "torch-2.13.0-cp311-cp311-macosx_14_0_arm64.whl"
    assert all(len(w["sha256"]) == 64 for w in t["wheels"].values())
    assert t["unknown"] == {}
    first = {n: next(r for r in t["releases"] if n in runtime.release_names(t, r, m))
             for m, n in (("torch", "accelerator"), ("torch.nn", "RMSNorm"), ("torch.nn.functional", "rms_norm"),
                          ("torch.amp", "GradScaler"), ("torch.mps", "compile_shader"), ("torch.nn", "Buffer"),
                          ("torch.backends.mps", "get_name"), ("torch", "uint16"))}
    # the same releases as python_checks.yaml mps_api (hand-kept, sourced) where both say
    assert first == {"accelerator": "2.6.0", "RMSNorm": "2.4.0", "rms_norm": "2.4.0", "GradScaler": "2.3.0",
                     "compile_shader": "2.7.0", "Buffer": "2.5.0", "get_name": "2.9.0", "uint16": "2.3.0"}


def test_names_the_installed_modules_functions_read_as_globals_are_never_hidden():
    docs = {"2.2.2": _doc("2.2.2", ["ones"], [], []),
            "2.13.0": _doc("2.13.0", ["ones", "importlib", "accelerator"], [], [])}
    docs["2.13.0"]["modules"]["torch"]["globals"] = ["importlib", "ones"]
    table = build.build_table(docs)
    assert table["read_as_globals"] == {"2.13.0": {"torch": ["importlib"]}}  # only names some release lacks
    got = runtime.lacking("2.2.2", "2.13.0", table)
    assert got is not None
    assert (got.names, got.global_reads) == ({"torch": frozenset({"accelerator"})}, {"torch": frozenset({"importlib"})})
    assert (got.has("torch", "ones"), got.has("torch", "importlib"), got.has("torch", "accelerator")) == (
        True, False, False)


def test_the_table_agrees_with_every_hand_kept_name_on_every_release():
    # python_checks.yaml mps_api (hand-kept, sourced) and the wheels' reading say the same, release by release
    from mpsready.ops.api_judge import _doc
    from mpsready.ops.build import curated

    t = runtime.load()
    assert t is not None
    disagree = []
    for r in t["releases"]:
        got = runtime.lacking(r, "2.13.0", t)
        assert got is not None
        for e in _doc()["mps_api"]:
            if got.can_say(e["module"], e["name"]) and got.has(e["module"], e["name"]) != curated.applies(e, r):
                disagree.append((r, e["module"], e["name"]))
    assert disagree == []
