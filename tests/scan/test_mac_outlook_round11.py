"""Issue 32, round 11: entry policy for package modules named for the main work, device values passed through a
configuration object, and the bound of the reach-by-calls pass said where it applies (docs/scan.md, "round 11").
Each mechanism has a fixture and a look-alike that keeps its old verdict. Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme


README = bash_readme("pip install -r requirements.txt", "python train.py")
TRAIN = ("import torch\n\nfrom pkg.main import Net\n\n\ndef main():\n"
         "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    net = Net().to(dev)\n    print(net(torch.zeros(1, 4, device=dev)))\n\n\n"
         "if __name__ == \"__main__\":\n    main()\n")
# a package module named main.py: the API's class, and a demo that exports on CUDA when the module is run by hand
PKG_MAIN = ("import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x)\n\n\n"
            "def export(net):\n    return net.cuda()\n\n\n"
            "if __name__ == \"__main__\":\n    export(Net())\n")


def _limits(r) -> list[tuple[str, str, int]]:
    return [(f.code, f.location.path or "", f.location.line or 0) for f in r.limiting]


# ---------------------------------------------------------------- a package's main.py that the main path imports
def test_a_package_main_module_the_entry_imports_runs_no_demo_block(scan_project):
    # train.py imports Net from pkg/main.py: importing never runs pkg/main.py's `__main__` block, so export() (called
    # only there) is not on the main path, and the headline is the one train.py earns
    r = scan_project({"train.py": TRAIN, "pkg/__init__.py": "", "pkg/main.py": PKG_MAIN}, readme=README)
    assert _limits(r) == []
    assert r.outlook.value == "runs_on_mac"
    (f,) = [f for f in r.findings if f.code == "API101"]
    assert (f.location.path, f.location.line, f.reach) == ("pkg/main.py", 14, "off_main_path")
    assert f.evidence["own_program"] == ("export() runs only when pkg/main.py is run as a program (only its `if "
                                         "__name__ == \"__main__\":` block reaches it), and pkg/main.py is no main "
                                         "entry: the modules that import it never call it")


def test_look_alike_a_package_main_module_the_readme_runs_is_a_main_entry(scan_project):
    # the README runs `python -m pkg.main`: its `__main__` block is a main command, and export()'s `.cuda()` limits
    readme = bash_readme("python train.py", "python -m pkg.main")
    r = scan_project({"train.py": TRAIN, "pkg/__init__.py": "", "pkg/main.py": PKG_MAIN}, readme=readme)
    assert _limits(r) == [("API101", "pkg/main.py", 14)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_package_main_module_nothing_imports_stays_a_main_entry(scan_project):
    # no other entry and nothing imports pkg/main.py: it is how the project is run, as before this round
    r = scan_project({"pkg/__init__.py": "", "pkg/main.py": PKG_MAIN})
    assert _limits(r) == [("API101", "pkg/main.py", 14)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a configuration object spread into a call
CONFIG = ("from dataclasses import dataclass\n\n\n@dataclass\nclass RunConfig:\n    lr: float = 0.1\n"
          "    device: str = \"cpu\"\n")
BUILD = ("from dataclasses import asdict\n\nimport torch\n\nfrom pkg.config import RunConfig\n\n\n"
         "def make(lr=0.1, device=\"cuda\"):\n    return torch.zeros(2, device=device) * lr\n\n\n"
         "class Runner:\n    def __init__(self, **kwargs):\n        self.x = make(**kwargs)\n\n\n"
         "def build(cfg: RunConfig):\n    return Runner(**asdict(cfg))\n")
ENTRY = ("import torch\n\nfrom pkg.build import build\nfrom pkg.config import RunConfig\n\n"
         "cfg = RunConfig(device=\"mps\" if torch.backends.mps.is_available() else \"cpu\")\nprint(build(cfg).x)\n")


def _config_project(scan_project, config: str = CONFIG, build: str = BUILD):
    return scan_project({"train.py": ENTRY, "pkg/__init__.py": "", "pkg/config.py": config,
                         "pkg/build.py": build}, readme=README)


def test_a_config_object_spread_through_a_class_passes_the_device(scan_project):
    # make(device="cuda") is reached only through Runner(**kwargs) <- Runner(**asdict(cfg)), cfg: RunConfig, which
    # declares `device`: every call passes the device, so the default never runs
    r = _config_project(scan_project)
    (f,) = [f for f in r.findings if f.code == "API103"]
    assert (f.location.path, f.location.line, f.severity.value) == ("pkg/build.py", 8, "info")
    assert f.evidence["default_unused"] == ["pkg/build.py:18"]
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_config_without_the_field_keeps_the_default(scan_project):
    # RunConfig declares no `device`: the spread passes lr only, make() runs with device="cuda"
    r = _config_project(scan_project, config=CONFIG.replace("    device: str = \"cpu\"\n", ""),
                        build=BUILD)
    assert _limits(r) == [("API103", "pkg/build.py", 8)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_an_unannotated_config_keeps_the_default(scan_project):
    # `def build(cfg)`: what cfg holds is not known, so the spread is not known to pass the device
    r = _config_project(scan_project, build=BUILD.replace("cfg: RunConfig", "cfg"))
    assert _limits(r) == [("API103", "pkg/build.py", 8)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- the reach pass's bound, said on each limit
def test_a_main_path_over_the_bound_says_its_limits_are_unchecked(scan_project, monkeypatch):
    import mpsready.scan.model.call_reach as call_reach

    monkeypatch.setattr(call_reach, "MAX_FILES", 2)
    model = "import torch\n\n\ndef profile():\n    return torch.zeros(1).cuda()\n"
    r = scan_project({"train.py": "from pkg.model import profile\nprint('ok')\n", "pkg/__init__.py": "",
                      "pkg/model.py": model}, readme=README)
    assert _limits(r) == [("API101", "pkg/model.py", 5)]
    (f,) = r.limiting
    assert f.evidence["calls_unchecked"] == ("the main path holds 3 Python files, more than the 2 the reach-by-calls "
                                             "pass reads: this limit counts without a check that code which runs "
                                             "calls it")


def test_look_alike_a_main_path_within_the_bound_checks_the_calls(scan_project):
    # the same project under the bound: nothing calls profile(), so it is off the main path
    model = "import torch\n\n\ndef profile():\n    return torch.zeros(1).cuda()\n"
    r = scan_project({"train.py": "from pkg.model import profile\nprint('ok')\n", "pkg/__init__.py": "",
                      "pkg/model.py": model}, readme=README)
    assert _limits(r) == []
    (f,) = [f for f in r.findings if f.code == "API101"]
    assert f.reach == "off_main_path" and "calls_unchecked" not in f.evidence


def test_a_project_over_the_bound_says_its_limits_are_unchecked(scan_project, monkeypatch):
    import mpsready.scan.model.call_reach as call_reach

    monkeypatch.setattr(call_reach, "MAX_PROJECT_FILES", 2)
    model = "import torch\n\n\ndef profile():\n    return torch.zeros(1).cuda()\n"
    r = scan_project({"train.py": "from pkg.model import profile\nprint('ok')\n", "pkg/__init__.py": "",
                      "pkg/model.py": model}, readme=README)
    (f,) = r.limiting
    assert f.evidence["calls_unchecked"] == ("the project holds 3 Python files, more than the 2 the reach-by-calls "
                                             "pass reads: this limit counts without a check that code which runs "
                                             "calls it")


# ---------------------------------------------------------------- a device parameter compared with a CUDA string
GRAPHS = ("import torch\n\n\nclass Engine:\n    def __init__(self, net, device=\"cuda\"{extra}):\n"
          "        self.net = net.to(device)\n{body}\n"
          "    def capture(self):\n        self.graph = torch.cuda.CUDAGraph()\n        torch.cuda.synchronize()\n\n\n"
          "dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
          "engine = Engine(torch.nn.Linear(4, 4), device=dev)\n")
CAPTURE = "        if device == \"cuda\":\n            self.capture()\n"


def _engine(scan_project, body: str = CAPTURE, extra: str = ""):
    return scan_project({"train.py": GRAPHS.format(body=body, extra=extra)}, readme=README)


def test_a_branch_on_a_device_parameter_equal_to_cuda_is_never_entered(scan_project):
    # `if device == "cuda": self.capture()` on the parameter: a Mac program's device is mps or cpu (a CUDA value would
    # be reported where it is written: here the one call passes dev), so the CUDA-graph capture never runs on a Mac
    r = _engine(scan_project)
    assert _limits(r) == []
    assert r.outlook.value == "runs_on_mac"
    f = next(f for f in r.findings if f.code == "API110")
    assert f.evidence["mac_never_caller"] == ("device == 'cuda' is False (line 7): a device a Mac program holds is mps "
                                              "or cpu (parameter device)")


def test_look_alike_a_backend_parameter_equal_to_cuda_is_not_decided(scan_project):
    # the same test on a parameter that names no device (`backend`): its value is unknown, the capture limits
    r = _engine(scan_project, CAPTURE.replace("device ==", "backend =="), ", backend=None")
    assert _limits(r) == [("API110", "train.py", 11), ("API102", "train.py", 12)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_device_parameter_reassigned_to_cuda_is_not_decided(scan_project):
    # the function itself sets device to "cuda" on one path: the join holds "cuda", the test is not decided
    r = _engine(scan_project, "        if net is None:\n            device = \"cuda\"\n" + CAPTURE)
    # (the reassignment is a CUDA literal of its own: API103 at line 8)
    assert _limits(r) == [("API103", "train.py", 8), ("API110", "train.py", 13), ("API102", "train.py", 14)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_device_parameter_tested_for_none_stays_open(scan_project):
    # `if device is None:` is no comparison with a CUDA string: None ("choose for me") stays possible, and the
    # CUDA-or-CPU choice under it keeps a Mac on its CPU
    lib = ("import torch\n\n\ndef load(path, device=None):\n    if device is None:\n"
           "        device = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n    return torch.load(path).to(device)\n")
    r = scan_project({"train.py": "from pkg.lib import load\nprint(load('w.pt'))\n", "pkg/__init__.py": "",
                      "pkg/lib.py": lib}, readme=README)
    assert _limits(r) == [("API104", "pkg/lib.py", 6)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a script's own option decides its guard
OWN_FLAG = ("import argparse\n\nimport torch\n\np = argparse.ArgumentParser()\n"
            "p.add_argument(\"--use_cuda\", {spec})\nargs = p.parse_args()\n"
            "device = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
            "if args.use_cuda:\n    device = \"cuda\"\nprint(torch.zeros(2, device=device))\n")
OTHER = ("import argparse\n\nimport torch\n\np = argparse.ArgumentParser()\n"
         "p.add_argument(\"--use_cuda\", type=bool, default=True)\nargs = p.parse_args()\n"
         "if args.use_cuda:\n    print(torch.zeros(1).cuda())\n")


def _flags_project(scan_project, spec: str):
    return scan_project({"train.py": OWN_FLAG.format(spec=spec), "tools/evaluate.py": OTHER}, readme=README)


def test_a_guard_is_judged_by_the_option_its_own_script_declares(scan_project):
    # train.py's `--use_cuda` is store_true (off by default); tools/evaluate.py declares `--use_cuda` default True for
    # its own run: train.py's `device = "cuda"` is behind train.py's option, off at the defaults
    r = _flags_project(scan_project, "action=\"store_true\"")
    f = next(f for f in r.findings if f.location.path == "train.py" and f.location.line == 10)
    assert (f.code, f.behind_flag) == ("API103", "--use_cuda")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_script_whose_own_option_is_on_by_default_keeps_the_limit(scan_project):
    r = _flags_project(scan_project, "type=bool, default=True")
    assert _limits(r) == [("API103", "train.py", 10)]
    assert r.outlook.value == "mac_for_dev"
