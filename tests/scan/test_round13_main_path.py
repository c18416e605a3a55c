"""Issue 32, round 13 (docs/scan.md, "round 13"): the main path's imports resolved as the program's ``sys.path``
resolves them, an import left unresolved reaching every candidate, modules a configuration file names for
``importlib.import_module``, and conditional expressions decided like ``if`` statements in the reach by calls. Each
fixture has a look-alike that keeps the other answer. Fixtures written for these tests."""

from __future__ import annotations

import ast

from mpsready.scan import scan_path
from mpsready.scan.model.config_imports import key_path, yaml_values
from mpsready.scan.model.import_paths import by_last, candidates, script_folder

# a per-task folder run as `cd task && sh scripts/run.sh`: run.py imports exp/exp_main.py, which imports
# exp/exp_basic.py as `exp.exp_basic` (found from the script's folder, first on sys.path)
RUN = "from exp.exp_main import Exp\n\n\nif __name__ == \"__main__\":\n    Exp().train()\n"
EXP_MAIN = ("import torch\nfrom exp.exp_basic import Exp_Basic\n\n\nclass Exp(Exp_Basic):\n"
            "    def train(self):\n        return torch.zeros(2).to(self.device)\n")
EXP_BASIC = ("import torch\n\n\nclass Exp_Basic:\n    def __init__(self):\n"
             "        self.device = torch.device(\"cuda:0\") if torch.cuda.is_available() else torch.device(\"cpu\")\n"
             "        torch.cuda.synchronize()\n")
SH = "python -u run.py --is_training 1\n"
README = "# demo\n\n```\ncd ./task_a\n\nsh ./scripts/run.sh\n```\n"


def _limits(r):
    return sorted((f.code, f.location.path, f.location.line) for f in r.limiting)


def test_a_module_imported_below_the_entry_resolves_from_the_entrys_folder(write_project):
    r = scan_path(write_project({"README.md": README, "task_a/run.py": RUN, "task_a/exp/exp_main.py": EXP_MAIN,
                                 "task_a/exp/exp_basic.py": EXP_BASIC, "task_a/scripts/run.sh": SH}))
    assert _limits(r) == [("API102", "task_a/exp/exp_basic.py", 7), ("API104", "task_a/exp/exp_basic.py", 6)]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_module_the_entry_never_imports_stays_off_the_path(write_project):
    # exp/exp_other.py holds the same CUDA call, but nothing the entry runs imports it
    r = scan_path(write_project({"README.md": README, "task_a/run.py": RUN, "task_a/exp/exp_main.py": EXP_MAIN,
                                 "task_a/exp/exp_basic.py": EXP_BASIC.replace("        torch.cuda.synchronize()\n",
                                                                              ""),
                                 "task_a/exp/exp_other.py": "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n",
                                 "task_a/scripts/run.sh": SH}))
    assert _limits(r) == [("API104", "task_a/exp/exp_basic.py", 6)]
    reach = {f.location.path: f.reach for f in r.findings if f.code == "API102"}
    assert reach == {"task_a/exp/exp_other.py": "off_main_path"}


def test_script_folder_is_the_folder_of_a_script_outside_a_package():
    results = {"task/run.py": None, "pkg/__init__.py": None, "pkg/train.py": None, "main.py": None}
    assert [script_folder(rel, results) for rel in results] == ["task", "", "", ""]


def test_an_unresolved_import_reaches_every_candidate_in_its_top_folder_only():
    modules = ["a.exp.exp_basic", "b.exp.exp_basic", "a.exp.other", "a.json"]
    index = by_last(modules)
    assert candidates(index, "exp.exp_basic", (), "a/run.py") == ["a.exp.exp_basic"]
    assert candidates(index, "exp", ("exp_basic",), "b/x/run.py") == ["b.exp.exp_basic"]
    # a root file: every top folder; a standard-library name never
    assert candidates(index, "exp.exp_basic", (), "run.py") == ["a.exp.exp_basic", "b.exp.exp_basic"]
    assert candidates(index, "json", (), "run.py") == []


