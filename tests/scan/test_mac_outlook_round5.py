"""Issue 32, fifth round: general causes found on the tune half of a new set of hand-labelled repositories
(2026-12, 42 repositories). Each rule has a look-alike negative. The fixtures are written for these tests and copy
no repository."""

from __future__ import annotations

from mpsready.scan import scan_path
from mpsready.scan.model.remedy import limits

TORCH = "import torch\n"
REQS = {"requirements.txt": "torch\n"}


def _limits(r):
    """The findings that limit the main path's outlook (code, path, line, severity)."""
    return [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings if limits(f)]


# ---------------------------------------------------------------- a list of GPU ids read through a subscript
def _gpu_ids(default: str) -> str:
    return TORCH + "import argparse\n\n\ndef parse():\n    p = argparse.ArgumentParser()\n" \
        f"    p.add_argument('--device', type=int, nargs='+', default={default}, help='GPU ids, -1 for none')\n" \
        "    return p.parse_args()\n\n\nif __name__ == '__main__':\n    args = parse()\n" \
        "    if args.device[0] != -1:\n        device = f'cuda:{args.device[0]}'\n" \
        "    elif torch.backends.mps.is_available():\n        device = 'mps'\n    else:\n        device = 'cpu'\n" \
        "    print(torch.zeros(2).to(device))\n"


