"""The project read as a Mac runs it (issue 32): branch tests decided under the Mac's facts, imports a Mac running
the defaults never executes, optional imports, empty fallbacks, device selections built at run time, wrapper call
sites. Each rule has a look-alike negative: a branch a Mac does enter, a helper that never returns MPS, a switch on
by default. The fixtures are written for these tests and copy no repository."""

from __future__ import annotations

from mpsready.scan import scan_path
from mpsready.scan.code.analyzer import analyze_source
from tests.scan.conftest import rows

TORCH = "import torch\n"
ARGS = "import argparse\np = argparse.ArgumentParser()\n"
PICK_MPS = ("def pick():\n"
            "    if torch.cuda.is_available():\n        return 'cuda'\n"
            "    if torch.backends.mps.is_available():\n        return 'mps'\n"
            "    return 'cpu'\n")
PICK_CUDA_CPU = "def pick():\n    return 'cuda' if torch.cuda.is_available() else 'cpu'\n"


def mac_never(r, code):
    return [f.evidence.get("mac_never") for f in r.findings if f.code == code]


# ---------------------------------------------------------------- branches a Mac never enters
def test_a_cuda_only_branch_on_a_value_a_helper_returns_does_not_limit(write_project):
    r = scan_path(write_project({"train.py": TORCH + PICK_MPS + (
        "device = pick()\ndevice_type = 'cuda' if 'cuda' in device else device\n"
        "if device_type == 'cuda':\n    x = torch.zeros(2).double().to(device)\n"
        "model = torch.nn.Linear(2, 2).to(device)\n")}))
    assert rows(r) == [("DTY101", "train.py", 11, "info")]
    assert mac_never(r, "DTY101") == [{
        "test": "device_type == 'cuda'", "line": 10, "value": "False",
        "facts": ["torch.cuda.is_available() is False", "torch.backends.mps.is_available() is True",
                  "pick() returns 'mps' (line 2)"]}]
    assert r.outlook.value == "runs_on_mac"


def test_the_branch_a_mac_does_enter_still_limits(write_project):
    # look-alike: the same helper, but the float64 sits in the branch taken when the device is MPS
    r = scan_path(write_project({"train.py": TORCH + PICK_MPS + (
        "device = pick()\nif device == 'mps':\n    x = torch.zeros(2).double().to(device)\n")}))
    assert rows(r) == [("DTY101", "train.py", 10, "blocker")]
    assert r.outlook.value == "mac_for_dev"


def test_a_helper_that_never_returns_mps_decides_its_branch_the_other_way(write_project):
    # `pick() != 'mps'` is True on a Mac when the helper only knows CUDA and the CPU: synchronize() runs there
    r = scan_path(write_project({"train.py": TORCH + PICK_CUDA_CPU + (
        "if pick() != 'mps':\n    torch.cuda.synchronize()\n")}))
    assert ("API102", "train.py", 5, "blocker") in rows(r)
    r = scan_path(write_project({"train.py": TORCH + PICK_MPS + (
        "if pick() != 'mps':\n    torch.cuda.synchronize()\n")}))
    assert rows(r) == [("API102", "train.py", 9, "info")]


def test_an_attribute_set_from_availability_in_init_decides_another_method(write_project):
    src = TORCH + ("class Runner:\n    def __init__(self):\n        self.on_gpu = {value}\n"
                   "    def step(self, x):\n        if self.on_gpu:\n            x = x.double()\n        return x\n")
    r = scan_path(write_project({"train.py": src.format(value="torch.cuda.device_count() > 0")}))
    assert rows(r) == [("API102", "train.py", 4, "degrades"), ("DTY101", "train.py", 7, "info")]
    assert mac_never(r, "DTY101")[0]["facts"] == ["torch.cuda.device_count() is 0"]
    r = scan_path(write_project({"train.py": src.format(value="True")}))  # look-alike: always on
    assert rows(r) == [("DTY101", "train.py", 7, "blocker")]  # (no torch.cuda call left)


def test_a_device_option_is_read_with_the_proposed_flag(write_project):
    src = TORCH + ARGS + ("p.add_argument('--device', default='cuda', choices=['cuda', 'mps', 'cpu'])\n"
                          "args = p.parse_args()\nmodel = torch.nn.Linear(2, 2).to(args.device)\n"
                          "if args.device {op} 'cuda':\n    model = model.double()\n")
    r = scan_path(write_project({"train.py": src.format(op="==")}))
    assert rows(r) == [("API103", "train.py", 4, "blocker"), ("DTY101", "train.py", 8, "info")]
    assert mac_never(r, "DTY101")[0]["facts"] == ["--device mps (the proposed flag)"]
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", ["--device mps"], ["python train.py --device mps"])
    r = scan_path(write_project({"train.py": src.format(op="!=")}))  # look-alike: the branch MPS takes
    assert ("DTY101", "train.py", 8, "blocker") in rows(r)


