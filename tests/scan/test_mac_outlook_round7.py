"""Issue 32, seventh round: the tune half of the 43 repositories of 2026-12, read against their labels. Each rule is
stated for a class of code and has a look-alike negative. The fixtures are written for these tests and copy no
repository."""

from __future__ import annotations

from mpsready.scan import scan_path
from mpsready.scan.model.remedy import limits

TORCH = "import torch\n"
REQS = {"requirements.txt": "torch\n"}


def _limits(r):
    """The findings that limit the main path's outlook (code, path, line, severity)."""
    return [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings if limits(f)]


def _edits(r):
    """The edits the headline counts (code, path, line, kind, what)."""
    return [(e.code, e.path, e.line, e.kind, e.what) for e in r.edits]


# ---------------------------------------------------------------- 1. a Python argument is an edit, not a flag
FACTORY = TORCH + "\n\ndef make_segmenter(cfg, weights=None, device='cuda'):\n" \
    "    net = torch.nn.Conv2d(3, 1, 3)\n    return net.to(device)\n"


def test_a_device_default_the_readmes_code_relies_on_is_an_edit_in_that_code(write_project):
    # the README's Python usage calls a factory whose device defaults to CUDA and passes none: a Mac user edits
    # that call (device='mps'); SPEC's runs_on_mac allows command-line flags and config values only
    r = scan_path(write_project({**REQS, "seg/__init__.py": "", "seg/factory.py": FACTORY,
                                 "README.md": "```python\nfrom seg.factory import make_segmenter\n"
                                              "net = make_segmenter('tiny.yaml')\n```\n"}))
    assert _limits(r) == [("API103", "seg/factory.py", 4, "blocker")]
    assert (r.outlook.value, r.flags) == ("mac_for_dev", [])
    assert _edits(r) == [("API103", "seg/factory.py", 4, "edit",
                          "pass make_segmenter(..., device='mps') in the code that calls it, "
                          "or make its default pick MPS")]


def test_a_device_option_of_a_script_stays_a_flag(write_project):
    # look-alike: the same default resolved by a script's own command-line option is a flag
    train = TORCH + "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default=None)\n" \
        "a = p.parse_args()\nif a.device is None:\n    a.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n" \
        "print(torch.zeros(2, device=a.device))\n"
    r = scan_path(write_project({**REQS, "train.py": train}))
    [f] = r.findings
    assert (f.code, f.location.line, f.severity.value, f.evidence.get("flag"), f.evidence.get("argument")) == \
        ("API104", 7, "info", "a.device='mps'", None)
    assert r.outlook.value == "runs_on_mac"


def test_an_unset_device_parameter_resolved_to_cuda_or_cpu_is_an_argument(write_project):
    # a function's own `device=None` parameter, resolved to CUDA-or-CPU when unset: its callers pass the device in
    # their code
    lib = TORCH + "\n\ndef load_forecaster(path, device=None):\n    if device is None:\n" \
        "        device = 'cuda:0' if torch.cuda.is_available() else 'cpu'\n" \
        "    return torch.nn.Linear(4, 4).to(device)\n"
    r = scan_path(write_project({**REQS, "fc/__init__.py": "", "fc/base.py": lib}))
    assert _limits(r) == [("API104", "fc/base.py", 6, "degrades")]
    assert (r.outlook.value, r.flags) == ("mac_for_dev", [])
    assert _edits(r)[0][3:] == ("edit", "pass device='mps' in the code that calls it, or make its default pick MPS")


def test_an_unset_device_in_a_config_object_stays_a_config_value(write_project):
    # look-alike: the tested value is a configuration's attribute, set without editing code
    lib = TORCH + "\n\nclass Runner:\n    def __init__(self, config):\n        if config.device is None:\n" \
        "            self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n" \
        "        else:\n            self.device = config.device\n"
    r = scan_path(write_project({**REQS, "fc/__init__.py": "", "fc/runner.py": lib}))
    assert (r.outlook.value, r.flags) == ("runs_on_mac", ["config.device='mps'"])


# ---------------------------------------------------------------- 2. patched forwards are model code
def _patch(body: str) -> str:
    return TORCH + "import types\nfrom flash_attn import flash_attn_func\n\n\n" \
        "def sparse_heads_attention_forward(self, q, k, v):\n" + body + \
        "\n\ndef enable_sparse_heads(model):\n    for m in model.modules():\n" \
        "        if isinstance(m, torch.nn.MultiheadAttention):\n" \
        "            m.forward = types.MethodType(sparse_heads_attention_forward, m)\n    return model\n"


PATCH_PKG = {"pyproject.toml": "[project]\nname = 'p'\ndependencies = ['torch']\n", "lmpatch/__init__.py": "",
             "train.py": TORCH + "from lmpatch.attn import enable_sparse_heads\n"
                                 "print(enable_sparse_heads(torch.nn.Sequential(torch.nn.MultiheadAttention(4, 1))))\n"}


def test_a_kernel_called_unconditionally_in_a_patched_forward_is_a_core_op(write_project):
    # a module-level function whose first parameter is `self`, bound onto a model's modules, is the model's
    # forward: a CUDA-only kernel it calls with no other path is a core op (stay_on_cuda)
    r = scan_path(write_project({**PATCH_PKG, "lmpatch/attn.py": _patch(
        "    return flash_attn_func(q, k, v, causal=self.causal)\n")}))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.path, f.location.line, f.severity.value) == ("lmpatch/attn.py", 3, "blocker")
    assert f.core_op == "flash_attn_func in sparse_heads_attention_forward (lmpatch/attn.py:7)"
    assert r.outlook.value == "stay_on_cuda"


