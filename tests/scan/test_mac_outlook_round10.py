"""Issue 32, round 10: general mechanisms by which a false limit reached the headline (docs/scan.md, "round 10").
Each mechanism has a fixture and a look-alike that keeps its old verdict. Fixtures written for these tests."""

from __future__ import annotations

from mpsready.scan.formats.terminal import TerminalFormat
from tests.scan.conftest import bash_readme, rows

README = bash_readme("pip install -r requirements.txt", "python train.py")
TRAIN = ("import torch\n\nfrom pkg.model import Net, profile\n\n\ndef main():\n"
         "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    net = Net().to(dev)\n    print(net(torch.zeros(1, 4, device=dev)))\n{extra}\n\n"
         "if __name__ == \"__main__\":\n    main()\n")
MODEL = ("import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
         "    def to_engine(self):\n        return self.fc.cuda()\n\n\n"
         "def profile(net):\n    x = torch.zeros(1, 4).cuda()\n    return net(x)\n")


def _two_files(scan_project, train: str, module: str, model: str):
    """Scan a project of ``train.py`` importing the package module ``pkg/<module>.py``."""
    return scan_project({"train.py": train, "pkg/__init__.py": "", f"pkg/{module}.py": model}, readme=README)


def _project(scan_project, extra: str = ""):
    return _two_files(scan_project, TRAIN.format(extra=extra), "model", MODEL)


# ---------------------------------------------------------------- reach by calls, not by imports
def test_a_function_of_an_imported_module_that_nothing_calls_does_not_limit(scan_project):
    # train.py imports Net and profile from pkg.model; nothing calls profile() and nothing names Net.to_engine: importing the
    # module runs neither, so their `.cuda()` calls are off the main path
    r = _project(scan_project)
    assert rows(r) == [("API101", "pkg/model.py", 13, "blocker"), ("API101", "pkg/model.py", 17, "blocker")]
    by_line = {f.location.line: f for f in r.findings}
    assert by_line[17].reach == "off_main_path"
    assert by_line[17].evidence["uncalled_on_path"] == ("profile() is in pkg/model.py, which the main path imports, "
                                                        "but no code the main path runs calls it or names it")
    # a method a framework might call by name (Net derives from torch.nn.Module) is not verified, not dropped
    assert by_line[13].evidence["not_verified"] == ("Net.to_engine() is never named on the main path, but Net "
                                                    "derives from a class outside the project, which may call it "
                                                    "by name")
    assert r.outlook.value == "runs_on_mac"
    assert r.not_verified == [{"path": "pkg/model.py", "line": 13, "code": "API101",
                               "why": by_line[13].evidence["not_verified"]}]
    assert "not verified: API101 pkg/model.py:13" in TerminalFormat(width=400).render(r)


def test_look_alike_a_function_the_entry_calls_limits_with_its_call_chain(scan_project):
    # main() calls profile(net) and net.to_engine(): both run, both limit, each with the calls that reach it
    r = _project(scan_project, extra="    profile(net)\n    net.to_engine()\n")
    assert r.outlook.value == "mac_for_dev"
    assert [(f.location.path, f.location.line) for f in r.limiting] == [("pkg/model.py", 13), ("pkg/model.py", 17)]
    by_line = {f.location.line: f for f in r.limiting}
    assert by_line[17].evidence["main_path"]["calls"] == ["train.py:15 main", "train.py:10 profile"]
    assert by_line[13].evidence["main_path"]["calls"] == ["train.py:15 main", "train.py:11 Net.to_engine"]
    assert "calls: train.py:15 main -> train.py:10 profile" in TerminalFormat(width=400).render(r)


