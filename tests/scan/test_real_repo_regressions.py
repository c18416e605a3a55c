"""Regressions found by scanning real research repositories (small fixtures written here, not their code).

- nanoGPT: `torch.cuda.is_available() and torch.cuda.is_bf16_supported()` never calls the second part on a Mac.
- DETR: the NCCL backend is set as an attribute (`args.dist_backend = 'nccl'`); helpers such as
  `all_gather`/`init_distributed_mode` and `if args.distributed:` blocks are multi-GPU-only code.
- dinov2: one file importing mmcv five times gave five findings; setup.py reads requirement files through
  a helper whose result is tuple-unpacked.
- dinov2: a NumPy-to-torch dtype table and `x.dtype == torch.float64` checks were reported as float64 use.
- torch itself: annotations such as `stream: torch.cuda.Stream` were reported as CUDA calls.
- StyleGAN2-ADA: custom ops are built by a wrapper (`custom_ops.get_plugin(sources=[... '.cu'])`) inside
  try/except that falls back to a reference implementation; the .cu files were reported without fallback.
- mamba: the project's own package (mamba_ssm) was reported as a CUDA dependency of itself.
- Pytorch-UNet: `except torch.cuda.OutOfMemoryError` was a blocker, though the class needs no CUDA.
- Pytorch-UNet: a later `device.type != 'mps'` test hid its CUDA-or-CPU selection (API104).
"""

from mpsready.scan import scan_path
from tests.scan.conftest import rows


def test_and_chain_after_cuda_check_is_guarded(write_project):
    root = write_project({"a.py": "import torch\n"
                                  "bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\n"})
    r = scan_path(root)
    assert rows(r) == [("API102", "a.py", 2, "info")]
    assert r.findings[1].output_evidence()["guarded"] is True  # [0] is DEP110


def test_attribute_assigned_nccl_backend_and_distributed_helpers(write_project):
    root = write_project({"util.py": (
        "import torch\n"
        "import torch.distributed as dist\n\n"
        "def init_distributed_mode(args):\n"
        "    args.dist_backend = 'nccl'\n"
        "    torch.cuda.set_device(args.gpu)\n"
        "    dist.init_process_group(backend=args.dist_backend)\n\n"
        "def all_gather(data):\n"
        "    return torch.tensor([1], device='cuda')\n\n"
        "def train(args, model):\n"
        "    if args.distributed:\n"
        "        model = model.cuda()\n"
        "    return model.cuda()\n")})
    assert rows(scan_path(root), with_scope=True) == [
        ("API102", "util.py", 6, "blocker", "distributed"),
        ("API107", "util.py", 7, "blocker", "distributed"),
        ("API103", "util.py", 10, "blocker", "distributed"),
        ("API101", "util.py", 14, "blocker", "distributed"),
        ("API101", "util.py", 15, "blocker", "main"),
    ]


def test_one_finding_per_package_per_file(write_project):
    root = write_project({"seg.py": "import mmcv\nfrom mmcv.runner import load\nfrom mmcv.ops import nms\n"})
    assert rows(scan_path(root)) == [("DEP107", "seg.py", 1, "blocker")]


def test_setup_py_tuple_unpacked_requirement_helper(write_project):
    root = write_project({
        "setup.py": (
            "from setuptools import setup\n\n"
            "def get_requirements(path='requirements-main.in'):\n"
            "    return open(path).read().splitlines(), []\n\n"
            "reqs, _ = get_requirements()\n"
            "extra, _ = get_requirements('requirements-x.in')\n"
            "setup(install_requires=reqs, extras_require={'x': extra})\n"),
        "requirements-main.in": "numpy\nxformers\n",
        "requirements-x.in": "cuml-cu11\n",
    })
    r = scan_path(root)
    assert rows(r) == [("DEP101", "requirements-main.in", 2, "blocker"), ("DEP101", "requirements-x.in", 1, "blocker")]
    assert [f.output_evidence().get("optional", False) for f in r.findings] == [False, True]


