"""Issue 32, fourth round: the classes of the held-out misses of the second 2026-12 set, each as a rule over the code
read under the Mac's facts, with a look-alike negative that must keep limiting the Mac. The fixtures are written
for these tests and copy no repository."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"
REQ = {"requirements.txt": "torch\n"}


def _verdict(r):
    return r.outlook.value, [(f.code, f.location.path, f.location.line) for f in r.limiting]


# ---------------------------------------------------------------- 1. a device default every main-path call overrides
_LIB = TORCH + ("\n\ndef build(size, device='cuda'):\n    return torch.zeros(size, device=device)\n")
_PICK = "dev = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"


def test_a_default_the_main_path_always_overrides_does_not_limit_whatever_tests_and_notebooks_do(write_project):
    r = scan_path(write_project({
        **REQ, "lib/__init__.py": "", "lib/ops.py": _LIB,
        "train.py": TORCH + "from lib.ops import build\n" + _PICK + "print(build(3, device=dev))\n",
        # a test and a demo notebook omit it: neither is the main path
        "tests/test_ops.py": "from lib.ops import build\n\n\ndef test_build():\n    assert build(2).shape == (2,)\n",
        "demo.ipynb": '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null, '
                      '"source": ["from lib.ops import build\\n", "build(4)\\n"]}], "metadata": {}, "nbformat": 4, '
                      '"nbformat_minor": 5}',
    }))
    assert [row for row in rows(r) if row[0] == "API103"] == [("API103", "lib/ops.py", 4, "info")]
    assert _verdict(r) == ("runs_on_mac", [])
    f = next(f for f in r.findings if f.code == "API103")
    assert f.evidence["default_unused"] == ["train.py:4"]


def test_a_main_path_call_that_omits_the_device_keeps_the_default_limiting(write_project):
    r = scan_path(write_project({
        **REQ, "lib/__init__.py": "", "lib/ops.py": _LIB,
        "train.py": TORCH + "from lib.ops import build\n" + _PICK + "print(build(3, device=dev), build(2))\n",
    }))
    assert _verdict(r) == ("mac_for_dev", [("API103", "lib/ops.py", 4)])


def test_a_default_no_main_path_call_names_is_not_seen_to_run(write_project):
    # the class is built through a registry (a string): no call of it by name, a subclass and an annotation only
    lib = TORCH + ("\n\nclass Trainer:\n    def __init__(self, plan, device=torch.device('cuda', 0)):\n"
                   "        self.device = device\n\n\nclass LongTrainer(Trainer):\n    pass\n\n\n"
                   "def run(t: Trainer):\n    return isinstance(t, Trainer)\n")
    train = TORCH + ("import importlib\nfrom lib.trainers import run\n" + _PICK +
                     "cls = getattr(importlib.import_module('lib.trainers'), 'LongTrainer')\n"
                     "print(run(cls('plan', device=torch.device(dev))))\n")
    r = scan_path(write_project({**REQ, "lib/__init__.py": "", "lib/trainers.py": lib, "train.py": train}))
    f = next(f for f in r.findings if f.code == "API103")
    assert (f.location.path, f.location.line, f.severity.value, f.evidence["default_unseen"]) == \
        ("lib/trainers.py", 5, "info", True)
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_default_of_the_readmes_api_stays_a_blocker_when_nothing_calls_it(write_project):
    # look-alike: the README's usage imports the class: its users call it, so the default stays a blocker whose
    # remedy is the keyword the user passes (the README API rule), never info
    lib = TORCH + "\n\nclass Model:\n    def __init__(self, device='cuda'):\n        self.device = device\n"
    r = scan_path(write_project({**REQ, "lib/__init__.py": "", "lib/model.py": lib,
                                 "README.md": "```python\nfrom lib.model import Model\nm = Model()\n```\n"}))
    assert [row for row in rows(r) if row[0] == "API103"] == [("API103", "lib/model.py", 5, "blocker")]
    # round 7: the keyword the user passes is an edit in the user's code, not a flag
    assert (r.outlook.value, r.flags, [e.what for e in r.edits]) == \
        ("mac_for_dev", [], ["pass Model(..., device='mps') in the code that calls it, or make its default pick MPS"])


# ---------------------------------------------------------------- 2. availability helpers and decided loops
_FLASH = TORCH + ("from transformers.utils import {helper}\n\nif {helper}():\n"
                  "    from flash_attn import flash_attn_func\n\n\ndef main():\n    print(torch.ones(2))\n\n\n"
                  "if __name__ == '__main__':\n    main()\n")


def test_flash_attn_imported_only_when_transformers_says_it_is_available_never_runs_on_a_mac(write_project):
    r = scan_path(write_project({**REQ, "train.py": _FLASH.format(helper="is_flash_attn_2_available")}))
    f = next(f for f in r.findings if f.code == "DEP107")
    assert (f.location.line, f.severity.value, f.evidence["mac_never"]["test"]) == \
        (5, "info", "is_flash_attn_2_available()")
    assert _verdict(r) == ("runs_on_mac", [])


def test_flash_attn_under_another_helper_still_limits(write_project):
    # look-alike: transformers' torch check is True on a Mac
    r = scan_path(write_project({**REQ, "train.py": _FLASH.format(helper="is_torch_available")}))
    assert _verdict(r) == ("mac_for_dev", [("DEP107", "train.py", 5)])


_LOOP = TORCH + ("\n\ndef warm(devices):\n    for device in devices:\n        if device.type {op} 'cuda':\n"
                 "            continue\n        with torch.cuda.device(device):\n"
                 "            torch.zeros(1, device=device)\n\n\n"
                 "def main():\n    warm([torch.device('mps' if torch.backends.mps.is_available() else 'cpu')])\n\n\n"
                 "if __name__ == '__main__':\n    main()\n")


def test_the_rest_of_a_loop_body_after_a_continue_for_non_cuda_devices_never_runs_on_a_mac(write_project):
    r = scan_path(write_project({**REQ, "train.py": _LOOP.format(op="!=")}))
    assert [row for row in rows(r) if row[0] == "API102"] == [("API102", "train.py", 8, "info")]
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_loop_that_skips_cuda_devices_runs_the_rest_on_a_mac(write_project):
    r = scan_path(write_project({**REQ, "train.py": _LOOP.format(op="==")}))
    assert _verdict(r) == ("mac_for_dev", [("API102", "train.py", 8)])


_ALL = TORCH + ("\n\ndef free_cuda(devices):\n    return min(torch.cuda.mem_get_info(d)[0] for d in devices)\n\n\n"
                "def budget(devices):\n    if {cond}:\n        return free_cuda(devices)\n    return 0\n\n\n"
                "if __name__ == '__main__':\n"
                "    print(budget([torch.device('mps' if torch.backends.mps.is_available() else 'cpu')]))\n")


def test_a_function_called_only_when_all_devices_are_cuda_never_runs_on_a_mac(write_project):
    r = scan_path(write_project({**REQ, "train.py": _ALL.format(cond="all(device.type == 'cuda' for device in devices)")}))
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_function_called_when_any_device_is_mps_runs_on_a_mac(write_project):
    # look-alike: `== 'mps'` over devices that are mps or cpu is not decided: the call may run
    r = scan_path(write_project({**REQ, "train.py": _ALL.format(cond="any(device.type == 'mps' for device in devices)")}))
    assert _verdict(r) == ("mac_for_dev", [("API102", "train.py", 5)])


# ---------------------------------------------------------------- 3. optional parts: the Mac's file, a kernel off
_ORT = {"requirements.txt": "torch\nonnxruntime-gpu==1.18.0\n", "infer.py": TORCH + "print(torch.ones(1))\n"}


def test_the_macs_own_requirement_file_makes_the_other_platforms_file_optional(write_project):
    r = scan_path(write_project({**_ORT, "requirements_macOS.txt": "torch\nonnxruntime\n"}))
    assert _verdict(r) == ("runs_on_mac", [])
    assert [(o["path"], o["code"], o["why"]) for o in r.optional] == \
        [("requirements.txt", "DEP101", "a Mac installs requirements_macOS.txt instead")]


def test_without_a_mac_file_the_gpu_runtime_limits(write_project):
    r = scan_path(write_project({**_ORT, "requirements-dev.txt": "pytest\n"}))
    assert _verdict(r) == ("mac_for_dev", [("DEP101", "requirements.txt", 2)])


def _vocoder(default: str) -> dict[str, str]:
    return {
        **REQ,
        "voc/__init__.py": "",
        "voc/kernel/__init__.py": "",
        "voc/kernel/build.py": "from torch.utils import cpp_extension\n\n\ndef load():\n"
                               "    return cpp_extension.load(name='act', sources=['act.cu'])\n",
        "voc/kernel/act.cu": "__global__ void act(float* x) {}\n",
        "voc/model.py": TORCH + ("\n\nclass Vocoder(torch.nn.Module):\n    def __init__(self, h):\n"
                                 "        super().__init__()\n        self.h = h\n"
                                 f"        if self.h.get('use_cuda_kernel', {default}):\n"
                                 "            from voc.kernel.build import load\n            self.act = load()\n"
                                 "        else:\n            self.act = torch.nn.SiLU()\n\n"
                                 "    def forward(self, x):\n        return self.act(x)\n"),
        "infer.py": TORCH + "from voc.model import Vocoder\nprint(Vocoder({})(torch.ones(2)))\n",
    }


def test_a_cuda_kernel_built_only_behind_a_switch_off_by_default_is_off_the_main_path(write_project):
    r = scan_path(write_project(_vocoder("False")))
    ext = next(f for f in r.findings if f.code == "EXT101")
    assert (ext.location.path, ext.output_evidence().get("reach")) == ("voc/kernel/act.cu", "off_main_path")
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_cuda_kernel_built_behind_a_switch_on_by_default_limits(write_project):
    r = scan_path(write_project(_vocoder("True")))
    assert r.outlook.value == "stay_on_cuda"
    assert ("EXT101", "voc/kernel/act.cu", None) in _verdict(r)[1]


# ---------------------------------------------------------------- 4. a root with entries is one project
def _rasterized(root_entry: bool) -> dict[str, str]:
    files = {
        "render/__init__.py": TORCH + "from diff_gaussian_rasterization import GaussianRasterizer\n\n\n"
                              "def render(cam):\n    return GaussianRasterizer(cam)(torch.ones(3))\n",
        "raster/setup.py": "from setuptools import setup\nsetup(name='diff_gaussian_rasterization')\n",
        "raster/raster.cu": "__global__ void r(float* x) {}\n",
        "inpaint/requirements.txt": "torch\n",
        "inpaint/run.py": TORCH + "print(torch.ones(1))\n",
    }
    if root_entry:
        files["train.py"] = TORCH + "from render import render\nprint(render(None))\n"
    return files


def test_a_root_with_its_own_entry_script_is_one_project_whatever_its_folders_declare(write_project):
    r = scan_path(write_project(_rasterized(True)))
    assert r.subprojects == []
    assert _verdict(r) == ("stay_on_cuda", [("EXT101", "raster/raster.cu", None), ("DEP107", "render/__init__.py", 2)])


def test_folders_that_declare_their_own_projects_without_a_root_entry_stay_a_collection(write_project):
    r = scan_path(write_project(_rasterized(False)))
    assert sorted(s.path for s in r.subprojects) == ["inpaint", "raster"]


# ---------------------------------------------------------------- 5. a handler whose try body cannot raise on a Mac
_TRY = TORCH + ("\n\ndef pick():\n    try:\n{body}"
                "    except Exception:\n        device = 'cuda'\n    return device\n\n\n"
                "if __name__ == '__main__':\n    print(torch.ones(2, device=pick()))\n")


def test_the_except_handler_of_a_try_that_cannot_raise_on_a_mac_never_runs(write_project):
    body = ("        if torch.backends.mps.is_available():\n            device = 'mps'\n"
            "            providers = ['CPUExecutionProvider']\n        else:\n            device = 'cuda'\n")
    r = scan_path(write_project({**REQ, "train.py": _TRY.format(body=body)}))
    assert [row for row in rows(r) if row[0] == "API103"] == [("API103", "train.py", 10, "info"),
                                                               ("API103", "train.py", 12, "info")]
    f = next(f for f in r.findings if f.location.line == 12)
    assert f.evidence["mac_never"]["facts"] == ["torch.backends.mps.is_available() is True"]
    assert _verdict(r) == ("runs_on_mac", [])


def test_the_except_handler_of_a_try_that_calls_out_may_run(write_project):
    # look-alike: the body calls the project's own probe, which may raise: the handler's CUDA literal stays
    body = "        device = probe()\n"
    src = _TRY.format(body=body).replace("\n\ndef pick", "\n\ndef probe():\n    return 'mps'\n\n\ndef pick")
    r = scan_path(write_project({**REQ, "train.py": src}))
    assert _verdict(r) == ("mac_for_dev", [("API103", "train.py", 12)])


# ---------------------------------------------------------------- 6. helpers only code off the main path calls
def _helpers(main_calls_it: bool) -> dict[str, str]:
    use = "print(to_gpu({'x': torch.ones(1)}))\n" if main_calls_it else "print(torch.ones(1))\n"
    return {
        **REQ,
        "pkg/__init__.py": "",
        "pkg/util.py": TORCH + "\n\ndef to_gpu(batch):\n    return {k: v.cuda() for k, v in batch.items()}\n\n\n"
                               "def step(batch):\n    return to_gpu(batch)\n",
        "pkg/model.py": TORCH + "from pkg.util import to_gpu, step\n\n\n"
                                "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
        "experiments/train_big.py": TORCH + "from pkg.util import step\nprint(step({'x': torch.ones(1)}))\n",
        "demo.py": TORCH + "from pkg.model import Net\nfrom pkg.util import to_gpu\n" + use,
        "README.md": "```\npython demo.py\n```\n",
    }


def test_a_helper_that_only_scripts_off_the_main_path_call_is_off_it(write_project):
    r = scan_path(write_project(_helpers(False)))
    f = next(f for f in r.findings if f.code == "API101")
    assert (f.location.path, f.location.line, f.output_evidence()["reach"], f.evidence["off_path_callers"]) == \
        ("pkg/util.py", 5, "off_main_path", "to_gpu() is called only from experiments/train_big.py")
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_helper_the_main_path_calls_limits(write_project):
    r = scan_path(write_project(_helpers(True)))
    assert _verdict(r) == ("mac_for_dev", [("API101", "pkg/util.py", 5)])


# ---------------------------------------------------------------- 7. a root script the main entry imports
_EVAL = TORCH + ("import argparse\n\n\ndef score(model, device):\n    return model.to(device)(torch.ones(2, 2))\n\n\n"
                 "if __name__ == '__main__':\n    p = argparse.ArgumentParser()\n"
                 "    p.add_argument('--device', default='cuda')\n    a = p.parse_args()\n"
                 "    print(score(torch.nn.Linear(2, 2), a.device))\n")
_TRAIN = TORCH + ("from evalset import score\n"
                  "device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
                  "print(score(torch.nn.Linear(2, 2), device))\n")


def test_the_main_block_of_a_root_script_the_main_entry_imports_is_a_demo(write_project):
    # the training script imports the evaluation script for its helpers: the evaluation's own command (a CUDA
    # default) is not the main command, and the outlook prints no command for it
    r = scan_path(write_project({**REQ, "evalset.py": _EVAL, "train_model.py": _TRAIN}))
    f = next(f for f in r.findings if f.code == "API103")
    assert (f.location.path, f.location.line, f.output_evidence()["reach"]) == ("evalset.py", 11, "module_demo")
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", [], [])


def test_a_root_script_without_a_main_named_one_beside_it_is_a_main_entry(write_project):
    # look-alike: no main-named script: every root script is a main entry, so its CUDA default needs the flag
    r = scan_path(write_project({**REQ, "evalset.py": _EVAL, "model_fit.py": _TRAIN}))
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", ["--device mps"],
                                                      ["python evalset.py --device mps"])


# ---------------------------------------------------------------- 8. uses that are no calls; a multi-process caller
_PRED = TORCH + ("import functools\n\n\nclass Predictor:\n    def __init__(self, steps, device=torch.device('cuda')):\n"
                 "        self.device = device\n\n    @staticmethod\n    def folds(path):\n        return [0]\n\n\n"
                 "@functools.lru_cache(maxsize=2)\ndef window(size, device=torch.device('cuda', 0)):\n"
                 "    return torch.ones(size, device=device)\n")


def _predict(ddp_call: str) -> dict[str, str]:
    return {
        **REQ, "lib/__init__.py": "", "lib/predict.py": _PRED,
        "train.py": TORCH + ("from lib.predict import Predictor, window\n" + _PICK +
                             "print(Predictor.folds('x'), Predictor(3, device=torch.device(dev)))\n"
                             "print(window(2, device=torch.device(dev)))\nwindow.cache_clear()\n\n\n"
                             f"def {ddp_call}(rank):\n    print(Predictor(3), rank)\n"),
    }


def test_class_members_cache_clear_and_a_multi_process_caller_leave_the_defaults_unused(write_project):
    r = scan_path(write_project(_predict("run_ddp")))
    assert [row for row in rows(r) if row[0] == "API103"] == [("API103", "lib/predict.py", 6, "info"),
                                                               ("API103", "lib/predict.py", 15, "info")]
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_one_process_function_that_omits_the_device_keeps_it_limiting(write_project):
    r = scan_path(write_project(_predict("run_once")))
    assert _verdict(r) == ("mac_for_dev", [("API103", "lib/predict.py", 6)])


# ---------------------------------------------------------------- 9. a config record's device field
_CFG = ("import json\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass RunConfig:\n    steps: int = 10\n"
        "    device: str = 'cuda'\n\n    @classmethod\n    def load(cls, path):\n"
        "        with open(path) as f:\n            return cls(**json.load(f))\n")


def test_a_dataclass_device_field_is_a_constructor_default_the_main_path_never_uses(write_project):
    # the configuration is loaded through a class method (a member, not a construction); the run resolves its device
    train = TORCH + ("from cfg import RunConfig\n" + _PICK +
                     "c = RunConfig.load('run.json')\nprint(torch.ones(2, device=dev), c.steps)\n")
    r = scan_path(write_project({**REQ, "cfg.py": _CFG, "train.py": train}))
    f = next(f for f in r.findings if f.code == "API103")
    assert (f.location.line, f.severity.value, f.evidence["field"], f.evidence["default_unseen"]) == (8, "info", True, True)
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_dataclass_built_without_its_device_field_keeps_the_default_limiting(write_project):
    train = TORCH + "from cfg import RunConfig\nc = RunConfig(steps=3)\nprint(torch.ones(2, device=c.device))\n"
    r = scan_path(write_project({**REQ, "cfg.py": _CFG, "train.py": train}))
    assert _verdict(r) == ("mac_for_dev", [("API103", "cfg.py", 8)])


def test_a_helper_under_the_readmes_api_stays_on_the_main_path(write_project):
    # look-alike: the README's code imports `step`, which calls the helper: users call it, whoever else does
    files = _helpers(False)
    files["README.md"] += "```python\nfrom pkg.util import step\n```\n"
    r = scan_path(write_project(files))
    assert _verdict(r) == ("mac_for_dev", [("API101", "pkg/util.py", 5)])


# ---------------------------------------------------------------- 10. the command line of a console script
_CLI = TORCH + ("import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n"
                "    p.add_argument('--device', default='cuda', choices=['cpu', 'cuda', 'mps'])\n"
                "    a = p.parse_args()\n    print(torch.ones(2, device=a.device))\n")
_PY = "[project]\nname = 'pkg'\nversion = '0'\ndependencies = ['torch']\n[project.scripts]\npkg-fit = 'pkg.cli:main'\n"


def test_a_console_scripts_option_is_given_to_its_command(write_project):
    r = scan_path(write_project({"pyproject.toml": _PY, "pkg/__init__.py": "", "pkg/cli.py": _CLI,
                                 "README.md": "```\npkg-fit --device cuda\n```\n"}))
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", ["--device mps"], ["pkg-fit --device mps"])


def test_a_module_the_readme_runs_as_a_script_keeps_its_python_command(write_project):
    r = scan_path(write_project({"pyproject.toml": _PY, "pkg/__init__.py": "", "pkg/cli.py": _CLI,
                                 "README.md": "```\npython -m pkg.cli --device cuda\n```\n"}))
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", ["--device mps"],
                                                      ["python pkg/cli.py --device mps"])


# ---------------------------------------------------------------- 11. a CUDA flag that only gates bookkeeping
_TIMER = TORCH + ("import time\n\n\nclass Timer:\n    def __init__(self):\n        self.cuda = torch.cuda.is_available()\n\n"
                  "    def now(self, x):\n        if self.cuda:\n            torch.cuda.synchronize()\n{extra}"
                  "        return time.time()\n\n\n"
                  "if __name__ == '__main__':\n" + "    " + _PICK +
                  "    print(Timer().now(torch.ones(2, device=dev)))\n")


def test_a_cuda_flag_that_only_gates_synchronize_selects_no_device(write_project):
    r = scan_path(write_project({**REQ, "train.py": _TIMER.format(extra="")}))
    assert [row for row in rows(r) if row[0] in ("API102", "API104")] == [("API102", "train.py", 11, "info")]
    assert _verdict(r) == ("runs_on_mac", [])


def test_a_cuda_flag_that_moves_a_tensor_is_a_cpu_fallback_selection(write_project):
    r = scan_path(write_project({**REQ, "train.py": _TIMER.format(extra="            x = x.cuda()\n")}))
    assert _verdict(r) == ("mac_for_dev", [("API104", "train.py", 7)])
