"""Issue 32, round 9 (h32f): the classes of the census of misses (``benchmarks/scan_census.py``) on the too-pessimistic
``stay_on_cuda`` side and the too-optimistic side. Each rule has a fixture and a look-alike that keeps its old verdict.
Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme


# ---------------------------------------------------------------- a kernel's helper reached only behind a condition
# (model/core_reach.py): the CUDA-core rule read the use inside the helper as unconditional, though every call of the
# helper sits behind the availability flag the except handler sets

GUARD = "try:\n    import xformers.ops\n    HAVE_XF = True\nexcept ImportError:\n    HAVE_XF = False\n"
PLAIN = "torch.softmax(q @ k.transpose(-1, -2), -1) @ v"
TRAIN = "import torch\nfrom model import Attention\n\nq = torch.zeros(1, 2, 4)\nprint(Attention()(q, q, q))\n"


def _attention(forward_body: str) -> str:
    return ("import torch\nfrom torch import nn\n\n" + GUARD + "\n\nclass Attention(nn.Module):\n"
            "    def forward(self, q, k, v):\n" + forward_body + "\n"
            "    def _fast(self, q, k, v):\n        return self._split(q, k, v)\n\n"
            "    def _split(self, q, k, v):\n        return xformers.ops.memory_efficient_attention(q, k, v)\n")


def _core(r):
    return [(f.code, f.location.line, f.severity.value, f.core_op) for f in r.findings]


def test_a_helper_called_only_behind_the_availability_flag_is_no_core_use(scan_project):
    body = f"        if HAVE_XF:\n            return self._fast(q, k, v)\n        return {PLAIN}\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "degrades", None)]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_helper_forward_calls_unconditionally_stays_a_core_use(scan_project):
    body = "        return self._fast(q, k, v)\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "blocker", "xformers in Attention._split (model.py:19)")]
    assert r.outlook.value == "stay_on_cuda"


def test_a_local_flag_derived_from_the_availability_flag_guards_the_call(scan_project):
    body = f"        use_fast = HAVE_XF and q.is_cuda\n        if use_fast:\n            return self._fast(q, k, v)\n" \
        f"        return {PLAIN}\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "degrades", None)]


def test_look_alike_a_condition_about_the_inputs_is_no_path_beside_the_kernel(scan_project):
    # `if mask is None:` chooses among inputs; the Mac still calls the helper, so its kernel use stays core
    body = "        mask = None\n        if mask is None:\n            return self._fast(q, k, v)\n        return q\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "blocker", "xformers in Attention._split (model.py:22)")]
    assert r.outlook.value == "stay_on_cuda"


def _function_choice(choose: str) -> str:
    return ("import torch\nfrom torch import nn\n\n" + GUARD + "\n\nclass XfAttention(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, q, k, v):\n"
            "        return xformers.ops.memory_efficient_attention(q, k, v)\n\n\n"
            "class PlainAttention(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, q, k, v):\n"
            f"        return {PLAIN}\n\n\nclass Attention(nn.Module):\n    def forward(self, q, k, v):\n"
            f"        fn = {choose}\n        return fn.apply(q, k, v)\n")


def test_an_autograd_function_chosen_by_a_conditional_expression_is_no_core_use(scan_project):
    src = _function_choice("XfAttention if HAVE_XF and q.is_cuda else PlainAttention")
    r = scan_project({"model.py": src, "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "degrades", None)]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_an_autograd_function_chosen_unconditionally_stays_a_core_use(scan_project):
    r = scan_project({"model.py": _function_choice("XfAttention"), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "blocker", "xformers in XfAttention.forward (model.py:14)")]
    assert r.outlook.value == "stay_on_cuda"


def test_a_subclass_in_another_file_calling_the_helper_behind_its_own_test_does_not_reach_it(scan_project):
    body = f"        if HAVE_XF:\n            return self._fast(q, k, v)\n        return {PLAIN}\n"
    sub = ("from model import Attention, HAVE_XF\n\n\nclass Temporal(Attention):\n    def forward(self, q, k, v):\n"
           "        if HAVE_XF:\n            return self._split(q, k, v)\n        return q\n")
    r = scan_project({"model.py": _attention(body), "temporal.py": sub,
                      "train.py": TRAIN + "from temporal import Temporal\nprint(Temporal()(q, q, q))\n"})
    assert _core(r) == [("DEP107", 5, "degrades", None)]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_subclass_in_another_file_calling_the_helper_unconditionally_reaches_it(scan_project):
    body = f"        if HAVE_XF:\n            return self._fast(q, k, v)\n        return {PLAIN}\n"
    sub = ("from model import Attention\n\n\nclass Temporal(Attention):\n    def forward(self, q, k, v):\n"
           "        return self._split(q, k, v)\n")
    r = scan_project({"model.py": _attention(body), "temporal.py": sub,
                      "train.py": TRAIN + "from temporal import Temporal\nprint(Temporal()(q, q, q))\n"})
    assert _core(r) == [("DEP107", 5, "blocker", "xformers in Attention._split (model.py:21)")]
    assert r.outlook.value == "stay_on_cuda"


def test_a_copy_of_the_module_in_another_file_calls_its_own_function(scan_project):
    # a second file defines a function of the same name (a copy) and calls it unconditionally: that call is its own
    body = f"        if HAVE_XF:\n            return self._fast(q, k, v)\n        return {PLAIN}\n"
    copy = "def _split(q, k, v):\n    return q\n\n\nprint(_split(1, 2, 3))\n"
    r = scan_project({"model.py": _attention(body), "copy_of_model.py": copy, "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "degrades", None)]


# ---------------------------------------------------------------- a part's own requirement file (model/optional_parts.py)
# `pkg/deploy/requirements.txt` lists what the exporter needs; the README installs the package itself
PART = {"pyproject.toml": "[project]\nname = 'detr'\ndependencies = ['torch']\n", "detr/__init__.py": "",
        "detr/model.py": "import torch\n\nx = torch.zeros(2)\n",
        "detr/deploy/__init__.py": "", "detr/deploy/export.py": "import torch\n\nprint(torch.zeros(1))\n",
        "detr/deploy/requirements.txt": "onnx\npycuda\n"}


def _dep_rows(r):
    return [(f.code, f.location.path, f.location.line, f.severity.value, f.evidence.get("optional"))
            for f in r.findings if f.code.startswith("DEP1") and f.code != "DEP110"]


def test_a_part_s_own_requirement_file_the_readme_install_does_not_use_is_optional(scan_project):
    r = scan_project(PART, requirements=None, readme=bash_readme("pip install detr", title="detr"))
    why = "detr/deploy/requirements.txt is not installed by the README's install (the package by name)"
    assert _dep_rows(r) == [("DEP101", "detr/deploy/requirements.txt", 2, "blocker", why)]
    assert r.outlook.value == "runs_on_mac"
    assert r.optional == [{"path": "detr/deploy/requirements.txt", "line": 2, "code": "DEP101", "why": why}]


def test_look_alike_the_readme_installs_the_part_s_file(scan_project):
    readme = bash_readme("pip install -r detr/deploy/requirements.txt", title="detr")
    r = scan_project(PART, requirements=None, readme=readme)
    assert _dep_rows(r) == [("DEP101", "detr/deploy/requirements.txt", 2, "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_a_readme_installing_a_requirements_txt_it_names_without_its_folder(scan_project):
    # `cd detr/deploy && pip install -r requirements.txt` may name this very file: not known, so it stays required
    readme = bash_readme("pip install -r requirements.txt", title="detr")
    r = scan_project(PART, requirements=None, readme=readme)
    assert _dep_rows(r) == [("DEP101", "detr/deploy/requirements.txt", 2, "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_the_project_s_requirements_folder_is_its_own_declaration(scan_project):
    files = {k: v for k, v in PART.items() if k != "detr/deploy/requirements.txt"}
    r = scan_project({**files, "requirements/requirements.txt": "pycuda\n"},
                     requirements=None, readme=bash_readme("pip install detr", title="detr"))
    assert _dep_rows(r) == [("DEP101", "requirements/requirements.txt", 1, "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_a_device_test_whose_other_case_raises_offers_no_path(scan_project):
    # `if q.is_cuda: self._fast(...)` / `elif not q.is_cuda: raise`: the author says the other case is unsupported
    body = "        if q.is_cuda:\n            return self._fast(q, k, v)\n        elif not q.is_cuda:\n" \
        "            raise NotImplementedError()\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "blocker", "xformers in Attention._split (model.py:22)")]
    assert r.outlook.value == "stay_on_cuda"


def test_a_device_test_with_a_path_beside_does_not_reach_the_helper(scan_project):
    body = f"        if q.is_cuda:\n            return self._fast(q, k, v)\n        return {PLAIN}\n"
    r = scan_project({"model.py": _attention(body), "train.py": TRAIN})
    assert _core(r) == [("DEP107", 5, "degrades", None)]


# ---------------------------------------------------------------- CUDA sources built only where a kernel switch
# selects them (model/kernel_builds.py)
LOADER = ("from pathlib import Path\nfrom torch.utils.cpp_extension import load\n\n"
          "ext = load(name='act', sources=[str(Path(__file__).parent / 'act_kernel.cu')])\n")
ACT = "from kern.cuda import loader\n\n\ndef act(x):\n    return loader.ext.forward(x)\n"
PLAIN_ACT = "import torch\n\n\ndef act(x):\n    return torch.tanh(x)\n"
KERNEL = {"requirements.txt": "torch\n", "kern/__init__.py": "", "kern/plain.py": PLAIN_ACT,
          "kern/cuda/__init__.py": "", "kern/cuda/loader.py": LOADER, "kern/cuda/act.py": ACT,
          "kern/cuda/act_kernel.cu": "__global__ void act() {}\n"}


def _vocoder(choose: str) -> str:
    return ("import torch\n\n\nclass Vocoder(torch.nn.Module):\n    def __init__(self, h):\n        super().__init__()\n"
            + choose + "        self.act = act\n\n    def forward(self, x):\n        return self.act(x)\n")


def _ext(r):
    return [(f.code, f.location.path, f.severity.value, f.behind_flag) for f in r.findings if f.code == "EXT101"]


def test_cuda_sources_imported_only_under_a_kernel_switch_are_not_built_on_the_main_path(scan_project):
    choose = ("        if h.get('use_cuda_kernel', False):\n            from kern.cuda.act import act\n"
              "        else:\n            from kern.plain import act\n")
    r = scan_project({**KERNEL, "kern/vocoder.py": _vocoder(choose),
                      "infer.py": "from kern.vocoder import Vocoder\n\nprint(Vocoder({}))\n"}, requirements=None)
    why = "built only where a kernel switch selects it: kern/vocoder.py:7 if h.get('use_cuda_kernel', False)"
    assert _ext(r) == [("EXT101", "kern/cuda/act_kernel.cu", "blocker", why)]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_cuda_sources_imported_unconditionally_stay_on_cuda(scan_project):
    choose = "        from kern.cuda.act import act\n"
    r = scan_project({**KERNEL, "kern/vocoder.py": _vocoder(choose),
                      "infer.py": "from kern.vocoder import Vocoder\n\nprint(Vocoder({}))\n"}, requirements=None)
    assert _ext(r) == [("EXT101", "kern/cuda/act_kernel.cu", "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_an_import_under_a_test_of_the_inputs_still_builds(scan_project):
    choose = ("        if h.get('mode') == 'fast':\n            from kern.cuda.act import act\n"
              "        else:\n            from kern.plain import act\n")
    r = scan_project({**KERNEL, "kern/vocoder.py": _vocoder(choose),
                      "infer.py": "from kern.vocoder import Vocoder\n\nprint(Vocoder({}))\n"}, requirements=None)
    assert _ext(r) == [("EXT101", "kern/cuda/act_kernel.cu", "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_a_kernel_switch_on_by_default_still_builds(scan_project):
    # round 4's rule: a kernel built behind a switch on by default limits (the Mac builds it unless told otherwise)
    choose = ("        if h.get('use_cuda_kernel', True):\n            from kern.cuda.act import act\n"
              "        else:\n            from kern.plain import act\n")
    r = scan_project({**KERNEL, "kern/vocoder.py": _vocoder(choose),
                      "infer.py": "from kern.vocoder import Vocoder\n\nprint(Vocoder({}))\n"}, requirements=None)
    assert _ext(r) == [("EXT101", "kern/cuda/act_kernel.cu", "blocker", None)]
    assert r.outlook.value == "stay_on_cuda"