# a trainer chosen by a configuration value: `importlib.import_module(cfg.trainer.type)`
TRAIN = ("import importlib\nimport yaml\n\n\ndef main(path):\n    cfg = load(path)\n"
         "    trainer_lib = importlib.import_module(cfg.trainer.type)\n    trainer_lib.Trainer(cfg).fit()\n\n\n"
         "def load(path):\n    return yaml.safe_load(open(path))\n\n\nif __name__ == \"__main__\":\n    main(\"x\")\n")
TRAINER = ("import torch\nimport tinycudann as tcnn\n\n\nclass Trainer:\n    def __init__(self, cfg):\n"
           "        self.enc = tcnn.Encoding(3, {})\n\n    def fit(self):\n        return self.enc(torch.zeros(3))\n")
CONFIG = "trainer:\n    type: projects.app.trainer\nmodel:\n    type: projects.app.model\n"
TRAIN_README = "# app\n\n```bash\npython train.py --config projects/app/configs/base.yaml\n```\n"


def _config_project(config):
    return {"README.md": TRAIN_README, "train.py": TRAIN, "projects/__init__.py": "", "projects/app/__init__.py": "",
            "projects/app/trainer.py": TRAINER, "projects/app/configs/base.yaml": config,
            "requirements.txt": "torch\npyyaml\n"}