def test_a_kernel_beside_a_pure_path_in_a_patched_forward_stays_a_swap(write_project):
    # look-alike: the patched forward keeps a pure-PyTorch path beside the kernel
    r = scan_path(write_project({**PATCH_PKG, "lmpatch/attn.py": _patch(
        "    if q.is_cuda:\n        return flash_attn_func(q, k, v, causal=self.causal)\n"
        "    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)\n")}))
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.severity.value, f.core_op) == ("blocker", None)
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- 3. a model package that needs flash-attn
def test_a_required_model_package_whose_blocks_need_flash_attn_keeps_the_project_on_cuda(write_project):
    r = scan_path(write_project({"requirements.txt": "torch\nstripedhyena==0.2.2\n",
                                 "dna/__init__.py": "", "dna/models.py": TORCH +
                                 "from stripedhyena.model import StripedHyena\n\n\n"
                                 "def load(config):\n    return StripedHyena(config)\n",
                                 "generate.py": "from dna.models import load\nprint(load({}))\n"}))
    assert r.outlook.value == "stay_on_cuda"
    assert [(f.code, f.location.path, f.location.line) for f in r.findings if limits(f)] == \
        [("DEP107", "dna/models.py", 2), ("DEP101", "requirements.txt", 2)]


def test_a_pure_model_package_stays_clean(write_project):
    # look-alike: a model package the knowledge base holds no CUDA fact for
    r = scan_path(write_project({"requirements.txt": "torch\nhyena-lite==0.1\n",
                                 "dna/__init__.py": "", "dna/models.py": TORCH +
                                 "from hyena_lite.model import Hyena\n\n\ndef load(config):\n    return Hyena(config)\n",
                                 "generate.py": "from dna.models import load\nprint(load({}))\n"}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])


# ---------------------------------------------------------------- 4. a flag the verdict assumed is on the command line
CLI = TORCH + "import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n" \
    "    p.add_argument('--device', default=None)\n    args = p.parse_args()\n    device = args.device\n" \
    "    if device is None or device == 'auto':\n        device = 'cuda' if torch.cuda.is_available() else 'cpu'\n" \
    "    print(torch.zeros(2, device=device))\n\n\nif __name__ == '__main__':\n    main()\n"
UI = TORCH + "import gradio as gr\n\nmodel = torch.nn.Linear(2, 2).to('cuda')\ngr.Interface(fn=print).launch()\n"


def _tts(readme: str) -> dict:
    return {**REQS, "tts/__init__.py": "", "tts/cli.py": CLI, "webui.py": UI, "README.md": readme}


def test_uv_run_module_is_a_readme_entry_and_its_assumed_device_flag_is_printed(write_project):
    # `uv run -m tts.cli` starts the module (uv's --module); the CUDA-or-CPU branch is judged never taken on a Mac
    # under the proposed --device mps, so that flag is the Mac's command line; the web UI is a demo beside it
    r = scan_path(write_project(_tts("```bash\nuv run -m tts.cli --device cuda\nuv run webui.py\n```\n")))
    assert (r.outlook.value, r.flags) == ("runs_on_mac", ["--device mps"])
    assert r.selection["entries"] == ["tts/cli.py"]
    assert r.selection["where"] == "tts/cli.py:11 with --device mps"
    assert r.selection["other_entries"] == ["webui.py (1 limit(s))"]


def test_a_web_ui_alone_keeps_its_vote(write_project):
    # look-alike: when the web UI is the only main entry, it is the project's main work and its CUDA device limits
    r = scan_path(write_project(_tts("```bash\nuv run webui.py\n```\n")))
    assert r.outlook.value == "mac_for_dev"
    assert ("API103", "webui.py", 4, "blocker") in _limits(r)


def test_uv_run_python_still_names_the_script(write_project):
    # look-alike spelling: `uv run python -m tts.cli` is read through its python command as before
    r = scan_path(write_project(_tts("```bash\nuv run python -m tts.cli\n```\n")))
    assert (r.outlook.value, r.flags) == ("runs_on_mac", ["--device mps"])
    assert r.selection["entries"] == ["tts/cli.py"]


# ---------------------------------------------------------------- 5. float64 joined across files, off the MPS branch
def _diffusion(branch: str) -> dict:
    lib = TORCH + "import numpy as np\nfrom sched.device import pick\n\n\n" \
        "def gather(table, steps):\n" + branch + "    return out\n"
    helper = TORCH + "\n\ndef pick():\n    return 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
    caller = "import numpy as np\nimport torch\nfrom sched.gather import gather\n\n" \
        "betas = np.linspace(0.0, 1.0, 10)\nprint(gather(betas, torch.zeros(2, dtype=torch.long)))\n"
    return {**REQS, "sched/__init__.py": "", "sched/device.py": helper, "sched/gather.py": lib, "sample.py": caller}


def test_a_float64_parameter_moved_only_off_mps_is_no_blocker(write_project):
    # the float64 array reaches `.to()` only in the branch a Mac on MPS never takes (`else:` of `pick() == "mps"`):
    # there the device is not MPS, so float64 is allowed; the MPS branch casts first
    r = scan_path(write_project(_diffusion(
        "    if pick() == 'mps':\n        out = torch.from_numpy(table.astype(np.float32)).to(steps.device)\n"
        "    else:\n        out = torch.from_numpy(table).to(steps.device)\n")))
    assert [f.code for f in r.findings if f.code.startswith("DTY")] == []
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])


def test_a_float64_parameter_moved_on_every_branch_stays_a_blocker(write_project):
    # look-alike: the same move outside any MPS test puts float64 on MPS
    r = scan_path(write_project(_diffusion("    out = torch.from_numpy(table).to(steps.device)\n")))
    assert _limits(r) == [("DTY102", "sched/gather.py", 7, "blocker")]
    assert r.outlook.value == "mac_for_dev"