def test_look_alike_a_hook_of_a_reached_class_runs_without_being_named(scan_project):
    # forward() is called by torch.nn.Module.__call__, never by name: a `.cuda()` there limits
    model = MODEL.replace("return self.fc(x)", "return self.fc(x.cuda())")
    r = scan_project({"train.py": TRAIN.format(extra=""), "pkg/__init__.py": "", "pkg/model.py": model}, readme=README)
    assert ("pkg/model.py", 10) in [(f.location.path, f.location.line) for f in r.limiting]
    assert r.outlook.value == "mac_for_dev"


def test_a_registered_definition_nothing_names_is_not_verified(scan_project):
    # a decorator that may register the class (a registry picks it by a config string): its limit is listed as
    # not verified, never silently dropped, and does not decide the headline
    model = MODEL + ("\n\nREG = {}\n\n\ndef register(cls):\n    REG[cls.__name__] = cls\n    return cls\n\n\n"
                     "@register\nclass Exporter:\n    def run(self):\n        return torch.zeros(1).cuda()\n")
    r = scan_project({"train.py": TRAIN.format(extra=""), "pkg/__init__.py": "", "pkg/model.py": model}, readme=README)
    [nv] = [x for x in r.not_verified if x["line"] == 32]
    assert nv["why"].startswith("Exporter has a decorator that may register it (register)")
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- a library: its re-exports and the README's imports
LIB_README = ("# lib\n\n```bash\npip install -r requirements.txt\n```\n\n```python\nfrom lib import load_model\n\n"
              "model = load_model(\"weights\")\n```\n")
LIB_INIT = "from .base import Scorer, load_model\n"
LIB_BASE = ("import torch\n\n\nclass Pretrained(torch.nn.Module):\n    @classmethod\n"
            "    def from_pretrained(cls, path, device=None):\n        if device is None:\n"
            "            device = \"cuda:0\" if torch.cuda.is_available() else \"cpu\"\n"
            "        return cls().to(device)\n\n\n"
            "def load_model(path, device=None):\n    return Pretrained.from_pretrained(path, device)\n\n\n"
            "def _bench(model):\n    return model(torch.zeros(2).cuda())\n\n\n"
            "class Scorer:\n    def score(self, x):\n        return x.cuda().sum()\n")


def test_a_library_reexport_reaches_the_code_its_users_call(scan_project):
    # the README imports load_model from lib; lib/__init__.py re-exports it from lib/base.py: load_model runs, so
    # does Pretrained.from_pretrained (named in it), whose CUDA-or-CPU choice keeps the Mac on its CPU (a limit);
    # _bench() is named nowhere: off the main path
    r = scan_project({"lib/__init__.py": LIB_INIT, "lib/base.py": LIB_BASE}, readme=LIB_README)
    # Scorer is re-exported too: its users call its public methods, so score()'s `.cuda()` limits
    assert [(f.code, f.location.line) for f in r.limiting] == [("API101", 22), ("API104", 8)]
    assert r.limiting[0].evidence["main_path"]["calls"] == ["lib/__init__.py:1 Scorer", "lib/base.py:21 Scorer.score"]
    assert r.limiting[1].evidence["main_path"]["calls"] == ["lib/__init__.py:1 load_model",
                                                            "lib/base.py:13 Pretrained.from_pretrained"]
    [bench] = [f for f in r.findings if f.location.line == 17]
    assert bench.reach == "off_main_path" and "_bench()" in bench.evidence["uncalled_on_path"]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a switch that only unreached code turns on
PAR_MODEL = ("import torch\n\n\nclass Stack(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4)])\n        self.model_parallel = False\n\n"
             "    def parallelize(self):\n        self.model_parallel = True\n\n"
             "    def forward(self, x):\n        for layer in self.layers:\n            if self.model_parallel:\n"
             "                torch.cuda.set_device(x.device)\n            x = layer(x)\n        return x\n")
PAR_TRAIN = ("import torch\n\nfrom pkg.stack import Stack\n\n\ndef main():\n"
             "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n    net = Stack().to(dev)\n{extra}"
             "    print(net(torch.zeros(1, 4, device=dev)))\n\n\nif __name__ == \"__main__\":\n    main()\n")