def test_project_importing_its_own_package_is_not_a_dependency(write_project):
    root = write_project({
        "mamba_ssm/__init__.py": "",
        "mamba_ssm/ops.py": "import torch\n",
        "benchmarks/bench.py": "from mamba_ssm.ops import x\nimport flash_attn\n",
    })
    assert rows(scan_path(root)) == [("DEP107", "benchmarks/bench.py", 2, "blocker")]


def test_early_return_guards_mark_the_rest_of_a_function(write_project):
    root = write_project({"m.py": (
        "import torch\n"
        "import torch.distributed as dist\n\n"
        "def sync(self):\n"
        "    if not is_dist_avail_and_initialized():\n"
        "        return\n"
        "    t = torch.tensor([1.0], device='cuda')\n\n"
        "def stats():\n"
        "    if not torch.cuda.is_available():\n"
        "        return None\n"
        "    return torch.cuda.max_memory_allocated()\n\n"
        "def plain():\n"
        "    return torch.ones(1).cuda()\n")})
    assert rows(scan_path(root), with_scope=True) == [
        ("API103", "m.py", 7, "blocker", "distributed"),
        ("API101", "m.py", 15, "blocker", "main"),
        ("API102", "m.py", 12, "info", "main"),
    ]


def test_dtype_tables_and_comparisons_create_no_tensor(write_project):
    root = write_project({"d.py": (
        "import numpy as np\nimport torch\n"
        "TABLE = {np.float64: torch.float64, np.complex128: torch.complex128}\n"
        "def f(x):\n"
        "    if x.dtype == torch.float64:\n"
        "        return x.float()\n"
        "    return torch.zeros(2, dtype=torch.float64)\n")})
    # the one float64 tensor is made on the CPU (no device=): info, not a blocker (its return is not followed)
    assert rows(scan_path(root)) == [("DTY101", "d.py", 7, "info")]


def test_type_annotations_are_not_uses(write_project):
    root = write_project({"t.py": (
        "import torch\n"
        "def f(s: torch.cuda.Stream, d: torch.dtype = torch.float32) -> torch.cuda.Event:\n"
        "    x: torch.cuda.Stream = s\n"
        "    return torch.cuda.Event()\n")})
    assert rows(scan_path(root)) == [("API112", "t.py", 4, "blocker")]


def test_cu_sources_built_under_a_fallback_are_lowered(write_project):
    root = write_project({
        "ops/act.cu": "__global__ void k() {}\n",
        "ops/act.h": "",
        "ops/act.py": (
            "import os\nimport warnings\nfrom . import custom_ops\n_plugin = None\n\n"
            "def _init():\n"
            "    global _plugin\n"
            "    sources = [os.path.join(os.path.dirname(__file__), s) for s in ['act.cpp', 'act.cu']]\n"
            "    try:\n"
            "        _plugin = custom_ops.get_plugin('act_plugin', sources=sources)\n"
            "    except:\n"
            "        warnings.warn('Falling back to the slow reference implementation')\n"
            "    return _plugin is not None\n"),
        "ops/custom_ops.py": ("import torch.utils.cpp_extension\n\n"
                              "def get_plugin(name, sources, **kw):\n"
                              "    return torch.utils.cpp_extension.load(name=name, sources=sources, **kw)\n"),
        "other/raw.cu": "__global__ void q() {}\n",
    })
    r = scan_path(root)
    assert rows(r) == [("EXT101", "other/raw.cu", None, "blocker"), ("EXT101", "ops/act.cu", None, "degrades"),
                       ("EXT107", "ops/custom_ops.py", 4, "info")]
    assert r.findings[1].output_evidence() == {"files": 1, "fallback": "ops/act.py:11"}


def test_fix_hints_name_a_call_not_a_note(write_project):
    # nanoGPT's `torch.cuda.is_bf16_supported()` got the fix "Use bfloat16 needs macOS 14+ on MPS."
    root = write_project({"a.py": "import torch\n"
                                  "bf16 = torch.cuda.is_bf16_supported()\n"
                                  "x = torch.cuda.DoubleTensor(3)\n"})
    r = scan_path(root)
    assert rows(r) == [("API102", "a.py", 3, "blocker"), ("API102", "a.py", 2, "degrades")]
    assert [f.fix for f in r.findings] == [
        "Use torch.tensor(..., dtype=torch.float32, device=device) (MPS has no float64).",
        "Use torch.backends.mps.is_macos_or_newer(14, 0) (MPS bfloat16 needs macOS 14).",
        "Declare the dependencies (requirements.txt or [project] dependencies in pyproject.toml) and scan again.",
    ]