def test_the_rest_of_a_function_after_a_cuda_exit_does_not_run_on_a_mac(write_project):
    src = TORCH + "def warm(x):\n    if {test}:\n        return x\n    return x.double().cuda()\n"
    r = scan_path(write_project({"train.py": src.format(test="not torch.cuda.is_available()")}))
    assert [row[3] for row in rows(r)] == ["info", "info"]
    r = scan_path(write_project({"train.py": src.format(test="torch.cuda.is_available()")}))  # look-alike
    assert ("DTY101", "train.py", 5, "blocker") in rows(r)


def test_an_environment_variable_decides_nothing(write_project):
    r = scan_path(write_project({"train.py": TORCH + "import os\n"
                                 "if os.environ.get('USE_CUDA') == '1':\n    x = torch.zeros(2).double()\n"}))
    assert rows(r) == [("DTY101", "train.py", 4, "blocker")]
    assert r.findings[0].evidence["undecided"] == [{
        "test": "os.environ.get('USE_CUDA') == '1'", "line": 3, "decided_by": ["environment variable USE_CUDA"],
        "if_true": "runs", "if_false": "does not run"}]
    from mpsready.scan.model.graph import why_line
    assert why_line(r.findings[0].evidence) == (
        "main path: every file counts (no entry script); undecided: os.environ.get('USE_CUDA') == '1' (line 3) "
        "depends on environment variable USE_CUDA: if true it runs, if false it does not run")


# ---------------------------------------------------------------- imports a Mac running the defaults never runs
def test_a_module_imported_only_under_an_option_off_by_default_is_off_the_main_path(write_project):
    train = TORCH + ARGS + ("p.add_argument('--fp8', action='{action}')\nargs = p.parse_args()\n"
                            "if args.fp8:\n    from quant.fp8 import convert\n    convert()\n")
    fp8 = TORCH + "def convert():\n    return torch.ones(2).double()\n"
    r = scan_path(write_project({"train.py": train.format(action="store_true"), "quant/fp8.py": fp8}))
    assert r.outlook.value == "runs_on_mac"
    assert [f.reach for f in r.findings if f.code == "DTY101"] == ["off_main_path"]
    r = scan_path(write_project({"train.py": train.format(action="store_false"), "quant/fp8.py": fp8}))  # on
    assert r.outlook.value == "mac_for_dev" and [f.code for f in r.limiting] == ["DTY101"]


def test_skipped_imports_name_the_test_and_the_facts():
    src = TORCH + "def f():\n    if not torch.cuda.is_available():\n        return\n    import fused\n"
    assert analyze_source(src).skipped_imports == {
        "5": "not torch.cuda.is_available() is True (line 3): torch.cuda.is_available() is False"}


def test_an_import_under_a_check_naming_the_package_is_optional(write_project):
    src = TORCH + "from util import is_installed\nif {test}:\n    from flash_attn import flash_attn_func\n"
    r = scan_path(write_project({"m.py": src.format(test="is_installed('flash_attn')")}))
    dep = next(f for f in r.findings if f.code == "DEP107")
    assert (dep.severity.value, dep.evidence["optional"]) == (
        "degrades", "imported only when is_installed('flash_attn') (line 3)")
    assert r.outlook.value == "runs_on_mac"
    r = scan_path(write_project({"m.py": src.format(test="USE_FLASH")}))  # look-alike: a switch, no check
    assert [(f.code, f.severity.value) for f in r.findings if f.code == "DEP107"] == [("DEP107", "blocker")]


def test_a_console_script_package_keeps_a_serving_folder_none_of_its_scripts_imports_off_the_main_path(write_project):
    files = {"pyproject.toml": "[project]\nname='pkg'\ndependencies=['torch']\n"
                               "[project.scripts]\npkg-run = 'pkg.cli:main'\n",
             "pkg/__init__.py": "",
             "pkg/cli.py": TORCH + "def main():\n    torch.nn.Linear(2, 2)\n",
             "pkg/serving/__init__.py": "",
             "pkg/serving/engine.py": TORCH + "from flash_attn import flash_attn_func\n"}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    files["pkg/cli.py"] = TORCH + "from pkg.serving import engine\ndef main():\n    torch.nn.Linear(2, 2)\n"
    r = scan_path(write_project(files))  # look-alike: the script imports it
    assert r.outlook.value == "mac_for_dev" and [f.code for f in r.limiting] == ["DEP107"]


