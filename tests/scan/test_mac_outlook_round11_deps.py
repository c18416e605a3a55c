"""Issue 32, round 11 (dependencies): a serving engine the main path drives is the project's core; optional
parts (docs/scan.md, "round 11"). Each fixture has a look-alike that keeps the other answer. Fixtures written for
these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme


README = bash_readme("pip install -r requirements.txt", "python train.py")
# a rollout worker that builds a vLLM engine in its constructor; train.py drives it on the default path
WORKER = ("import vllm\n\n\nclass Rollout:\n    def __init__(self, name):\n{init}\n\n"
          "    def generate(self, prompts):\n        return self.llm.generate(prompts)\n")
TRAIN = ("import torch\n\nfrom pkg.worker import Rollout\n\n\n"
         "def main():\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    net = torch.nn.Linear(4, 4).to(dev)\n    r = Rollout(\"m\")\n    print(r.generate([\"x\"]), net)\n\n\n"
         "if __name__ == \"__main__\":\n    main()\n")


def _scan(scan_project, init: str, requirements: str = "torch\nvllm\n"):
    return scan_project({"train.py": TRAIN, "pkg/__init__.py": "", "pkg/worker.py": WORKER.format(init=init)},
                        requirements=requirements, readme=README)


def _engine(r):
    return [(f.code, f.location.path, f.location.line, f.severity.value, f.core_op) for f in r.findings
            if f.code == "DEP107"]


def test_a_serving_engine_built_unconditionally_on_the_main_path_is_the_core(scan_project):
    r = _scan(scan_project, "        self.llm = vllm.LLM(model=name)")
    assert _engine(r) == [("DEP107", "pkg/worker.py", 1, "blocker",
                           "vllm in Rollout.__init__ (pkg/worker.py:6)")]
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert f.evidence["no_alternative"] is True
    assert "the main path runs the engine with no other path" in f.message
    assert [(x.code, x.location.path) for x in r.limiting] == [("DEP107", "pkg/worker.py")]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_an_engine_the_project_does_not_declare_stays_a_swap(scan_project):
    # an engine the install never brings (a plugin, an accelerated path the user installs apart) is no core
    r = _scan(scan_project, "        self.llm = vllm.LLM(model=name)", requirements="torch\n")
    assert _engine(r) == [("DEP107", "pkg/worker.py", 1, "blocker", None)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_an_engine_behind_a_switch_stays_a_swap(scan_project):
    # the engine only when asked for, the transformers path otherwise: replacing it is no rewrite of the core
    r = _scan(scan_project, "        if name.startswith(\"vllm:\"):\n            self.llm = vllm.LLM(model=name)\n"
                             "        else:\n            self.llm = None")
    assert _engine(r) == [("DEP107", "pkg/worker.py", 1, "blocker", None)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_kernel_package_outside_a_model_file_stays_a_swap(scan_project):
    # flash-attn is an op, not an engine: outside a model file (no forward) its use stays a swap, as before
    worker = WORKER.replace("import vllm", "import flash_attn").format(
        init="        self.llm = flash_attn.flash_attn_func")
    r = scan_project({"train.py": TRAIN, "pkg/__init__.py": "", "pkg/worker.py": worker}, readme=README)
    assert _engine(r) == [("DEP107", "pkg/worker.py", 1, "blocker", None)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- an import behind a helper that names the package
KERNEL_MODEL = ("import torch\n\n{guard}\n    from causal_conv1d import causal_conv1d_fn\nelse:\n"
                "    causal_conv1d_fn = None\n\n\nclass Block(torch.nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.conv = torch.nn.Conv1d(4, 4, 3, padding=2)\n\n"
                "    def forward(self, x):\n        if causal_conv1d_fn is None:\n"
                "            return self.conv(x)[..., :-2]\n        return causal_conv1d_fn(x, self.conv.weight)\n")
KERNEL_TRAIN = ("import torch\n\nfrom pkg.block import Block\n\n\n"
                "def main():\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
                "    print(Block().to(dev)(torch.zeros(1, 4, 8, device=dev)))\n\n\n"
                "if __name__ == \"__main__\":\n    main()\n")


def _kernel(scan_project, head: str, guard: str):
    model = head + KERNEL_MODEL.format(guard=guard)
    return scan_project({"train.py": KERNEL_TRAIN, "pkg/__init__.py": "", "pkg/block.py": model}, readme=README)


def test_an_import_behind_an_availability_helper_named_for_the_package_is_optional(scan_project):
    r = _kernel(scan_project, "from transformers.utils.import_utils import is_causal_conv1d_available\n",
                "if is_causal_conv1d_available():")
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value) == (5, "degrades")
    assert f.evidence["optional"] == "imported only when is_causal_conv1d_available() (line 4)"
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_an_import_behind_a_flag_named_has_package_is_optional(scan_project):
    r = _kernel(scan_project, "import importlib.util\n\nHAS_CAUSAL_CONV1D = "
                "importlib.util.find_spec(\"causal\" + \"_conv1d\") is not None\n", "if HAS_CAUSAL_CONV1D:")
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value) == (7, "degrades")
    assert f.evidence["optional"] == "imported only when HAS_CAUSAL_CONV1D (line 6)"
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_an_option_that_names_the_package_keeps_the_import_required(scan_project):
    # a switch on by default is no availability test: the import runs on a Mac and fails there
    r = _kernel(scan_project, "USE_CAUSAL_CONV1D = True\n", "if USE_CAUSAL_CONV1D:")
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value) == (5, "blocker")
    assert "optional" not in f.evidence
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("DEP107", "pkg/block.py", 5)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- an extra the README's install names
SETUP = ("from setuptools import setup\n\nsetup(\n    name=\"demo-serve\",\n    install_requires=[\"torch\"],\n"
         "    extras_require={\"serve\": [\"vllm\"], \"dev\": [\"pytest\"]},\n)\n")
SERVE_TRAIN = ("import torch\n\n\ndef main():\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
               "    print(torch.zeros(2, device=dev))\n\n\nif __name__ == \"__main__\":\n    main()\n")


def _extras(scan_project, install: str):
    readme = bash_readme(install, "python train.py")
    return scan_project({"train.py": SERVE_TRAIN, "setup.py": SETUP}, requirements=None, readme=readme)


def _vllm(r):
    [f] = [f for f in r.findings if f.code == "DEP101"]
    assert (f.location.path, f.location.line, f.evidence["group"]) == ("setup.py", 6, "extra:serve")
    return f


def test_an_extra_the_readme_installs_is_required(scan_project):
    r = _extras(scan_project, "pip install -e \".[serve]\"")
    f = _vllm(r)
    assert "optional" not in f.evidence
    assert f.evidence["required_by"] == "the README installs the extra [serve] (pip install -e .[serve])"
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("DEP101", "setup.py", 6)]
    assert r.outlook.value == "mac_for_dev"


def test_an_extra_installed_by_the_project_name_is_required(scan_project):
    r = _extras(scan_project, "pip install demo_serve[dev,serve]")
    assert _vllm(r).evidence["required_by"] == ("the README installs the extra [serve] "
                                                "(pip install demo_serve[dev,serve])")
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_an_extra_the_readme_install_leaves_out_stays_optional(scan_project):
    r = _extras(scan_project, "pip install -e .")
    f = _vllm(r)
    assert f.evidence["optional"] is True
    assert "required_by" not in f.evidence
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_an_extra_of_another_package_changes_nothing(scan_project):
    r = _extras(scan_project, "pip install -e .\npip install transformers[serve]")
    assert _vllm(r).evidence["optional"] is True
    assert r.outlook.value == "runs_on_mac"


def test_an_extra_a_later_block_installs_is_a_feature_and_stays_optional(scan_project):
    # the first block installs the project: the main install; `.[serve]` further down is a feature's
    readme = ("# demo\n\n```bash\npip install -e .\npython train.py\n```\n\n## Serving\n\n```bash\n"
              "pip install -e \".[serve]\"\n```\n")
    r = scan_project({"train.py": SERVE_TRAIN, "setup.py": SETUP}, requirements=None, readme=readme)
    assert _vllm(r).evidence["optional"] is True
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- a pin the project selects for macOS itself
PIN_TRAIN = SERVE_TRAIN


def _pin(scan_project, line: str):
    return scan_project({"train.py": PIN_TRAIN}, requirements=f"torch\n{line}\n", readme=README)


def test_a_pin_the_project_selects_for_macos_itself_does_not_limit(scan_project):
    r = _pin(scan_project, "bitsandbytes<0.43; sys_platform == 'darwin'")
    [f] = [f for f in r.findings if f.code == "DEP111"]
    assert (f.location.line, f.severity.value) == (2, "degrades")
    assert f.evidence["mac_choice"] == 'sys_platform == "darwin"'
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_same_pin_for_every_platform_limits(scan_project):
    r = _pin(scan_project, "bitsandbytes<0.43")
    [f] = [f for f in r.findings if f.code == "DEP111"]
    assert (f.location.line, f.severity.value) == (2, "blocker")
    assert "mac_choice" not in f.evidence
    assert [(x.code, x.location.line) for x in r.limiting] == [("DEP111", 2)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_marker_true_on_linux_too_is_no_mac_choice(scan_project):
    r = _pin(scan_project, "bitsandbytes<0.43; python_version >= '3.8'")
    [f] = [f for f in r.findings if f.code == "DEP111"]
    assert f.severity.value == "blocker"
    assert r.outlook.value == "mac_for_dev"
