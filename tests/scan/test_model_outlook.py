"""The project model and the cost-ladder outlook (issue 11): one positive and one look-alike negative per
pattern, each with its exact findings and outlook (verdict, printed flags, listed edits)."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"


def outlook(r):
    """(verdict, flags, [(path, line, code, kind, migrate)]) of a scan result."""
    return (r.outlook.value, r.flags, [(e.path, e.line, e.code, e.kind, e.migrate) for e in r.edits])


# ---------------------------------------------------------------- configuration surfaces
def test_argparse_device_default_is_a_flag(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--device', default='cuda')\nargs = p.parse_args()\n"
        "model = torch.nn.Linear(2, 2).to(args.device)\n")}))
    assert rows(r) == [("API103", "train.py", 4, "blocker")]
    assert outlook(r) == ("runs_on_mac", ["--device mps"], [])


def test_argparse_choices_without_mps_need_an_edit(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--device', default='cuda', choices=['cuda', 'cpu'])\n")}))
    # migrate rewrites the default and adds 'mps' to the literal choices (tests/migrate, api103_device_literal.py)
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 4, "API103", "edit", True)])
    assert "leave out 'mps'" in r.findings[0].message


def test_configurator_globals_are_flags_and_compile_is_switched_off(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + ("device = 'cuda'\ncompile = True\nexec(open('configurator.py').read())\n"
                             "model = torch.nn.Linear(2, 2).to(device)\n"
                             "if compile:\n    model = torch.compile(model)\n"),
        "configurator.py": "import sys\nfor arg in sys.argv[1:]:\n    print(arg)\n"}))
    assert rows(r) == [("API103", "train.py", 2, "blocker"), ("API114", "train.py", 7, "info")]
    assert outlook(r) == ("runs_on_mac", ["--device=mps", "--compile=False"], [])


def test_same_globals_without_a_configurator_are_an_edit(write_project):
    r = scan_path(write_project({"train.py": TORCH + "device = 'cuda'\nx = torch.zeros(2).to(device)\n"}))
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 2, "API103", "edit", True)])


def test_hydra_config_device_is_an_override(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + "import hydra\n@hydra.main(config_path='conf')\ndef main(cfg):\n"
                            "    torch.zeros(1).to(cfg.device)\nif __name__ == '__main__':\n    main()\n",
        "conf/config.yaml": "device: cuda\nlr: 0.1\n",
        "conf/trainer/default.yaml": "accelerator: cpu\n",
        "conf/trainer/mps.yaml": "accelerator: mps\n"}))
    assert rows(r) == [("API121", "conf/config.yaml", 1, "blocker")]
    assert outlook(r) == ("runs_on_mac", ["device=mps", "trainer=mps"], [])


def test_plain_yaml_config_names_the_value_to_change(write_project):
    r = scan_path(write_project({"run.py": TORCH + "import yaml\ncfg = yaml.safe_load(open('configs/a.yaml'))\n",
                                 "configs/a.yaml": "model:\n  device: cuda:0\n"}))
    assert outlook(r) == ("runs_on_mac", ["model.device: mps in configs/a.yaml"], [])


def test_yaml_config_on_cpu_is_not_a_finding(write_project):
    r = scan_path(write_project({"run.py": TORCH, "configs/a.yaml": "device: cpu\nnote: cuda is faster\n"}))
    assert rows(r) == []
    assert outlook(r) == ("runs_on_mac", [], [])


# ---------------------------------------------------------------- device value flow
def test_device_producing_function_with_returns(write_project):
    r = scan_path(write_project({"util.py": TORCH + (
        "def get_device(rank):\n    if torch.cuda.is_available():\n        return torch.device(f'cuda:{rank}')\n"
        "    return torch.device('cpu')\n")}))
    assert rows(r) == [("API104", "util.py", 3, "degrades"), ("API103", "util.py", 4, "info")]
    assert outlook(r) == ("mac_for_dev", [], [("util.py", 3, "API104", "edit", True)])


def test_device_producing_function_that_returns_mps_is_fine(write_project):
    r = scan_path(write_project({"util.py": TORCH + (
        "def get_device():\n    if torch.cuda.is_available():\n        return torch.device('cuda')\n"
        "    if torch.backends.mps.is_available():\n        return torch.device('mps')\n"
        "    return torch.device('cpu')\n")}))
    assert rows(r) == [("API103", "util.py", 4, "info")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_long_if_else_device_choice_on_a_gpu_switch(write_project):
    r = scan_path(write_project({"exp.py": TORCH + (
        "class Exp:\n    def _acquire(self):\n        if self.args.use_gpu:\n            n = 1\n"
        "            device = torch.device('cuda:{}'.format(self.args.gpu))\n            print(n)\n"
        "        else:\n            device = torch.device('cpu')\n        return device\n")}))
    assert rows(r) == [("API103", "exp.py", 6, "blocker"), ("API104", "exp.py", 4, "degrades")]
    assert outlook(r) == ("mac_for_dev", [], [("exp.py", 6, "API103", "edit", True), ("exp.py", 4, "API104", "edit", True)])


def test_cuda_switch_variable_keeps_a_mac_on_the_cpu(write_project):
    r = scan_path(write_project({"gan.py": TORCH + (
        "cuda = True if torch.cuda.is_available() else False\nnet = torch.nn.Linear(2, 2)\n"
        "if cuda:\n    net.cuda()\n")}))
    assert rows(r) == [("API104", "gan.py", 2, "degrades"), ("API101", "gan.py", 5, "info")]
    assert outlook(r)[0] == "mac_for_dev"


def test_cuda_switch_in_a_module_that_considers_mps_is_fine(write_project):
    r = scan_path(write_project({"gan.py": TORCH + (
        "use_cuda = torch.cuda.is_available()\n"
        "dev = 'cuda' if use_cuda else ('mps' if torch.backends.mps.is_available() else 'cpu')\n")}))
    assert rows(r) == []


def test_fstring_device_literals(write_project):
    r = scan_path(write_project({"m.py": TORCH + (
        "def f(x, rank, dev):\n    a = x.to(f'cuda:{rank}')\n    b = torch.zeros(1, device=f'cuda:{rank}')\n"
        "    c = x.to(f'{dev}')\n    return a, b, c\n")}))
    assert rows(r) == [("API103", "m.py", 3, "blocker"), ("API103", "m.py", 4, "blocker")]
    assert r.findings[0].message == ".to('cuda:{rank}'): a hard-coded CUDA device"


def test_default_tensor_type_cuda_with_device_less_factories(write_project):
    r = scan_path(write_project({"m.py": TORCH + (
        "torch.set_default_tensor_type('torch.cuda.FloatTensor')\nx = torch.zeros(3)\n")}))
    assert rows(r) == [("API119", "m.py", 2, "blocker")]
    assert outlook(r) == ("mac_for_dev", [], [("m.py", 2, "API119", "edit", True)])


def test_default_tensor_type_on_the_cpu_is_fine(write_project):
    r = scan_path(write_project({"m.py": TORCH + "torch.set_default_tensor_type(torch.FloatTensor)\n"}))
    assert rows(r) == []


def test_numpy_float64_through_a_function_return(write_project):
    r = scan_path(write_project({
        "pkg/transforms.py": "import numpy as np\nfrom copy import deepcopy\n"
                             "class T:\n    def apply_coords(self, c):\n        c = deepcopy(c).astype(float)\n"
                             "        return c\n",
        "pkg/gen.py": TORCH + "class G:\n    def run(self, pts):\n        t = self.tr.apply_coords(pts)\n"
                              "        return torch.as_tensor(t, device=self.device)\n"}))
    assert rows(r) == [("DTY102", "pkg/gen.py", 5, "blocker")]
    assert r.findings[0].output_evidence()["via"] == "return"
    # no float32 cast follows the move: migrate lists it for the user, so the outlook does not promise the edit
    assert outlook(r) == ("mac_for_dev", [], [("pkg/gen.py", 5, "DTY102", "edit", False)])


def test_numpy_float64_through_a_parameter(write_project):
    r = scan_path(write_project({
        "data.py": TORCH + "def load(arr, dev):\n    return torch.from_numpy(arr).to(dev)\n",
        "train.py": "import numpy as np\nfrom data import load\nx = load(np.random.rand(4, 3), 'mps')\n"}))
    assert rows(r) == [("DTY102", "data.py", 3, "blocker")]
    assert r.findings[0].output_evidence() == {"via": "parameter", "function": "load", "caller": "train.py:3",
                                      "remedy": {"kind": "edit", "migrate": False},  # no cast after: manual
                                      "main_path": {"entry": "train.py", "chain": ["train.py:2", "data.py"],
                                                    "facts": [], "calls": ["train.py:3 load"]}}  # issue 32: how it is reached


def test_numpy_data_cast_before_the_move_is_fine(write_project):
    r = scan_path(write_project({
        "data.py": TORCH + "def load(arr, dev):\n    return torch.from_numpy(arr).float().to(dev)\n"
                           "def make(c, dev):\n    return torch.as_tensor(c, dtype=torch.float32, device=dev)\n",
        "train.py": "import numpy as np\nfrom data import load, make\nx = load(np.random.rand(4, 3), 'mps')\n"
                    "y = make(np.zeros(3), 'mps')\n"}))
    assert rows(r) == []


def test_numpy_float64_through_arithmetic_numpy_functions_and_attributes(write_project):
    # DiT: a float64 schedule, carried through 1.0 - x, np.cumprod, np.sqrt and self.<name>, reaches a device in a
    # helper that casts only after the move; it used to be missed (only plain names of factories were followed)
    r = scan_path(write_project({"diffusion.py": TORCH + "import numpy as np\n" + (
        "def extract(arr, t):\n    return torch.from_numpy(arr).to(device=t.device)[t].float()\n"
        "class D:\n    def __init__(self, n):\n        betas = np.linspace(1e-4, 0.02, n, dtype=np.float64)\n"
        "        self.alphas_cumprod = np.cumprod(1.0 - betas, axis=0)\n"
        "        self.sqrt_ac = np.sqrt(self.alphas_cumprod[:-1])\n"
        "    def q(self, x, t):\n        return extract(self.sqrt_ac, t) * x\n")}))
    assert rows(r) == [("DTY102", "diffusion.py", 4, "blocker")]
    assert r.findings[0].output_evidence()["caller"] == "diffusion.py:11"


def test_numpy_float64_cast_to_float32_on_the_way_is_fine(write_project):
    r = scan_path(write_project({"diffusion.py": TORCH + "import numpy as np\n" + (
        "def extract(arr, t):\n    return torch.from_numpy(arr).to(device=t.device)[t]\n"
        "class D:\n    def __init__(self, n):\n        betas = np.linspace(1e-4, 0.02, n, dtype=np.float64)\n"
        "        self.ac = np.cumprod(1.0 - betas).astype(np.float32)\n"
        "        self.n = np.sqrt(np.arange(3))\n"
        "    def q(self, x, t):\n        return extract(self.ac, t) * extract(np.float32(self.n), t)\n")}))
    assert rows(r) == []


def test_double_on_forward_path_and_on_a_cpu_tensor(write_project):
    r = scan_path(write_project({"m.py": TORCH + "import numpy as np\n" + (
        "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x.double()\n"
        "def weights(w):\n    t = torch.from_numpy(w)\n    t = t.double()\n    return t\n"
        "net = Net().to('mps')\n")}))
    assert rows(r) == [("DTY101", "m.py", 5, "blocker"), ("DTY101", "m.py", 8, "info")]


def test_float64_in_cpu_only_notebooks_is_info(write_project):
    import json
    nb = {"cells": [{"cell_type": "code", "source": ["import torch\n", "x = torch.Tensor([2.0]).double()\n"],
                     "metadata": {}, "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    r = scan_path(write_project({"lecture.ipynb": json.dumps(nb)}))
    assert rows(r) == [("DTY101", "lecture.ipynb", 1, "info")] or [f.severity.value for f in r.findings
                                                                    if f.code == "DTY101"] == ["info"]
    assert outlook(r) == ("runs_on_mac", [], [])


# ---------------------------------------------------------------- reachability
def test_distributed_branch_does_not_limit(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import torch.distributed as dist\nworld_size = 2\n"
        "if world_size > 1:\n    dist.init_process_group('nccl')\n    torch.cuda.set_device(0)\n")}))
    assert [(c, p, ln, s, sc) for c, p, ln, s, sc in rows(r, with_scope=True)] == [
        ("API107", "train.py", 5, "blocker", "distributed"), ("API102", "train.py", 6, "blocker", "distributed")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_code_behind_a_flag_off_by_default_does_not_limit(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--profile', action='store_true')\n"
        "args = p.parse_args()\nif args.profile:\n    torch.cuda.nvtx.range_push('step')\n")}))
    assert rows(r) == [("API111", "train.py", 7, "blocker")]
    assert r.findings[0].output_evidence()["behind_flag"] == "--profile"
    assert outlook(r) == ("runs_on_mac", [], [])


def test_code_behind_a_flag_on_by_default_limits(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--profile', type=bool, default=True)\n"
        "args = p.parse_args()\nif args.profile:\n    torch.cuda.nvtx.range_push('step')\n")}))
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 7, "API111", "edit", False)])


def test_scripts_off_the_main_entry_path_do_not_limit(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + "from model import Net\nnet = Net()\n",
        "model.py": TORCH + "class Net(torch.nn.Module):\n    pass\n",
        "tools/convert.py": TORCH + "w = torch.load('a.pt').cuda()\n"}))
    assert rows(r) == [("API101", "tools/convert.py", 2, "blocker")]
    assert r.findings[0].output_evidence() == {"reach": "off_main_path", "entries": ["train.py"]}
    assert outlook(r) == ("runs_on_mac", [], [])


def test_module_imported_by_the_main_entry_limits(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + "from pkg.model import Net\nnet = Net()\n",
        "pkg/__init__.py": "", "pkg/model.py": TORCH + "def Net():\n    return torch.nn.Linear(2, 2).cuda()\n"}))
    assert outlook(r) == ("mac_for_dev", [], [("pkg/model.py", 3, "API101", "edit", True)])


def test_demo_notebook_beside_a_package_does_not_limit(write_project):
    import json
    nb = {"cells": [{"cell_type": "code", "source": ["import torch\n", "m = torch.nn.Linear(2, 2).cuda()\n"],
                     "metadata": {}, "outputs": [], "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    r = scan_path(write_project({"pkg/__init__.py": TORCH, "notebooks/demo.ipynb": json.dumps(nb)}))
    assert [f.output_evidence().get("reach") for f in r.findings if f.code == "API101"] == ["demo_notebook"]
    assert outlook(r) == ("runs_on_mac", [], [])


# ---------------------------------------------------------------- fallbacks
_EXT = ("import os\nimport torch\nfrom torch.autograd import Function\nfrom torch.utils.cpp_extension import load\n"
        "op = load('op', sources=['op.cpp', 'op_kernel.cu'])\n"
        "class Op(Function):\n    @staticmethod\n    def forward(ctx, x):\n        return op.run(x)\n")


def test_fallback_keyed_on_cpu_is_a_local_edit(write_project):
    r = scan_path(write_project({"op/act.py": _EXT + (
        "def act(x):\n    if x.device.type == 'cpu':\n        return torch.relu(x)\n    else:\n"
        "        return Op.apply(x)\n"), "op/op_kernel.cu": "__global__ void k() {}\n"}))
    assert rows(r) == [("EXT102", "op/act.py", 5, "blocker"), ("EXT108", "op/act.py", 11, "blocker"),
                       ("EXT101", "op/op_kernel.cu", None, "blocker")]
    assert outlook(r) == ("mac_for_dev", [], [("op/act.py", 5, "EXT102", "wire", False),
                                              ("op/act.py", 11, "EXT108", "edit", True),
                                              ("op/op_kernel.cu", None, "EXT101", "wire", False)])


def test_fallback_keyed_on_cuda_is_not_mis_keyed(write_project):
    r = scan_path(write_project({"op/act.py": _EXT.replace("op = load(", "try:\n    op = load(").replace(
        "'op_kernel.cu'])\n", "'op_kernel.cu'])\nexcept Exception:\n    op = None\n") + (
        "def act(x):\n    if x.device.type != 'cuda' or op is None:\n        return torch.relu(x)\n"
        "    return Op.apply(x)\n")}))
    assert [c for c, *_ in rows(r)] == ["EXT102"]
    assert r.findings[0].severity.value == "degrades"
    assert outlook(r) == ("runs_on_mac", [], [])


def test_migrated_fallback_keyed_on_cuda_keeps_the_wire_remedy(write_project):
    # what `mpsready migrate` makes of the EXT108 case above (stylegan2-pytorch): the dispatch is keyed on CUDA,
    # but the import-time load() still builds the CUDA extension, so one edit is left, not "no usable path"
    r = scan_path(write_project({"op/act.py": _EXT + (
        "def act(x):\n    if x.device.type != 'cuda':\n        return torch.relu(x)\n    else:\n"
        "        return Op.apply(x)\n"), "op/op_kernel.cu": "__global__ void k() {}\n"}))
    assert rows(r) == [("EXT102", "op/act.py", 5, "blocker"), ("EXT101", "op/op_kernel.cu", None, "blocker")]
    assert r.findings[0].output_evidence()["pure_path"] == "op/act.py:11"
    assert outlook(r) == ("mac_for_dev", [], [("op/act.py", 5, "EXT102", "wire", False),
                                              ("op/op_kernel.cu", None, "EXT101", "wire", False)])


def test_unwired_pure_pytorch_path_is_wired_in(write_project):
    r = scan_path(write_project({
        "ops/setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
                        "CUDAExtension('MSDA', ['src/a.cu'])\n",
        "ops/src/a.cu": "__global__ void k() {}\n",
        "ops/functions/attn.py": TORCH + "import MSDA\nclass F(torch.autograd.Function):\n    pass\n"
                                 "def attn_core_pytorch(v):\n    return v\n",
        "ops/test.py": "from functions.attn import attn_core_pytorch\nattn_core_pytorch(1)\n"}))
    assert rows(r) == [("EXT102", "ops/setup.py", 2, "blocker"), ("EXT101", "ops/src/a.cu", None, "blocker"),
                       ("EXT109", "ops/functions/attn.py", 5, "info")]
    assert outlook(r) == ("mac_for_dev", [], [("ops/setup.py", 2, "EXT102", "wire", False),
                                              ("ops/src/a.cu", None, "EXT101", "wire", False)])
    assert r.edits[0].what == ("use the pure-PyTorch path at ops/functions/attn.py:5 when the tensor is not on "
                               "CUDA")


def test_cuda_kernel_without_any_path_stays_on_cuda(write_project):
    r = scan_path(write_project({
        "ops/setup.py": "from torch.utils.cpp_extension import CUDAExtension\nCUDAExtension('R', ['r.cu'])\n",
        "ops/r.cu": "__global__ void k() {}\n", "render.py": TORCH + "import R\n"}))
    assert outlook(r)[0] == "stay_on_cuda"
    assert [f.code for f in r.limiting] == ["EXT101", "EXT102"]


def test_asserting_cuda_tensors_stays_on_cuda_unless_guarded(write_project):
    r = scan_path(write_project({"render.py": TORCH + (
        "def fused(rays):\n    assert rays.is_cuda\n    return rays\n"
        "def render(rays):\n    if rays.is_cuda:\n        assert rays.is_cuda\n    return rays\n")}))
    assert rows(r) == [("API120", "render.py", 3, "blocker"), ("API120", "render.py", 7, "info")]
    assert outlook(r)[0] == "stay_on_cuda"


# ---------------------------------------------------------------- collections, completeness, dependencies
def test_collection_of_examples_is_not_condemned_by_one_member(write_project):
    r = scan_path(write_project({
        "requirements.txt": "torch\n",
        "implementations/a/a.py": TORCH + "x = torch.zeros(1)\nprint(x)\n",
        "implementations/b/b.py": TORCH + "x = torch.zeros(1).cuda()\nprint(x)\n",
        "implementations/c/c.py": TORCH + "import R\nprint(1)\n",
        "implementations/c/setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"
                                      "CUDAExtension('R', ['r.cu'])\n",
        "implementations/c/r.cu": "__global__ void k() {}\n"}))
    assert [(s.path, s.outlook.value) for s in r.subprojects] == [
        ("implementations/a", "runs_on_mac"), ("implementations/b", "mac_for_dev"),
        ("implementations/c", "stay_on_cuda")]
    assert r.outlook.value == "mac_for_dev"


def test_unparsable_file_makes_the_outlook_incomplete(write_project):
    r = scan_path(write_project({"train.py": TORCH + "x = torch.zeros(1)\n", "model.py": "def f(:\n"}))
    assert outlook(r) == ("runs_on_mac", [], [])
    assert r.incomplete == ["model.py"]


def test_pin_below_the_first_mac_release_is_a_swap(write_project):
    r = scan_path(write_project({"requirements.txt": "bitsandbytes==0.40.0\n"}))
    assert rows(r) == [("DEP111", "requirements.txt", 1, "blocker")]
    assert outlook(r) == ("mac_for_dev", [], [("requirements.txt", 1, "DEP111", "swap", False)])
    assert r.edits[0].what == "raise the pin to >= 0.50.0"


def test_pin_at_the_first_mac_release_is_fine(write_project):
    r = scan_path(write_project({"requirements.txt": "bitsandbytes>=0.50.0\npytorch-lightning~=1.9.0\n"}))
    assert rows(r) == []


def test_a_project_made_of_tutorials_is_judged_by_them(write_project):
    r = scan_path(write_project({
        "requirements.txt": "torch\n",
        **{f"tutorials/{n}/main.py": TORCH + ("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                                             "x = torch.zeros(1).to(device)\n" if n != "basics" else "x = torch.zeros(1)\n")
           for n in ("basics", "cnn", "rnn")}}))
    assert [(s.path, s.outlook.value) for s in r.subprojects] == [
        ("tutorials/basics", "runs_on_mac"), ("tutorials/cnn", "mac_for_dev"), ("tutorials/rnn", "mac_for_dev")]
    assert outlook(r) == ("mac_for_dev", [], [("tutorials/cnn/main.py", 2, "API104", "edit", True),
                                              ("tutorials/rnn/main.py", 2, "API104", "edit", True)])


def test_examples_beside_a_main_project_stay_examples(write_project):
    # round 13: the main project has an entry (run.py); with no entry at all the example programs are how the project
    # runs and their limits count (tests/scan/test_round13_main_path.py)
    r = scan_path(write_project({"pkg/__init__.py": TORCH, "run.py": "import pkg\n\nif __name__ == '__main__':\n    print(pkg)\n",
                                 "examples/demo.py": TORCH + "x = torch.zeros(1).cuda()\n"}))
    assert rows(r, with_scope=True) == [("API101", "examples/demo.py", 2, "blocker", "examples")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_library_device_parameter_default_is_an_argument(write_project):
    r = scan_path(write_project({"lib/api.py": TORCH + (
        "def load(name, device='cuda' if torch.cuda.is_available() else 'cpu'):\n"
        "    return torch.nn.Linear(2, 2).to(device)\n")}))
    assert rows(r) == [("API104", "lib/api.py", 2, "degrades")]
    # round 7: an argument the caller's code passes is an edit there, not a flag
    assert outlook(r) == ("mac_for_dev", [], [("lib/api.py", 2, "API104", "edit", True)])


def test_private_function_device_default_is_an_edit(write_project):
    r = scan_path(write_project({"lib/api.py": TORCH + (
        "def _load(name, device='cuda' if torch.cuda.is_available() else 'cpu'):\n"
        "    return torch.nn.Linear(2, 2).to(device)\n")}))
    assert outlook(r) == ("mac_for_dev", [], [("lib/api.py", 2, "API104", "edit", True)])


def test_every_rule_unit_names_a_registered_rule():
    import importlib

    from mpsready import rules as registry
    from mpsready.scan.code import units

    units.load()
    codes = []
    for name in units.UNIT_MODULES:
        doc = importlib.import_module(f"mpsready.scan.code.units.{name}").__doc__ or ""
        code = doc.split()[0]
        assert registry.get(code).code == code, name  # the unit's doc starts with the rule it reports
        codes.append(code)
    assert codes == ["API103", "DTY102", "API101", "DTY101", "API113", "API118", "API119", "API107", "API108",
                     "API117", "EXT104", "API116", "API120", "API103", "EXT102", "EXT103", "API103", "API104",
                     "EXT108", "API103", "API104", "DEP107", "API107", "API102", "API105", "DTY101", "API114",
                     "API107"]


def test_rules_marked_for_migrate():
    from mpsready import rules as registry

    assert registry.autofix_codes() == ["API101", "API102", "API103", "API104", "API107", "API108", "API109", "API113",
                                        "API115", "API119", "DEP107", "DTY102", "EXT108"]
    assert not hasattr(registry.Rule, "migrate")  # one source of truth: the auto-fix registry


def test_outlook_marks_what_migrate_makes_from_the_autofix_registry(write_project):
    """The outlook's "migrate can make it" comes from the same per-finding answer as the effort (autofix.buckets):
    a registered code's finding is marked, a shape migrate leaves to a person is not, and the API102 finding on the
    torch.cuda.FloatTensor argument is fixed by the API119 edit of the same call."""
    r = scan_path(write_project({"m.py": TORCH + (
        "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n"
        "x = torch.zeros(3).cuda()\n"
        "print(torch.cuda.get_device_name(0))\n")}))
    assert outlook(r) == ("mac_for_dev", [], [("m.py", 2, "API102", "edit", True), ("m.py", 2, "API119", "edit", True),
                                              ("m.py", 3, "API101", "edit", True), ("m.py", 4, "API102", "edit", False)])


def test_torch_pin_before_mps_is_a_pin_raise_and_one_line_is_one_edit(write_project):
    r = scan_path(write_project({"requirements.txt": "torch==1.8.0\n",
                                 "train.py": TORCH + "a, b = torch.zeros(1).cuda(), torch.ones(1).cuda()\n"}))
    assert outlook(r) == ("mac_for_dev", [], [("requirements.txt", 1, "DEP109", "swap", False),
                                              ("train.py", 2, "API101", "edit", True)])
    assert r.edits[0].what == "raise the torch pin to >= 1.12 (the first release with the MPS backend)"


def test_auto_device_resolution_is_a_config_value(write_project):
    r = scan_path(write_project({"lib/trainer.py": TORCH + (
        "class Trainer:\n    def __init__(self, config):\n        if config.device == 'auto':\n"
        "            self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "        else:\n            self.device = config.device\n")}))
    assert rows(r) == [("API104", "lib/trainer.py", 5, "degrades")]
    assert outlook(r) == ("runs_on_mac", ["config.device='mps'"], [])


def test_an_option_name_holding_the_letters_mps_is_not_mps_support(write_project):
    # whisper: '--word_timestamps' contains "mps"; the CUDA-or-CPU default used to pass as MPS-aware
    r = scan_path(write_project({"main.py": TORCH + (
        "import argparse\n\ndef cli():\n    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    p.add_argument('--word_timestamps', action='store_true')\n"
        "    a = p.parse_args()\n    torch.nn.Linear(4, 4).to(a.device)\n\n"
        "if __name__ == '__main__':\n    cli()\n")}))
    assert rows(r) == [("API104", "main.py", 6, "degrades")]
    assert outlook(r) == ("runs_on_mac", ["--device mps"], [])


def test_a_help_text_naming_mps_as_a_word_is_mps_support():
    from mpsready.scan.code.astutil import names_mps_word
    assert [names_mps_word(s) for s in ("mps", "mps:0", "cuda, mps or cpu", "MPS", "--timestamps", "lamps", "mpsx")] == \
        [True, True, True, True, False, False, False]


def test_float64_made_on_the_cpu_and_cast_before_it_moves_is_info(write_project):
    # denoising-diffusion-pytorch: float64 schedules built on the CPU and cast before register_buffer used to
    # be blockers; a CPU float64 tensor is legal on a Mac
    r = scan_path(write_project({"pkg/diffusion.py": TORCH + (
        "def schedule(n):\n    return torch.linspace(1e-4, 0.02, n, dtype=torch.float64)\n"
        "class D(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        betas = schedule(n)\n        acc = torch.zeros(n, dtype=torch.float64)\n        acc = acc.float()\n"
        "        self.register_buffer('betas', betas.to(torch.float32))\n        self.register_buffer('acc', acc)\n")}))
    assert rows(r) == [("DTY101", "pkg/diffusion.py", 3, "info"), ("DTY101", "pkg/diffusion.py", 8, "info")]
    assert [f.output_evidence().get("cpu_tensor") for f in r.findings if f.code == "DTY101"] == ["torch.linspace", "torch.zeros"]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_float64_made_on_the_cpu_that_moves_before_a_cast_is_a_blocker_at_the_move(write_project):
    r = scan_path(write_project({"m.py": TORCH + (
        "class D(torch.nn.Module):\n    def __init__(self, n, dev):\n        super().__init__()\n"
        "        betas = torch.linspace(1e-4, 0.02, n, dtype=torch.float64)\n"
        "        alphas = torch.cumprod(1.0 - betas, 0)\n"
        "        self.register_buffer('betas', betas)\n"
        "        self.w = torch.nn.Parameter(alphas)\n"
        "        self.a = alphas.to(dev)\n"
        "        self.z = torch.zeros(3, dtype=torch.float64).to(dev)\n"
        "        self.y = torch.ones(3, dtype=torch.double, device=dev)\n")}))
    assert rows(r) == [("DTY101", "m.py", 7, "blocker"), ("DTY101", "m.py", 8, "blocker"),
                       ("DTY101", "m.py", 9, "blocker"), ("DTY101", "m.py", 10, "blocker"),
                       ("DTY101", "m.py", 11, "blocker"), ("DTY101", "m.py", 5, "info")]
    assert [f.message.split(" (line")[0] for f in r.findings[:3]] == [
        "betas holds a float64 tensor made on the CPU", "alphas holds a float64 tensor made on the CPU",
        "alphas holds a float64 tensor made on the CPU"]


def test_float64_factory_after_set_default_device_stays_a_blocker(write_project):
    r = scan_path(write_project({"m.py": TORCH + "torch.set_default_device('mps')\n"
                                                 "x = torch.zeros(3, dtype=torch.float64)\n"}))
    assert rows(r) == [("DTY101", "m.py", 3, "blocker")]


def test_nccl_in_a_ddp_only_training_entry_is_on_the_main_path(write_project):
    # DiT's train.py: the process group is set up unconditionally, so a Mac needs an edit there
    r = scan_path(write_project({"train.py": TORCH + (
        "import torch.distributed as dist\n\ndef main():\n    dist.init_process_group('nccl')\n"
        "    torch.nn.Linear(2, 2)\n\nif __name__ == '__main__':\n    main()\n")}))
    assert [(f.code, f.location.line, f.scope.value) for f in r.findings] == [("API107", 5, "main"), ("DEP110", None, "main")]
    assert outlook(r)[0] == "mac_for_dev"


def test_nccl_in_distributed_only_code_stays_off_the_main_path(write_project):
    r = scan_path(write_project({"train.py": TORCH + (
        "import torch.distributed as dist\n\ndef init_distributed_mode(args):\n    dist.init_process_group('nccl')\n\n"
        "def main(args):\n    if args.distributed:\n        dist.init_process_group(backend='nccl')\n")}))
    assert [(f.code, f.location.line, f.scope.value) for f in r.findings] == [
        ("API107", 5, "distributed"), ("API107", 9, "distributed"), ("DEP110", None, "main")]
    assert outlook(r) == ("runs_on_mac", [], [])


SELECT = ("def select_device(device=''):\n"
          "    if device == 'mps' and torch.backends.mps.is_available():\n        return torch.device('mps')\n"
          "    if device != 'cpu' and torch.cuda.is_available():\n        return torch.device('cuda:0')\n"
          "    return torch.device('cpu')\n")


def test_a_device_option_that_picks_mps_only_when_asked_needs_the_flag(write_project):
    # yolov5: `--device ""` means CUDA if available, else the CPU; MPS only for `--device mps`
    r = scan_path(write_project({"utils.py": TORCH + SELECT, "train.py": TORCH + (
        "import argparse\nfrom utils import select_device\np = argparse.ArgumentParser()\n"
        "p.add_argument('--device', default='')\na = p.parse_args()\n"
        "torch.nn.Linear(2, 2).to(select_device(a.device))\n")}))
    assert rows(r) == [("API103", "utils.py", 6, "info")]  # torch.device('cuda:0') inside the CUDA check
    assert outlook(r) == ("runs_on_mac", ["--device mps"], [])


def test_a_cpu_default_device_option_needs_the_flag_an_empty_one_without_mps_does_not(write_project):
    cpu = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default='cpu')\n"
        "a = p.parse_args()\ntorch.nn.Linear(2, 2).to(a.device)\n")}))
    assert outlook(cpu) == ("runs_on_mac", ["--device mps"], [])


def test_device_options_that_need_no_flag(write_project, tmp_path):
    r = scan_path(write_project({"train.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default='')\n"
        "p.add_argument('--gpu-device', default='mps')\np.add_argument('--cpu-device', default='cpu', "
        "choices=['cpu', 'cuda'])\na = p.parse_args()\n"), "tests/test_x.py": TORCH + (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default='cpu')\n")}))
    assert outlook(r) == ("runs_on_mac", [], [])


def test_findings_in_a_function_called_only_behind_an_off_option_are_behind_it(write_project):
    # whisper: transcribe() calls add_word_timestamps() only `if word_timestamps:`; the .double() MPS refuses
    # sits two calls down, in another file
    files = {"align.py": "def find(x):\n    return x.double().cpu()\n\ndef align(x):\n    return find(x)\n",
             "main.py": TORCH + (
                 "import argparse\nfrom align import align\n\ndef run(x, word_timestamps=False):\n"
                 "    if word_timestamps:\n        align(x)\n    return x.sum()\n\ndef cli():\n"
                 "    p = argparse.ArgumentParser()\n    p.add_argument('--device', default='mps')\n"
                 "    p.add_argument('--word_timestamps', action='store_true')\n    a = p.parse_args()\n"
                 "    run(torch.zeros(3, device=a.device), a.word_timestamps)\n\nif __name__ == '__main__':\n    cli()\n")}
    r = scan_path(write_project(files))
    assert [(f.code, f.location.path, f.location.line, f.output_evidence().get("behind_flag"), f.output_evidence().get("caller_guard"))
            for f in r.findings if f.code == "DTY101"] == [("DTY101", "align.py", 2, "--word_timestamps", "find")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_one_unguarded_or_indirect_use_keeps_the_finding_limiting(write_project):
    base = {"align.py": "def align(x):\n    return x.double().cpu()\n"}
    head = TORCH + ("import argparse\nfrom align import align\np = argparse.ArgumentParser()\n"
                    "p.add_argument('--word_timestamps', action='store_true')\np.add_argument('--fast', default=True)\n"
                    "a = p.parse_args()\nx = torch.zeros(3, device='mps')\n")
    for tail in ("if a.word_timestamps:\n    align(x)\nalign(x)\n",      # one call without the test
                 "if a.word_timestamps:\n    align(x)\nhooks = [align]\n",  # used other than by a call
                 "if a.fast:\n    align(x)\n"):                             # an option that is on by default
        r = scan_path(write_project({**base, "main.py": head + tail}))
        assert [(f.code, f.location.line, f.output_evidence().get("behind_flag")) for f in r.findings
                if f.code == "DTY101"] == [("DTY101", 2, None)], tail
        assert outlook(r)[0] == "mac_for_dev", tail


# ---------------------------------------------------------------- knowledge base entries
def test_isaacgym_import_is_cuda_only_with_no_alternative(write_project):
    r = scan_path(write_project({"train.py": "from isaacgym import gymapi\nimport torch\n\n"
                                             "if __name__ == '__main__':\n    gym = gymapi.acquire_gym()\n"}))
    assert rows(r) == [("DEP107", "train.py", 1, "blocker")]
    assert r.findings[0].output_evidence()["package"] == "isaacgym" and r.findings[0].output_evidence()["no_alternative"] is True
    assert outlook(r) == ("stay_on_cuda", [], [])


def test_isaacgym_in_an_optional_extra_or_a_lookalike_name_does_not_limit(write_project):
    r = scan_path(write_project({"train.py": TORCH + "import gym\n",
                                 "pyproject.toml": '[project]\nname = "p"\nversion = "0"\ndependencies = ["gym"]\n'
                                                   '[project.optional-dependencies]\nsim = ["isaacgym"]\n'}))
    assert rows(r) == [("DEP101", "pyproject.toml", 6, "blocker")]
    assert r.findings[0].output_evidence()["optional"] is True
    assert outlook(r) == ("runs_on_mac", [], [])


def test_a_negated_cuda_test_is_no_guard(write_project):
    # stable-diffusion's samplers: `if attr.device != torch.device("cuda"): attr = attr.to(torch.device("cuda"))`
    # is True on a Mac, so the move runs there; it used to be taken for a CUDA-availability check
    r = scan_path(write_project({"sampler.py": TORCH + (
        "class S:\n    def register_buffer(self, name, attr):\n"
        "        if attr.device != torch.device('cuda'):\n            attr = attr.to(torch.device('cuda'))\n"
        "        setattr(self, name, attr)\n"
        "def f(x):\n    if not torch.cuda.is_available():\n        return x.cuda()\n"
        "    if torch.cuda.is_available() and x.numel() > 2:\n        return x.cuda()\n"
        "    return x\n")}))
    assert [(f.code, f.location.line, f.severity.value, bool(f.output_evidence().get("guarded"))) for f in r.findings
            if f.code != "DEP110"] == [("API103", 5, "blocker", False), ("API101", 9, "blocker", False),
                                       ("API102", 10, "info", True), ("API101", 11, "info", True)]


def test_a_cuda_kernel_dispatched_on_is_available_and_is_cuda_has_a_wired_pure_path(write_project):
    # GroundingDINO: `if torch.cuda.is_available() and value.is_cuda:` kernel, else the pure-PyTorch function;
    # the kernel's EXT101 used to have no alternative (stay_on_cuda)
    r = scan_path(write_project({
        "train.py": TORCH + "from pkg.ops.attn import attn\nprint(attn(torch.randn(4, device='mps')))\n",
        "pkg/__init__.py": "", "pkg/ops/__init__.py": "", "pkg/ops/csrc/k_cuda.cu": "// kernel\n",
        "pkg/ops/attn.py": TORCH + (
            "from torch.autograd import Function\n"
            "try:\n    from pkg import _C\nexcept ImportError:\n    _C = None\n"
            "class KFn(Function):\n    @staticmethod\n    def forward(ctx, x):\n        return _C.k(x)\n"
            "def k_pytorch(x):\n    return x * 2\n"
            "def attn(x):\n    if torch.cuda.is_available() and x.is_cuda:\n        return KFn.apply(x)\n"
            "    return k_pytorch(x)\n")}))
    assert outlook(r) == ("mac_for_dev", [], [("pkg/ops/csrc/k_cuda.cu", None, "EXT101", "wire", False)])


def test_an_unused_torch_helper_without_any_cuda_kernel_is_no_pure_path(write_project):
    # hifi-gan: spectral_de_normalize_torch() is an unused helper, not a stand-in for a kernel (no EXT109)
    r = scan_path(write_project({"audio.py": TORCH + "def norm_torch(x):\n    return x * 2\n"
                                                     "def denorm_torch(x):\n    return x / 2\n",
                                 "train.py": TORCH + "from audio import norm_torch\nprint(norm_torch(torch.ones(2)))\n"}))
    assert rows(r) == []


def test_a_manifest_beside_code_the_main_path_never_runs_does_not_limit(write_project):
    # Depth-Anything: metric_depth/environment.yml and a vendored hub model's requirements.txt used to limit the
    # root's outlook although run.py imports nothing from those folders
    root = write_project({
        "requirements.txt": "torch>=2.2\n",
        "run.py": TORCH + "dev = 'mps' if torch.backends.mps.is_available() else 'cpu'\nprint(torch.ones(2, device=dev))\n",
        "sub/environment.yml": "dependencies:\n  - pytorch-cuda=11.7\n", "sub/train.py": TORCH + "x = 1\n",
        "sub/lib/requirements.txt": "xformers==0.0.18\n", "sub/lib/layer.py": "y = 2\n",
        "requirements/extra.txt": "flash-attn\n"})
    r = scan_path(root)
    assert [(f.code, f.location.path, f.output_evidence().get("reach")) for f in r.findings] == [
        ("DEP101", "requirements/extra.txt", None), ("DEP105", "sub/environment.yml", "off_main_path"),
        ("DEP101", "sub/lib/requirements.txt", "off_main_path")]
    assert outlook(r)[0] == "mac_for_dev"  # only requirements/extra.txt (beside no code) still limits


def test_a_cuda_dispatch_in_one_function_is_no_pure_path_for_an_assert_in_another(write_project):
    # svox2: sample() dispatches `if use_kernel and x.is_cuda and _C is not None:` with a PyTorch else branch, but
    # volume_render_fused() asserts CUDA and has no other path: the project stays on CUDA
    r = scan_path(write_project({
        "train.py": TORCH + "from grid import Grid\nGrid().render(torch.ones(2, device='mps'))\n",
        "csrc/k.cu": "// kernel\n",
        "grid.py": TORCH + (
            "from torch.autograd import Function\n"
            "try:\n    import _C\nexcept ImportError:\n    _C = None\n"
            "class KFn(Function):\n    @staticmethod\n    def forward(ctx, x):\n        return _C.k(x)\n"
            "class Grid:\n    def sample(self, x, use_kernel=True):\n"
            "        if use_kernel and x.is_cuda and _C is not None:\n            return KFn.apply(x)\n"
            "        return x * 2\n"
            "    def render(self, x):\n        assert _C is not None and x.is_cuda, 'CUDA extension required'\n"
            "        return KFn.apply(x)\n")}))
    assert [(f.code, f.location.line, f.output_evidence().get("pure_path")) for f in r.findings if f.code == "API120"] == [
        ("API120", 17, None)]
    assert outlook(r)[0] == "stay_on_cuda"


def test_a_script_the_readme_runs_is_main_whatever_its_folder(write_project):
    # GroundingDINO's README runs demo/inference_on_a_image.py: its findings limit the outlook, while a demo/
    # script the README does not run stays an example
    r = scan_path(write_project({
        "README.md": "# x\n\n```bash\npython demo/infer.py --image a.png\n```\n",
        "pkg/__init__.py": "", "pkg/model.py": TORCH + "class M(torch.nn.Module):\n    pass\n",
        "demo/infer.py": TORCH + "torch.nn.Linear(2, 2).to('cuda')\n",
        "demo/other.py": TORCH + "torch.nn.Linear(2, 2).to('cuda')\n"}))
    assert [(f.code, f.location.path, f.scope.value, f.output_evidence().get("scope_from")) for f in r.findings
            if f.code != "DEP110"] == [("API103", "demo/infer.py", "main", "readme"),
                                       ("API103", "demo/other.py", "examples", None)]
    assert outlook(r) == ("mac_for_dev", [], [("demo/infer.py", 2, "API103", "edit", True)])


def test_launcher_folders_importing_their_package_from_the_root_are_one_project(write_project):
    # dinov2: proj/run/train/train.py does `from proj.train.train import main`; the folders used to be judged
    # as four independent examples because only the first part of an import was compared
    body = TORCH + "def main():\n    torch.nn.Linear(2, 2).cuda()\nif __name__ == '__main__':\n    main()\n"
    r = scan_path(write_project({
        "setup.py": "from setuptools import setup\nsetup(name='proj')\n", "proj/__init__.py": "",
        "proj/train/__init__.py": "", "proj/train/train.py": body, "proj/eval/__init__.py": "", "proj/eval/knn.py": body,
        "proj/run/__init__.py": "", "proj/run/train/__init__.py": "",
        "proj/run/train/train.py": "from proj.train.train import main\nif __name__ == '__main__':\n    main()\n",
        "proj/run/eval/__init__.py": "",
        "proj/run/eval/knn.py": "from proj.eval import knn\nif __name__ == '__main__':\n    knn.main()\n"}))
    assert r.subprojects == []
    assert outlook(r) == ("mac_for_dev", [], [("proj/eval/knn.py", 3, "API101", "edit", True),
                                              ("proj/train/train.py", 3, "API101", "edit", True)])


def test_cpm_kernels_is_left_out_on_the_mac(write_project):
    # ChatGLM-6B: cpm_kernels raises 'Unknown platform: darwin' on import; it only serves CUDA quantization
    r = scan_path(write_project({"requirements.txt": "torch>=2.1\ncpm_kernels\n",
                                 "chat.py": TORCH + "m = torch.nn.Linear(2, 2).to('mps')\n"}))
    assert rows(r) == [("DEP101", "requirements.txt", 2, "blocker")]
    assert [(e.path, e.line, e.kind, e.what.split(":")[0]) for e in r.edits] == [
        ("requirements.txt", 2, "swap", "use remove on macOS")]


def test_a_backend_chosen_by_platform_is_nccl_on_a_mac(write_project):
    # NVlabs/edm: `backend = 'gloo' if os.name == 'nt' else 'nccl'` is NCCL on macOS; the migrated form that asks
    # for CUDA first is gloo there
    r = scan_path(write_project({"train.py": TORCH + (
        "import os\nimport torch.distributed as dist\n\ndef init():\n"
        "    backend = 'gloo' if os.name == 'nt' else 'nccl'\n    dist.init_process_group(backend=backend)\n"
        "    dist.init_process_group(backend='gloo' if sys.platform.startswith('win') else 'nccl')\n"
        "    dist.init_process_group('nccl' if torch.cuda.is_available() else 'gloo')\n\n"
        "if __name__ == '__main__':\n    init()\n")}))
    assert [(f.code, f.location.line) for f in r.findings if f.code == "API107"] == [("API107", 7), ("API107", 8)]


POST = ("import warnings\n\ndef components(mask):\n    from pkg import _C\n    return _C.components(mask)\n\n"
        "def postprocess(m):\n    try:\n        m = components(m)\n    except Exception as e:\n"
        "        warnings.warn(f'{e}: skipped')\n    return m\n")
SETUP = ("from setuptools import setup\n\ndef exts():\n    try:\n        from torch.utils.cpp_extension import CUDAExtension\n"
         "        return [CUDAExtension('pkg._C', ['pkg/csrc/k.cu'])]\n    except Exception as e:\n"
         "        print('skipped', e)\n        return []\n\nsetup(name='pkg', ext_modules=exts())\n")


def test_an_extension_called_under_try_except_in_every_importing_file_has_a_fallback(write_project):
    # sam2: get_connected_components() imports _C and is called under try/except in misc.py and transforms.py;
    # the import from a second file used to leave the extension without an alternative (stay_on_cuda)
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/csrc/k.cu": "// kernel\n", "pkg/post.py": POST,
             "pkg/transforms.py": ("import warnings\n\ndef fill(m):\n    from pkg.post import components\n    try:\n"
                                   "        m = components(m)\n    except Exception as e:\n        warnings.warn(str(e))\n"
                                   "    return m\n")}
    r = scan_path(write_project(files))
    assert [(f.code, f.severity.value) for f in r.findings if f.code.startswith("EXT")] == [
        ("EXT101", "degrades"), ("EXT102", "degrades")]
    assert outlook(r)[0] == "runs_on_mac"


def test_one_unguarded_call_from_another_file_keeps_the_extension_required(write_project):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/csrc/k.cu": "// kernel\n", "pkg/post.py": POST,
             "pkg/transforms.py": "from pkg.post import components\n\ndef fill(m):\n    return components(m)\n"}
    r = scan_path(write_project(files))
    assert outlook(r)[0] == "stay_on_cuda"


def test_a_torch_device_cuda_default_every_call_overrides_is_info(write_project):
    # sam2: load_video_frames(..., compute_device=torch.device("cuda")) is always called with compute_device=
    files = {"pkg/__init__.py": "",
             "pkg/io.py": TORCH + "def load(path, size, compute_device=torch.device('cuda')):\n"
                                  "    return torch.zeros(size, device=compute_device)\n",
             "pkg/pred.py": "from pkg.io import load\n\nclass P:\n    def __init__(self, device):\n"
                            "        self.x = load('a', 3, compute_device=device)\n"}
    r = scan_path(write_project(files))
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code == "API103"] == [
        ("API103", 2, "info")]
    files["pkg/other.py"] = "from pkg.io import load\nx = load('b', 2)\n"  # one call relies on the default
    r = scan_path(write_project(files))
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code == "API103"] == [
        ("API103", 2, "blocker")]


def test_code_under_a_test_on_an_options_value_its_default_fails_is_behind_the_option(write_project):
    # ConvNeXt: `opt_lower = args.opt.lower()`, `if 'fused' in opt_lower: assert torch.cuda.is_available()` with
    # --opt defaulting to 'adamw'
    opt = (TORCH + "def make(args, model):\n    opt_lower = args.opt.lower()\n    if 'fused' in opt_lower:\n"
           "        assert torch.cuda.is_available(), 'fused needs CUDA'\n    return torch.optim.AdamW(model.parameters())\n")
    train = TORCH + ("import argparse\nfrom opt import make\np = argparse.ArgumentParser()\n"
                     "p.add_argument('--opt', default=DEFAULT)\na = p.parse_args()\n"
                     "m = torch.nn.Linear(2, 2).to('mps')\nmake(a, m)\n")
    off = scan_path(write_project({"opt.py": opt, "train.py": train.replace("DEFAULT", "'adamw'")}))
    assert [(f.code, f.location.line, f.output_evidence().get("behind_flag")) for f in off.findings if f.code == "API120"] == [
        ("API120", 5, "--opt")]
    assert outlook(off)[0] == "runs_on_mac"
    on = scan_path(write_project({"opt.py": opt, "train.py": train.replace("DEFAULT", "'FusedLAMB'")}))
    assert [(f.code, f.location.line, f.output_evidence().get("behind_flag")) for f in on.findings if f.code == "API120"] == [
        ("API120", 5, None)]
    assert outlook(on)[0] == "mac_for_dev"


README_API = ("# pkg\n\n```python\nimport torch\nfrom pkg.api import build\n\nmodel = build(<your_config>)\n```\n")


def test_a_librarys_readme_code_sets_its_main_path_and_its_api_device_default_is_an_argument(write_project):
    # sam2: no root entry script; the README's Python code imports sam2.build_sam, so training/ and the
    # benchmark are off the main path, and build_sam2(..., device="cuda") is an argument a Mac user passes
    files = {"README.md": README_API, "pkg/__init__.py": "",
             "pkg/api.py": TORCH + "def build(cfg, device='cuda'):\n    return torch.nn.Linear(2, 2).to(device)\n",
             "training/train.py": TORCH + "from pkg.api import build\nbuild(1).cuda()\ntorch.cuda.set_device(0)\n"}
    r = scan_path(write_project(files))
    assert [(f.code, f.location.path, f.output_evidence().get("reach"), f.output_evidence().get("argument")) for f in r.findings
            if f.code != "DEP110"] == [("API103", "pkg/api.py", None, "build(..., device='mps')"),
                                       ("API101", "training/train.py", "off_main_path", None),
                                       ("API102", "training/train.py", "off_main_path", None)]
    # round 7: the README's code must pass it, an edit there (the labels of the 43 set and of 2026-12b agree)
    assert outlook(r) == ("mac_for_dev", [], [("pkg/api.py", 2, "API103", "edit", True)])


def test_a_library_whose_readme_shows_no_code_keeps_every_file_on_the_path(write_project):
    files = {"README.md": "# pkg\n\n```bash\npip install pkg\n```\n", "pkg/__init__.py": "",
             "pkg/api.py": TORCH + "def build(cfg, device='cpu'):\n    return torch.nn.Linear(2, 2).to(device)\n",
             "training/train.py": TORCH + "from pkg.api import build\nbuild(1).cuda()\n"}
    r = scan_path(write_project(files))
    assert outlook(r) == ("mac_for_dev", [], [("training/train.py", 3, "API101", "edit", True)])