# ---------------------------------------------------------------- fallbacks found where they are (cause 4 and 5)
MODEL = ("class Net(torch.nn.Module):\n    def forward(self, x):\n        self.scan = selective_scan_fn\n"
         "        return self.scan(x)\n")


def test_an_except_handler_that_binds_nothing_is_no_fallback_for_the_models_core(write_project):
    src = TORCH + ("try:\n    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn\n"
                   "except {handler}\n") + MODEL
    r = scan_path(write_project({"train.py": "from model import Net\nNet()\n",
                                 "model.py": src.format(handler="Exception:\n    pass")}))
    assert r.outlook.value == "stay_on_cuda"
    dep = r.limiting[0]
    assert (dep.code, dep.location.line, dep.severity.value, dep.evidence["empty_fallback"]) == (
        "DEP107", 3, "blocker", True)
    r = scan_path(write_project({"train.py": "from model import Net\nNet()\n", "model.py": src.format(
        handler="ImportError:\n    from ref_scan import selective_scan_fn")}))  # look-alike: a real fallback
    assert r.outlook.value == "runs_on_mac"


def test_a_device_built_from_a_cuda_prefix_and_an_option_inside_else_is_a_selection(write_project):
    src = TORCH + ARGS + ("p.add_argument('--gpu', default='0')\np.add_argument('--cpu', action='store_true')\n"
                          "args = p.parse_args()\nif args.cpu:\n    device = torch.device('cpu')\n"
                          "{mps}else:\n    device = torch.device('cuda:' + str(args.gpu)) "
                          "if torch.cuda.is_available() else torch.device('cpu')\n"
                          "model = torch.nn.Linear(2, 2).to(device)\n")
    r = scan_path(write_project({"train.py": src.format(mps="")}))
    assert rows(r) == [("API104", "train.py", 10, "degrades")]
    assert r.outlook.value == "mac_for_dev"
    r = scan_path(write_project({"train.py": src.format(  # look-alike: MPS is chosen before the CUDA-or-CPU line
        mps="elif torch.backends.mps.is_available():\n    device = torch.device('mps')\n")}))
    assert rows(r) == [] and r.outlook.value == "runs_on_mac"


def test_a_device_default_reached_only_through_a_forwarding_wrapper_is_unused(write_project):
    loader = TORCH + ("def load(n, device='cuda'):\n    return torch.zeros(n, device=device)\n"
                      "def load_all(*args, **kwargs):\n    return load(*args, **kwargs)\n")
    main = TORCH + "from loader import load_all\ndev = 'mps'\nx = load_all(2, device=dev)\n"
    r = scan_path(write_project({"loader.py": loader, "train.py": main}))
    assert rows(r) == [("API103", "loader.py", 2, "info")]
    assert next(f for f in r.findings if f.code == "API103").evidence["default_unused"] == ["train.py:4"]
    r = scan_path(write_project({"loader.py": loader, "train.py": main + "y = load_all(3)\n"}))  # one omits it
    assert rows(r) == [("API103", "loader.py", 2, "blocker")]


# ---------------------------------------------------------------- frameworks that choose the device (the table)
def test_an_accelerate_device_is_mps_on_a_mac(write_project):
    src = TORCH + ("from accelerate import Accelerator\nacc = Accelerator()\n"
                   "if acc.device.type {op} 'cuda':\n    x = torch.zeros(2).double().to(acc.device)\n")
    r = scan_path(write_project({"train.py": src.format(op="==")}))
    assert rows(r) == [("DTY101", "train.py", 5, "info")]
    assert mac_never(r, "DTY101")[0]["facts"] == ["Accelerator picks mps on a Mac (data/device_choosers.yaml)"]
    r = scan_path(write_project({"train.py": src.format(op="!=")}))  # look-alike: the branch a Mac takes
    assert rows(r) == [("DTY101", "train.py", 5, "blocker")]


def test_a_flag_that_is_a_library_keyword_gives_no_command_line(write_project):
    # look-alike of the command line: a public function's device default is an argument, not a script's option
    r = scan_path(write_project({"README.md": "```python\nfrom pkg.api import load\n```\n",
                                 "pkg/__init__.py": "", "pkg/api.py": TORCH + (
                                     "def load(name, device='cuda' if torch.cuda.is_available() else 'cpu'):\n"
                                     "    return torch.nn.Linear(2, 2).to(device)\n")}))
    # round 7: the keyword is passed in the caller's code, an edit there (mac_for_dev), still no command line
    assert (r.outlook.value, r.flags, r.commands) == ("mac_for_dev", [], [])
    assert [e.what for e in r.edits] == \
        ["pass load(..., device='mps') in the code that calls it, or make its default pick MPS"]