def test_a_module_a_config_file_names_for_import_module_is_on_the_main_path(write_project):
    r = scan_path(write_project(_config_project(CONFIG)))
    assert _limits(r) == [("DEP107", "projects/app/trainer.py", 2)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_a_config_value_under_another_key_loads_nothing(write_project):
    # the value sits under `model.type`, the code loads `trainer.type`: the trainer module is no import of train.py
    r = scan_path(write_project(_config_project("trainer:\n    type: builtin\nmodel:\n    type: projects.app.trainer\n")))
    assert _limits(r) == []
    assert {f.location.path: f.reach for f in r.findings if f.code == "DEP107"} == {
        "projects/app/trainer.py": "off_main_path"}


def test_key_path_reads_attributes_subscripts_and_get():
    def kp(src):
        return key_path(ast.parse(src, mode="eval").body)
    assert kp("cfg.trainer.type") == ("trainer", "type")
    assert kp("cfg['model'].get('type')") == ("model", "type")
    assert kp("cfg.type") is None  # one key: any YAML value would do
    assert kp("'projects.app'") is None
    assert kp("f'{cfg.root}.model'") is None


def test_yaml_values_by_their_last_two_keys():
    assert yaml_values({"a.yaml": CONFIG, "b.yaml": "x:\n  trainer:\n    type: other.trainer\n", "c.yaml": "[1, 2"}) \
        == {("trainer", "type"): {"projects.app.trainer", "other.trainer"}, ("model", "type"): {"projects.app.model"}}


# a CUDA-graph wrapper chosen by a conditional expression on a parameter off by default
GRAPH = ("import torch\n\n\nclass Graph:\n    def __init__(self, fn):\n        self.fn = fn\n"
         "        self.stream = torch.cuda.Stream()\n\n    def __call__(self, x):\n        return self.fn(x)\n")
MODEL = ("import torch\nfrom graph import Graph\n\n\nclass Runner:\n    def __init__(self, use_graph=False):\n"
         "        self.step = Graph(self.run) if use_graph else self.run\n\n"
         "    def run(self, x):\n        return x * 2\n")
MAIN = ("import torch\nfrom model import Runner\n\n\nif __name__ == \"__main__\":\n"
        "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
        "    print(Runner({args}).step(torch.zeros(2, device=dev)))\n")


def test_a_conditional_expression_off_by_default_reaches_nothing(write_project):
    r = scan_path(write_project({"main.py": MAIN.format(args=""), "model.py": MODEL, "graph.py": GRAPH}))
    assert _limits(r) == []
    f = next(f for f in r.findings if f.code == "API102")
    assert (f.location.path, f.location.line, f.behind_flag) == (
        "graph.py", 7, "called only when `use_graph` (model.py:7) holds, which it does not at the defaults: "
                       "use_graph=False (the default)")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_caller_turns_the_conditional_expression_on(write_project):
    r = scan_path(write_project({"main.py": MAIN.format(args="use_graph=True"), "model.py": MODEL,
                                 "graph.py": GRAPH}))
    assert _limits(r) == [("API102", "graph.py", 7)]
    assert r.outlook.value == "mac_for_dev"


# a component chosen from a registry by a configuration string
REGISTRY = ("class Registry:\n    def __init__(self):\n        self.items = {}\n\n"
            "    def register_module(self):\n        def add(cls):\n            self.items[cls.__name__] = cls\n"
            "            return cls\n        return add\n\n    def build(self, cfg):\n"
            "        return self.items[cfg['NAME']]()\n\n\nMODELS = Registry()\n")
NETS = ("import torch\nfrom models.registry import MODELS\n\n\n@MODELS.register_module()\nclass CudaNet(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.w = torch.nn.Linear(2, 2).cuda()\n\n\n"
        "@MODELS.register_module()\nclass SmallNet(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = torch.nn.Linear(2, 2)\n")
REG_TRAIN = ("import yaml\nfrom models.registry import MODELS\nimport models.nets\n\n\nif __name__ == \"__main__\":\n"
             "    cfg = yaml.safe_load(open(\"cfgs/model.yaml\"))\n    print(MODELS.build(cfg[\"model\"]))\n")


def _registry_project(name):
    return {"train.py": REG_TRAIN, "models/__init__.py": "", "models/registry.py": REGISTRY, "models/nets.py": NETS,
            "cfgs/model.yaml": f"model:\n  NAME: {name}\n"}


def test_a_registered_component_the_configuration_names_limits(write_project):
    r = scan_path(write_project(_registry_project("CudaNet")))
    assert _limits(r) == [("API101", "models/nets.py", 9)]
    f = r.limiting[0]
    assert f.evidence["selected_by"] == ("CudaNet has a decorator that may register it (MODELS.register_module()), "
                                         "and the configuration names it: cfgs/model.yaml:2 (model.NAME)")
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_registered_component_no_configuration_names_is_not_verified(write_project):
    r = scan_path(write_project(_registry_project("SmallNet")))
    assert _limits(r) == []
    assert [(n["path"], n["line"]) for n in r.not_verified] == [("models/nets.py", 9)]
    assert r.outlook.value == "runs_on_mac"


# a library with no entry at all: its only program is an example
LIB = "import torch\n\n\ndef flow(x, t):\n    return x * t\n"
EXAMPLE = ("import torch\nfrom lib.core import flow\n\nuse_cuda = torch.cuda.is_available()\n"
           "device = torch.device(\"cuda\" if use_cuda else \"cpu\")\n\n\nif __name__ == \"__main__\":\n"
           "    print(flow(torch.zeros(2, device=device), 0.5))\n")


def test_with_no_entry_the_example_programs_limits_count(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/core.py": LIB, "examples/train.py": EXAMPLE,
                                 "README.md": "# lib\n\n```bash\npip install lib\n```\n"}))
    assert _limits(r) == [("API104", "examples/train.py", 4)]
    assert r.limiting[0].evidence["scope_from"] == "no entry: an example program"
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_root_entry_keeps_the_examples_secondary(write_project):
    main = "import torch\nfrom lib.core import flow\n\n\nif __name__ == \"__main__\":\n    print(flow(torch.zeros(2), 1))\n"
    r = scan_path(write_project({"lib/__init__.py": "", "lib/core.py": LIB, "examples/train.py": EXAMPLE,
                                 "main.py": main, "README.md": "# lib\n\n```bash\npip install lib\n```\n"}))
    assert _limits(r) == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_benchmark_folder_is_no_example_program(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/core.py": LIB, "benchmarks/speed.py": EXAMPLE,
                                 "README.md": "# lib\n\n```bash\npip install lib\n```\n"}))
    assert _limits(r) == []
    assert r.outlook.value == "runs_on_mac"


def test_a_conditional_expression_inside_a_lambda_is_read_without_error(write_project):
    # the test's name is looked up among the lambda's locals (it has none): undecided, so the wrapper stays reached
    model = MODEL.replace("self.step = Graph(self.run) if use_graph else self.run",
                          "self.wrap = lambda f: Graph(f) if use_graph else f\n        self.step = self.wrap(self.run)")
    r = scan_path(write_project({"main.py": MAIN.format(args=""), "model.py": model, "graph.py": GRAPH}))
    assert _limits(r) == [("API102", "graph.py", 7)]