def _par(scan_project, extra: str = ""):
    return _two_files(scan_project, PAR_TRAIN.format(extra=extra), "stack", PAR_MODEL)


def test_a_branch_behind_a_switch_only_uncalled_code_turns_on_does_not_limit(scan_project):
    # forward runs, but self.model_parallel is False from __init__ and True only in parallelize(), which nothing calls
    r = _par(scan_project)
    [f] = [f for f in r.findings if f.code == "API102"]
    assert (f.location.line, f.severity.value) == (16, "blocker")
    assert f.evidence["switch_unreached"] == ("self.model_parallel (tested at line 15) is set false at "
                                              "pkg/stack.py:8 and turned on only at pkg/stack.py:11, in code the "
                                              "main path never calls")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_main_path_turns_the_switch_on(scan_project):
    # main() calls net.parallelize(): the switch can be true, so the set_device call limits
    r = _par(scan_project, extra="    net.parallelize()\n")
    assert [(f.code, f.location.line) for f in r.limiting] == [("API102", 16)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- an override of .cuda() passes the call on
DELEGATE = ("import torch\n\n\nclass Base(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
            "    def cuda(self, *args, **kwargs):\n        return super().cuda(*args, **kwargs)\n")


def test_an_override_of_cuda_that_passes_the_call_on_is_no_limit_of_its_own(scan_project):
    train = TRAIN.replace("from pkg.model import Net, profile", "from pkg.model import Base as Net")
    r = scan_project({"train.py": train.format(extra=""), "pkg/__init__.py": "", "pkg/model.py": DELEGATE},
                     readme=README)
    [f] = [f for f in r.findings if f.code == "API101"]
    assert (f.location.line, f.reach) == (13, "off_main_path")
    assert f.evidence["delegate"] == "Base.cuda() passes a `.cuda()` call on; the calls of it are the limits"
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_call_of_the_override_on_the_main_path_limits(scan_project):
    train = TRAIN.replace("from pkg.model import Net, profile", "from pkg.model import Base as Net")
    r = scan_project({"train.py": train.format(extra="    net.cuda()\n"), "pkg/__init__.py": "",
                      "pkg/model.py": DELEGATE}, readme=README)
    assert [(f.code, f.location.path, f.location.line) for f in r.limiting] == [("API101", "train.py", 10)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a bare name means what the file's scope binds
EXPORT = ("import torch\n\n\ndef export_weights(net):\n    return net.state_dict()\n\n\n"
          "def main():\n    net = torch.nn.Linear(4, 4).to(\"cuda\")\n    return export_weights(net)\n")


def _bare(scan_project, train_tail: str, imports: str):
    train = ("import torch\n\n" + imports + "\n\ndef main():\n"
             "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
             "    print(torch.zeros(1, device=dev))\n\n\nif __name__ == \"__main__\":\n" + train_tail)
    return scan_project({"train.py": train, "tools/__init__.py": "", "tools/export.py": EXPORT}, readme=README)


def test_an_entry_calling_its_own_main_does_not_reach_another_modules_main(scan_project):
    # train.py imports export_weights from tools/export.py and calls its own main(): tools/export.py's main() (which
    # moves to "cuda") is a function of the same name, not the one called
    r = _bare(scan_project, "    main()\n", "from tools.export import export_weights")
    [f] = [f for f in r.findings if f.code == "API103"]
    assert (f.location.path, f.location.line, f.reach) == ("tools/export.py", 9, "off_main_path")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_other_main_imported_under_another_name_limits(scan_project):
    r = _bare(scan_project, "    main()\n    export_main()\n", "from tools.export import main as export_main")
    assert [(f.code, f.location.path, f.location.line) for f in r.limiting] == [("API103", "tools/export.py", 9)]
    assert r.limiting[0].evidence["main_path"]["calls"] == ["train.py:12 main"]
    assert r.outlook.value == "mac_for_dev"