# ---------------------------------------------------------------- optional parts: extra requirement files
def test_a_feature_requirement_file_the_readme_install_does_not_use_is_optional(write_project):
    files = {"requirements.txt": "torch\n", "requirements/gpu.txt": "flash-attn\n",
             "README.md": "```bash\npip install -r requirements.txt\npython train.py\n```\n",
             "train.py": TORCH + "m = torch.nn.Linear(2, 2)\n"}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    assert r.optional == [{"path": "requirements/gpu.txt", "line": 1, "code": "DEP101",
                           "why": "requirements/gpu.txt is not installed by the README's install (requirements.txt)"}]
    # look-alikes: the README's install uses it (through an include), or the README shows no install at all
    files["requirements.txt"] = "torch\n-r requirements/gpu.txt\n"
    r = scan_path(write_project(files))
    assert (r.outlook.value, r.optional) == ("mac_for_dev", [])
    files["requirements.txt"] = "torch\n"
    files["README.md"] = "```bash\npython train.py\n```\n"
    r = scan_path(write_project(files))
    assert (r.outlook.value, r.optional) == ("mac_for_dev", [])


# ---------------------------------------------------------------- a script folder the README enters in an earlier block
KERNEL = "import triton\n@triton.jit\ndef k(x_ptr):\n    pass\n"


def test_a_readme_block_after_cd_and_a_script_folder_import_reach_the_kernel(write_project):
    files = {"README.md": "```bash\ncd serve\npython convert.py\n```\n\n```bash\ntorchrun --nproc-per-node 8 run.py\n```\n",
             "serve/convert.py": TORCH + "x = torch.zeros(2)\n",
             "serve/run.py": TORCH + "from layers import k\nk[(1,)](torch.zeros(2))\n",
             "serve/layers.py": KERNEL}
    r = scan_path(write_project(files))
    assert r.outlook.value == "stay_on_cuda"
    assert [f.code for f in r.limiting] == ["EXT103"]
    # round 13: in a package folder (with __init__.py) `from layers import k` resolves from no folder the scan knows
    # (the root, a script outside a package), so it reaches every candidate of its top-level folder: the kernel still
    # limits (a script run by path has its folder on sys.path whether or not the folder holds an __init__.py)
    files["serve/__init__.py"] = ""
    r = scan_path(write_project(files))
    assert (r.outlook.value, [f.code for f in r.limiting]) == ("stay_on_cuda", ["EXT103"])
    # look-alike: the kernel is in a module of that name in another top-level folder: no candidate there
    files["serve/layers.py"] = "k = None\n"
    files["tools/layers.py"] = KERNEL
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"


def test_a_readme_install_line_with_an_open_quote_is_skipped(write_project):
    r = scan_path(write_project({"README.md": "```bash\npip install 'torch\npip install -r requirements.txt\n```\n",
                                 "requirements.txt": "torch\n", "requirements-gpu.txt": "flash-attn\n"}))
    assert r.optional == [{"path": "requirements-gpu.txt", "line": 1, "code": "DEP101",
                           "why": "requirements-gpu.txt is not installed by the README's install (requirements.txt)"}]


def test_double_on_a_tensor_moved_to_the_cpu_is_not_float64_on_mps(write_project):
    src = TORCH + "dev = torch.device('mps')\nx = torch.ones(2, device=dev)\ny = x.{chain}.double()\n"
    r = scan_path(write_project({"train.py": src.format(chain="detach().cpu()")}))
    assert rows(r) == [("DTY101", "train.py", 4, "info")]
    r = scan_path(write_project({"train.py": src.format(chain="to('cpu').clone()")}))
    assert rows(r) == [("DTY101", "train.py", 4, "info")]
    r = scan_path(write_project({"train.py": src.format(chain="to(dev)")}))  # look-alike: still on the device
    assert rows(r) == [("DTY101", "train.py", 4, "blocker")]