def test_early_exit_on_not_cuda_or_anything_guards_the_rest_of_the_function(write_project):
    # vit-pytorch simple_flash_attn_vit.py: `if not torch.cuda.is_available() or not use_flash: return`
    # then torch.cuda.get_device_properties(...) was reported as a blocker; it never runs on a Mac.
    root = write_project({"a.py": "import torch\n\n"
                                  "def setup(use_flash):\n"
                                  "    if not torch.cuda.is_available() or not use_flash:\n"
                                  "        return\n"
                                  "    props = torch.cuda.get_device_properties(0)\n"
                                  "    return props\n\n"
                                  "def other(use_flash):\n"
                                  "    if not use_flash or torch.cuda.is_available():\n"
                                  "        return\n"
                                  "    return torch.cuda.get_device_properties(0)\n"})
    r = scan_path(root)
    assert rows(r) == [("API102", "a.py", 12, "blocker"), ("API102", "a.py", 6, "info")]


def test_sdp_kernel_fix_names_the_replacement_not_determinism(write_project):
    # vit-pytorch simple_flash_attn_vit.py: `with torch.backends.cuda.sdp_kernel(**config):` was told to use
    # torch.use_deterministic_algorithms(), which has nothing to do with attention backends.
    root = write_project({"a.py": "import torch\n"
                                  "with torch.backends.cuda.sdp_kernel(enable_math=False):\n"
                                  "    pass\n"
                                  "torch.backends.cudnn.benchmark = True\n"})
    r = scan_path(root)
    assert [(f.code, f.location.line, f.fix) for f in r.findings] == [
        ("DEP110", None, "Declare the dependencies (requirements.txt or [project] dependencies in pyproject.toml) and scan again."),
        ("API105", 2, "Use torch.nn.attention.sdpa_kernel([SDPBackend....]) (sdp_kernel is deprecated); keep "
                      "SDPBackend.MATH in the list so devices without flash attention have a path."),
        ("API105", 4, "Keep for CUDA; for reproducibility on every backend use torch.use_deterministic_algorithms()."),
    ]


def test_catching_cuda_out_of_memory_is_harmless_on_a_mac(write_project):
    # Pytorch-UNet's train.py catches torch.cuda.OutOfMemoryError; the class is torch.OutOfMemoryError (2.13.0)
    # and is importable without CUDA, so the except clause runs on a Mac (an emulated run completes).
    root = write_project({"train.py": "import torch\n\ndef step(x):\n    try:\n        return x * 2\n"
                                      "    except torch.cuda.OutOfMemoryError:\n        return None\n"})
    r = scan_path(root)
    assert rows(r) == [("API102", "train.py", 6, "info")]
    assert r.findings[1].message == "torch.cuda.OutOfMemoryError: harmless on a Mac"
    assert r.outlook.value == "runs_on_mac"


def test_selection_is_reported_when_mps_is_only_compared_against(write_project):
    # Pytorch-UNet's train.py picks CUDA-or-CPU, then asks `device.type != 'mps'` for autocast: the comparison
    # does not make the selection consider MPS, so the Mac still trains on the CPU.
    root = write_project({"train.py": (
        "import torch\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.zeros(1, device=device)\n"
        "with torch.autocast(device.type if device.type != 'mps' else 'cpu'):\n"
        "    pass\n")})
    r = scan_path(root)
    assert [row for row in rows(r) if row[0] == "API104"] == [("API104", "train.py", 2, "degrades")]


def test_selection_that_can_choose_mps_is_not_reported(write_project):
    root = write_project({"train.py": (
        "import torch\n"
        "if torch.cuda.is_available():\n"
        "    device = torch.device('cuda')\n"
        "elif torch.backends.mps.is_available():\n"
        "    device = torch.device('mps')\n"
        "else:\n"
        "    device = torch.device('cpu')\n")})
    assert [row for row in rows(scan_path(root)) if row[0] == "API104"] == []