def test_a_gpu_id_list_defaulting_to_none_never_enters_the_cuda_branch(write_project):
    r = scan_path(write_project({"train.py": _gpu_ids("[-1]"), **REQS}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API103"]
    assert f.severity.value == "info"
    assert f.evidence["mac_never"]["test"] == "args.device[0] != -1"
    assert f.evidence["mac_never"]["facts"] == ["--device defaults to [-1] (GPU ids: a Mac names none)"]


def test_a_gpu_id_list_defaulting_to_gpu_zero_enters_the_cuda_branch(write_project):
    # look-alike: the default names GPU 0, so the default command takes the CUDA branch on a Mac too
    r = scan_path(write_project({"train.py": _gpu_ids("[0]"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API103", "train.py", 14, "blocker")]


# ---------------------------------------------------------------- a 0-dim scalar's CUDA-or-CPU device
def _scalar(call: str) -> str:
    return TORCH + "\n\ndef grad_norm(module):\n    norms = [p.grad.norm() for p in module.parameters() if p.grad is not None]\n" \
        f"    if not norms:\n        return {call}\n    return torch.stack(norms).sum()\n\n\n" \
        "if __name__ == '__main__':\n    device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n" \
        "    print(grad_norm(torch.nn.Linear(2, 2).to(device)))\n"


def test_a_zero_dim_scalar_made_on_cuda_or_cpu_is_no_limit(write_project):
    for call, creation in (("torch.tensor(0.0, device='cuda' if torch.cuda.is_available() else 'cpu')", "torch.tensor"),
                           ("torch.zeros((), device='cuda' if torch.cuda.is_available() else 'cpu')", "torch.zeros")):
        r = scan_path(write_project({"train.py": _scalar(call), **REQS}))
        assert (r.outlook.value, _limits(r)) == ("runs_on_mac", []), call
        [f] = [f for f in r.findings if f.code == "API104"]
        assert (f.severity.value, f.location.line, f.evidence["scalar_creation"]) == ("info", 7, creation)


def test_a_buffer_made_on_cuda_or_cpu_keeps_the_mac_on_the_cpu(write_project):
    # look-alike: a tensor with a shape (not a 0-dim scalar) on the CPU beside MPS tensors is the silent-CPU limit
    r = scan_path(write_project({"train.py": _scalar("torch.zeros(3, device='cuda' if torch.cuda.is_available() "
                                                     "else 'cpu')"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API104", "train.py", 7, "degrades")]


# ---------------------------------------------------------------- an attribute set from a Mac fact in __init__
def _dispatcher(init: str, gpu_branch: str = "self.workers = torch.cuda.device_count()") -> str:
    return TORCH + "\n\nclass Dispatcher:\n" \
        f"    def __init__(self, fn, workers=None, use_gpu=True):\n        self.fn = fn\n        self._use_gpu = {init}\n" \
        "        if workers is not None:\n            self.workers = workers\n        elif self._use_gpu:\n" \
        f"            {gpu_branch}\n        else:\n            self.workers = 2\n\n" \
        "    def run(self, items):\n        if self._use_gpu:\n            return self._on_gpus(items)\n" \
        "        return [self.fn(i) for i in items]\n\n    def _on_gpus(self, items):\n" \
        "        return self._one_gpu(items, 0)\n\n    def _one_gpu(self, items, gpu):\n" \
        "        torch.cuda.set_device(gpu)\n        return [self.fn(i) for i in items]\n\n\n" \
        "if __name__ == '__main__':\n    print(Dispatcher(lambda x: x * 2).run([1, 2]))\n"


def test_methods_reached_only_through_an_attribute_a_mac_sets_false_never_run(write_project):
    r = scan_path(write_project({"disp.py": _dispatcher("torch.cuda.is_available()"), **REQS}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.location.line == 24]
    assert (f.code, f.caller_guard) == ("API102", "_one_gpu")
    assert f.evidence["mac_never_caller"] == "self._use_gpu is False (line 16): torch.cuda.is_available() is False"
    # the switch only counts GPUs: it picks no device, so no silent-CPU selection at line 7
    assert [f for f in r.findings if f.code == "API104"] == []


def test_methods_reached_through_an_attribute_a_parameter_sets_still_limit(write_project):
    # look-alike: the attribute comes from a constructor parameter (default True), which the Mac's facts leave open
    r = scan_path(write_project({"disp.py": _dispatcher("use_gpu"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert ("API102", "disp.py", 24, "blocker") in _limits(r)


def test_a_cuda_or_cpu_switch_whose_branch_places_on_cuda_is_a_selection(write_project):
    # look-alike: the switch's branch sets the current CUDA device, which places work: API104 at the switch
    r = scan_path(write_project({"disp.py": _dispatcher("torch.cuda.is_available()", "torch.cuda.set_device(0)"),
                                 **REQS}))
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code == "API104"] == \
        [("API104", 7, "degrades")]


# ---------------------------------------------------------------- a package whose modules are loaded by name
def _loaded_by_name(call: str) -> dict[str, str]:
    return {
        "train.py": TORCH + "from util.loader import load_class\n\n\nif __name__ == '__main__':\n"
                    "    net = load_class('attn@Net')()\n    print(net(torch.zeros(1, 4, 8)))\n",
        "util/__init__.py": "",
        "util/loader.py": "import importlib\n\n\ndef load_class(identifier, prefix='nets.'):\n"
                          "    module, name = identifier.split('@')\n"
                          f"    return getattr({call}, name)\n",
        "nets/__init__.py": "",
        "nets/attn.py": TORCH + "from flash_attn import flash_attn_func\n\n\nclass Net(torch.nn.Module):\n"
                        "    def forward(self, x):\n        return flash_attn_func(x, x, x)\n",
        **REQS,
    }


def test_a_package_loaded_by_name_with_a_constant_prefix_is_on_the_main_path(write_project):
    for call in ("importlib.import_module(prefix + module)", "importlib.import_module(f'nets.{module}')"):
        r = scan_path(write_project(_loaded_by_name(call)))
        [f] = [f for f in r.findings if f.code == "DEP107"]
        assert (r.outlook.value, f.location.path, f.reach) == ("stay_on_cuda", "nets/attn.py", None), call
        assert f.core_op == "flash_attn_func in Net.forward (nets/attn.py:7)"
        assert f.evidence["main_path"]["chain"] == ["train.py:2", "util/loader.py:6", "nets/attn.py"]


def test_a_module_loaded_by_a_name_without_a_package_prefix_reaches_nothing(write_project):
    # look-alike: the whole module name comes from the caller, so which package it loads is unknown
    r = scan_path(write_project(_loaded_by_name("importlib.import_module(module)")))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.path, f.core_op) == ("nets/attn.py", None)
    assert r.outlook.value != "stay_on_cuda"


# ---------------------------------------------------------------- a fallback that imports another CUDA-only package
def _attention(handler: str) -> dict[str, str]:
    return {"train.py": TORCH + "try:\n    from flash_attn_interface import flash_attn_func\nexcept ImportError:\n"
                        f"{handler}\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                        "        return flash_attn_func(x, x, x)\n\n\nif __name__ == '__main__':\n"
                        "    print(Net()(torch.zeros(1, 4, 8)))\n", **REQS}


def test_an_import_fallback_to_another_cuda_only_package_is_no_fallback(write_project):
    r = scan_path(write_project(_attention("    from flash_attn import flash_attn_func")))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (r.outlook.value, f.location.line, f.severity.value) == ("stay_on_cuda", 3, "blocker")
    assert "fallback" not in f.evidence
    assert f.core_op == "flash_attn_func in Net.forward (train.py:10)"


def test_an_import_fallback_to_a_pure_pytorch_function_stays_a_fallback(write_project):
    # look-alike: the handler defines the op with scaled_dot_product_attention
    r = scan_path(write_project(_attention("    def flash_attn_func(q, k, v):\n"
                                           "        return torch.nn.functional.scaled_dot_product_attention(q, k, v)")))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value, f.evidence["fallback"]) == (3, "degrades", "line 4")
    assert r.outlook.value != "stay_on_cuda"


def test_the_adam_atan2_cuda_optimizer_is_known(write_project):
    r = scan_path(write_project({"train.py": TORCH + "from adam_atan2 import AdamATan2\n\n\nif __name__ == '__main__':\n"
                                 "    opt = AdamATan2(torch.nn.Linear(2, 2).parameters())\n", **REQS}))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value, f.evidence["package"], f.evidence["status"]) == \
        (2, "blocker", "adam-atan2", "no_macos_build")
    assert r.outlook.value == "mac_for_dev"  # a swap: adam-atan2-pytorch or AdamW


# ---------------------------------------------------------------- a function nothing calls
def _helpers(call: str, init: bool = False) -> dict[str, str]:
    files = {
        "run.py": TORCH + "from helpers.misc import set_seed, gpu_stats\n\n\nif __name__ == '__main__':\n"
                  f"    set_seed(0)\n    {call}\n"
                  "    device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
                  "    print(torch.zeros(2).to(device))\n",
        "helpers/misc.py": TORCH + "\n\ndef set_seed(seed):\n    torch.manual_seed(seed)\n\n\ndef gpu_stats():\n"
                           "    print(torch.cuda.get_device_properties(0).total_memory)\n",
        **REQS,
    }
    if init:
        files["helpers/__init__.py"] = ""
    return files


def test_a_helper_whose_only_call_is_commented_out_is_off_the_main_path(write_project):
    # run.py imports set_seed only; its one call of gpu_stats is commented out
    files = _helpers("# gpu_stats()")
    files["run.py"] = files["run.py"].replace("set_seed, gpu_stats", "set_seed")
    r = scan_path(write_project(files))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.location.path == "helpers/misc.py" and f.severity.value == "blocker"]
    assert (f.code, f.location.line, f.reach) == ("API102", 9, "off_main_path")
    assert f.evidence["uncalled"] == "gpu_stats() is called or named by no file of the project"


def test_a_helper_the_main_script_calls_still_limits(write_project):
    # look-alike: the entry calls it
    r = scan_path(write_project(_helpers("gpu_stats()")))
    assert _limits(r) == [("API102", "helpers/misc.py", 9, "blocker")]


def test_a_regular_package_helper_the_main_path_never_calls_is_off_it(write_project):
    # round 5 kept a regular package's uncalled helper limiting (its users may call it); round 10 reads reach by calls:
    # the main path starts at run.py, which never calls gpu_stats(), so the helper is off it (model/call_reach.py)
    files = {**_helpers("# gpu_stats()", init=True),
             "run.py": _helpers("# gpu_stats()")["run.py"].replace(", gpu_stats", "")}
    r = scan_path(write_project(files))
    assert _limits(r) == []
    [f] = [f for f in r.findings if f.location.path == "helpers/misc.py" and f.severity.value == "blocker"]
    assert f.evidence["uncalled_on_path"] == ("gpu_stats() is in helpers/misc.py, which the main path imports, but no "
                                              "code the main path runs calls it or names it")