# ---------------------------------------------------------------- a function the main path calls only where a Mac never goes
def test_a_function_called_only_under_a_launcher_variable_does_not_limit(write_project):
    src = TORCH + ("import os\nimport torch.distributed as dist\n"
                   "def init_dist():\n    dist.init_process_group(backend='nccl')\n    torch.cuda.set_device(0)\n"
                   "if {test}:\n    init_dist()\nmodel = torch.nn.Linear(2, 2)\n")
    r = scan_path(write_project({"train.py": src.format(test="'RANK' in os.environ")}))
    assert r.outlook.value == "runs_on_mac"
    api = next(f for f in r.findings if f.code == "API102")
    assert api.evidence["mac_never_caller"] == (
        "'RANK' in os.environ is False (line 7): RANK is unset (one process, no launcher)")
    r = scan_path(write_project({"train.py": src.format(test="'RANK' not in os.environ")}))  # look-alike
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- through parameters: every caller passes a decided value
def test_a_branch_decided_by_a_parameter_every_caller_passes_as_false_does_not_limit(write_project):
    step = TORCH + ("def step(batch, synced):\n    if not synced:\n        return batch\n"
                    "    flag = torch.tensor(1, device=torch.cuda.current_device())\n    return batch\n")
    train = TORCH + ("import torch.distributed as dist\nfrom step import step\n"
                     "def is_synced():\n    return dist.is_initialized()\n"
                     "model = torch.nn.Linear(2, 2)\nstep(None, {arg})\n")
    r = scan_path(write_project({"step.py": step, "train.py": train.format(arg="is_synced()")}))
    assert r.outlook.value == "runs_on_mac"
    api = next(f for f in r.findings if f.code == "API102" and f.location.path == "step.py")
    assert api.evidence["mac_never_param"] == (
        "not synced is True (line 3) because every call passes synced = False on a Mac (train.py:7)")
    r = scan_path(write_project({"step.py": step, "train.py": train.format(arg="True")}))  # look-alike
    assert r.outlook.value == "mac_for_dev"


def test_a_test_nested_past_the_stack_is_undecided_not_an_error():
    import ast

    from mpsready.scan.code.macfacts import MacEval
    from mpsready.scan.code.names import build_alias_map
    from mpsready.scan.code.valueflow import ValueFlow

    tree = ast.parse("import torch\n")
    test: ast.expr = ast.parse("torch.cuda.is_available()", mode="eval").body
    for _ in range(20000):  # built, not parsed: deeper than the interpreter's stack
        test = ast.UnaryOp(op=ast.Not(), operand=test)
    assert MacEval(ValueFlow(build_alias_map(tree), tree)).truth(test, None, None) is None


def test_a_main_named_root_script_the_readme_never_runs_is_secondary_when_it_runs_another(write_project):
    files = {"README.md": "```bash\npython train.py\n```\n",
             "train.py": TORCH + "device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
                                 "m = torch.nn.Linear(2, 2).to(device)\n",
             "run_eval.py": TORCH + "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                                    "m = torch.nn.Linear(2, 2).to(device)\n"}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    assert [s.line() for s in r.secondary] == ["run_eval.py: mac_for_dev, 1 edit"]
    files["README.md"] = "```bash\npython download.py\n```\n"  # look-alike: the README runs no main-named script
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


def test_an_early_return_on_the_availability_flag_is_a_path_beside_the_kernel(write_project):
    """``if not HAVE_XF: return super().forward(x)`` before the kernel's use: a Mac, where the import fails and
    the handler sets the flag false, takes the plain attention (seen in the DINOv2 attention layers vendored by
    many vision projects, once read as a core op with no other path: stay_on_cuda). A raise there is no path."""
    src = TORCH + ("try:\n    from xformers.ops import memory_efficient_attention\n    HAVE_XF = True\n"
                   "except ImportError:\n    HAVE_XF = False\n"
                   "class Attn(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
                   "class FastAttn(Attn):\n    def forward(self, x):\n        if not HAVE_XF:\n"
                   "            {guard}\n        return memory_efficient_attention(x, x, x)\n")
    files = {"train.py": "from model import FastAttn\nFastAttn()\n"}
    r = scan_path(write_project({**files, "model.py": src.format(guard="return super().forward(x)")}))
    assert r.outlook.value == "runs_on_mac"
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code == "DEP107"] == [
        ("DEP107", 3, "degrades")]
    r = scan_path(write_project({**files, "model.py": src.format(  # look-alike: the guard raises
        guard="raise RuntimeError('xformers needed')")}))
    assert r.outlook.value == "stay_on_cuda"
    dep = r.limiting[0]
    assert (dep.code, dep.location.line, dep.severity.value) == ("DEP107", 3, "blocker")
    assert dep.message.endswith("the model's core calls it with no other path: memory_efficient_attention in "
                                "FastAttn.forward (model.py:14)")
