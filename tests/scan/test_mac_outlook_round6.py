"""Issue 32, sixth round: the selection-first verdict (``scan/model/selection.py``). Question 1 asks where each entry
of the project puts its work on a Mac; question 2 lets only what lies on the path of an entry that picks MPS limit
the headline. Each rule has a look-alike negative. The fixtures are written for these tests and copy no repository."""

from __future__ import annotations

import json

from mpsready.scan import scan_path
from mpsready.scan.formats.json import to_document
from mpsready.scan.formats.terminal import TerminalFormat
from mpsready.scan.model.remedy import limits

TORCH = "import torch\n"
REQS = {"requirements.txt": "torch\n"}
MAIN = "\n\nif __name__ == '__main__':\n    main()\n"
PICKS_MPS = "    device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
CUDA_OR_CPU = "    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
README = "# robot policy\n\n```\npython train.py\npython sample.py\npython eval_robot.py\n```\n"


def _limits(r):
    """The findings that limit the main path's outlook (code, path, line, severity)."""
    return [(f.code, f.location.path, f.location.line, f.severity.value) for f in r.findings if limits(f)]


def _edits(r):
    """The edits the headline counts (code, path, line): limits a flag or config value does not fix."""
    return [(e.code, e.path, e.line) for e in r.edits]


def _train(select: str) -> str:
    return TORCH + "\n\ndef main():\n" + select + "    model = torch.nn.Linear(2, 2).to(device)\n" \
        "    print(model(torch.zeros(1, 2, device=device)))\n" + MAIN


EVAL_ROBOT = TORCH + "\n\ndef main():\n    device = torch.device('cuda')\n    print(torch.zeros(2, device=device))\n" + MAIN


# ---------------------------------------------------------------- question 1 per entry: another entry's own program
def _robot(train: str, sample: str | None = None) -> dict:
    files = {"train.py": train, "eval_robot.py": EVAL_ROBOT, "README.md": README, **REQS}
    if sample is not None:
        files["sample.py"] = sample
    else:  # look-alike projects: the README runs training and the robot script only
        files["README.md"] = README.replace("python sample.py\n", "")
    return files


def test_a_script_whose_own_selection_picks_no_mps_is_its_own_part(write_project):
    r = scan_path(write_project(_robot(_train(PICKS_MPS), _train(PICKS_MPS))))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API103"]
    assert (f.location.path, f.location.line, f.reach) == ("eval_robot.py", 5, "off_main_path")
    assert f.evidence["other_entries"] == ("reached only from eval_robot.py, whose device selection picks no MPS; "
                                           "the Mac path starts at sample.py, train.py")
    assert r.selection == {"answer": "mps", "entries": ["sample.py", "train.py"],
                           "where": "sample.py:5 (torch.backends.mps.is_available())",
                           "other_entries": ["eval_robot.py (1 limit(s))"], "secondary_cpu": []}
    assert [p.line() for p in r.secondary] == ["eval_robot.py: mac_for_dev, 1 edit"]


def test_when_most_main_entries_pick_no_mps_every_entry_limits(write_project):
    # look-alikes: the sampling script chooses CUDA or the CPU (two of three main entries pick no MPS), or the README
    # runs one script that picks MPS beside one that names CUDA (undecided): question 2 changes nothing
    r = scan_path(write_project(_robot(_train(PICKS_MPS), _train(CUDA_OR_CPU))))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API103", "eval_robot.py", 5, "blocker"), ("API104", "sample.py", 5, "degrades")]
    assert (r.selection["answer"], r.selection["entries"], r.selection["where"]) == ("cpu", ["train.py"], "sample.py:5")
    r = scan_path(write_project(_robot(_train(PICKS_MPS))))
    assert (r.outlook.value, _limits(r)) == ("mac_for_dev", [("API103", "eval_robot.py", 5, "blocker")])
    assert r.selection["answer"] == "cuda"


# ---------------------------------------------------------------- the selection nearest the entry decides
_COMMON = TORCH + "\n\ndef pick():\n    return 'mps' if torch.backends.mps.is_available() else 'cpu'\n"
_EXPORT_OWN = TORCH + "from common import pick\n\n\ndef main():\n    print(pick())\n" \
    "    model = torch.nn.Linear(2, 2).cuda()\n    print(model)\n" + MAIN
_EXPORT_VIA = TORCH + "from common import pick\nfrom exporter import export\n\n\ndef main():\n" \
    "    export(torch.nn.Linear(2, 2).to(pick()))\n" + MAIN
_EXPORTER = TORCH + "\n\ndef export(model):\n    return model.cuda()\n"
_USES_PICK = TORCH + "from common import pick\n\n\ndef main():\n    print(torch.zeros(2).to(pick()))\n" + MAIN


def test_a_script_that_names_cuda_itself_keeps_its_own_device_whatever_it_imports(write_project):
    files = {"train.py": _USES_PICK, "sample.py": _USES_PICK, "common.py": _COMMON, "tools/export.py": _EXPORT_OWN,
             **REQS, "README.md": "```\npython train.py\npython sample.py\npython tools/export.py\n```\n"}
    r = scan_path(write_project(files))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API101"]
    assert (f.location.path, f.reach) == ("tools/export.py", "off_main_path")


def test_a_script_that_takes_its_device_from_a_helper_picking_mps_is_a_mac_entry(write_project):
    # look-alike: the script names no device itself and imports the helper that picks MPS: its path is the Mac's, so
    # the `.cuda()` of a module only it reaches keeps limiting
    files = {"train.py": _USES_PICK, "sample.py": _USES_PICK, "common.py": _COMMON, "tools/export.py": _EXPORT_VIA,
             "exporter.py": _EXPORTER, **REQS,
             "README.md": "```\npython train.py\npython sample.py\npython tools/export.py\n```\n"}
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API101", "exporter.py", 5, "blocker")]


# ---------------------------------------------------------------- a secondary CUDA-or-CPU selection
_PREDICTOR = TORCH + "\n\ndef predict(model, x):\n" + CUDA_OR_CPU + "    return model.to(device)(x.to(device))\n"


def _lightning(select: str = "") -> str:
    return TORCH + "import lightning as L\nfrom predictor import predict\n\n\ndef main():\n" + select + \
        "    trainer = L.Trainer(accelerator='gpu', devices=1)\n    print(trainer, predict)\n" + MAIN


def test_a_helpers_cuda_or_cpu_choice_beside_a_main_selection_of_mps_is_secondary(write_project):
    r = scan_path(write_project({"train.py": _lightning(), "predictor.py": _PREDICTOR, **REQS}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API104"]
    assert (f.location.path, f.location.line, f.severity.value) == ("predictor.py", 5, "info")
    assert f.evidence["secondary_cpu"] == ("a secondary selection: train.py put the work on MPS (train.py:7 (Lightning "
                                           "accelerator='gpu' picks MPS)); the part this choice feeds runs on the "
                                           "Mac's CPU, slower but correct")
    assert r.selection["secondary_cpu"] == ["predictor.py:5"]


def test_the_entrys_own_cuda_or_cpu_choice_is_its_selection(write_project):
    # look-alike: the same choice in the entry file itself is the entry's selection: a Mac trains on its CPU
    r = scan_path(write_project({"train.py": _lightning(CUDA_OR_CPU), "predictor.py": TORCH, **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API104", "train.py", 7, "degrades")]


# ---------------------------------------------------------------- a device taken from the project's configuration
_CONFIG_TRAIN = TORCH + "import yaml\n\ncfg = yaml.safe_load(open('configs/train.yaml'))\n\n\ndef main():\n" \
    "    device = torch.device(cfg['device'])\n    model = torch.nn.Linear(2, 2).to(device)\n{extra}" \
    "    print(model(torch.zeros(1, 2, device=device)))\n" + MAIN
_CONFIG = {"configs/train.yaml": "device: cuda\nlr: 0.1\n"}


def test_an_entry_whose_device_is_a_config_value_picks_mps_with_its_override(write_project):
    r = scan_path(write_project({**_robot(_CONFIG_TRAIN.format(extra=""), _CONFIG_TRAIN.format(extra="")), **_CONFIG}))
    assert (r.outlook.value, r.flags, _edits(r)) == ("runs_on_mac", ["device: mps in configs/train.yaml"], [])
    assert r.selection["where"] == "its device is a config value: device: mps in configs/train.yaml"


def test_an_entry_that_also_names_cuda_itself_gets_no_credit_from_the_config(write_project):
    # look-alike: the training script moves a tensor with `.cuda()` too, so the config value is not its whole selection
    # (one of three main entries picks MPS)
    extra = "    print(torch.ones(2).cuda())\n"
    r = scan_path(write_project({**_robot(_CONFIG_TRAIN.format(extra=extra), _CONFIG_TRAIN.format(extra="")),
                                 **_CONFIG}))
    assert r.outlook.value == "mac_for_dev"
    assert _edits(r) == [("API103", "eval_robot.py", 5), ("API101", "train.py", 10)]
    assert (r.selection["answer"], r.selection["entries"]) == ("cuda", ["sample.py"])


# ---------------------------------------------------------------- a device forced to the CPU when CUDA is absent
def _forced(override: str) -> str:
    return TORCH + "import argparse\n\np = argparse.ArgumentParser()\np.add_argument('--device', default='cuda:0')\n" \
        "args = p.parse_args()\ndevice = args.device\nif not torch.cuda.is_available():\n" + override + \
        "print(torch.zeros(2).to(device))\n"


def test_a_device_forced_to_the_cpu_without_cuda_keeps_a_mac_on_its_cpu_whatever_the_option(write_project):
    r = scan_path(write_project({"run.py": _forced("    device = 'cpu'\n"), **REQS}))
    assert (r.outlook.value, r.flags, _edits(r)) == ("mac_for_dev", ["--device mps"], [("API104", "run.py", 8)])


def test_a_device_switched_to_mps_without_cuda_is_no_cpu_selection(write_project):
    # look-alike: the branch a Mac enters picks MPS when it is available
    r = scan_path(write_project({"run.py": _forced("    device = 'mps' if torch.backends.mps.is_available() else 'cpu'\n"),
                                 **REQS}))
    assert [f for f in r.findings if f.code == "API104"] == []
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- the headline says which question decided it
def test_the_headline_names_the_question_that_decided_it(write_project):
    r = scan_path(write_project(_robot(_train(PICKS_MPS), _train(PICKS_MPS))))
    line = ("runs_on_mac: question 1 (device selection): sample.py, train.py pick MPS on a Mac (sample.py:5 "
            "(torch.backends.mps.is_available())); question 2: nothing on its path limits it")
    doc = json.loads(json.dumps(to_document(r)))
    assert doc["outlook"]["decided_by"] == line
    assert doc["outlook"]["selection"]["answer"] == "mps"
    assert line in TerminalFormat().log_lines(r)


# ---------------------------------------------------------------- a CUDA-or-CPU fallback for an unset device value
_SOLVER = TORCH + "\n\nclass Solver:\n    def __init__(self, cfg):\n        self.cfg = cfg\n\n    def setup(self):\n" \
    "        cfg = self.cfg\n        if cfg.{test}:\n            device = torch.device(cfg.device)\n        else:\n" \
    "            device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        return device\n"
_SOLVER_MAIN = TORCH + "import argparse\nfrom solver import Solver\n\n\ndef main():\n" \
    "    p = argparse.ArgumentParser()\n    p.add_argument('-d', '--{option}', type=str, help='device')\n" \
    "    args = p.parse_args()\n    print(Solver(args).setup())\n" + MAIN


def test_a_cuda_or_cpu_fallback_for_an_unset_device_is_resolved_by_the_entrys_device_option(write_project):
    r = scan_path(write_project({"train.py": _SOLVER_MAIN.format(option="device"),
                                 "solver.py": _SOLVER.format(test="device"), **REQS}))
    assert (r.outlook.value, r.flags, r.commands, _edits(r)) == ("runs_on_mac", ["--device mps"],
                                                                ["python train.py --device mps"], [])
    [f] = [f for f in r.findings if f.code == "API104"]
    assert (f.location.path, f.location.line, f.evidence["unset_device"]) == ("solver.py", 13, "cfg.device")
    assert f.evidence["unset_by"] == "train.py's --device sets cfg.device"


def test_a_cuda_or_cpu_choice_under_another_test_or_without_a_device_option_stays_a_limit(write_project):
    # look-alikes: the branch tests another setting (`if self.cfg.resume:`), or the entry has no device option
    for option, test in (("device", "resume"), ("output", "device")):
        r = scan_path(write_project({"train.py": _SOLVER_MAIN.format(option=option),
                                     "solver.py": _SOLVER.format(test=test), **REQS}))
        assert (r.outlook.value, _edits(r)) == ("mac_for_dev", [("API104", "solver.py", 13)]), (option, test)


# ---------------------------------------------------------------- `unknown or <a test the Mac decides true>`
def _warmup(test: str) -> str:
    return TORCH + "\n_READY = False\n\n\ndef warm(device):\n    global _READY\n" \
        f"    if _READY or {test}:\n        return\n    torch.cuda.synchronize()\n    _READY = True\n\n\n" \
        "if __name__ == '__main__':\n    warm(torch.device('mps' if torch.backends.mps.is_available() else 'cpu'))\n"


def test_an_early_return_on_an_unknown_or_a_device_test_the_mac_passes_skips_the_rest(write_project):
    r = scan_path(write_project({"gen.py": _warmup("device.type != 'cuda'"), **REQS}))
    assert (r.outlook.value, _limits(r)) == ("runs_on_mac", [])
    [f] = [f for f in r.findings if f.code == "API102"]
    assert f.severity.value == "info"


def test_an_early_return_on_an_unknown_or_a_test_the_mac_fails_keeps_the_rest(write_project):
    # look-alike: `device.type == 'cuda'` is False on a Mac, so the early return depends on the unknown flag alone
    r = scan_path(write_project({"gen.py": _warmup("device.type == 'cuda'"), **REQS}))
    assert r.outlook.value == "mac_for_dev"
    assert _limits(r) == [("API102", "gen.py", 10, "blocker")]


# ---------------------------------------------------------------- the current CUDA device names CUDA
def _get_device(other: str) -> str:
    return TORCH + "\n\ndef get_device():\n    if torch.cuda.is_available():\n" \
        f"        return torch.device(torch.cuda.current_device())\n    return torch.device({other!r})\n\n\n" \
        "DEVICE = get_device()\n\n\nif __name__ == '__main__':\n    print(torch.zeros(2, device=DEVICE))\n"


def test_a_helper_returning_the_current_cuda_device_or_the_cpu_keeps_a_mac_on_its_cpu(write_project):
    r = scan_path(write_project({"sample.py": _get_device("cpu"), **REQS}))
    assert (r.outlook.value, _edits(r)) == ("mac_for_dev", [("API104", "sample.py", 5)])


def test_a_helper_returning_the_current_cuda_device_or_mps_is_no_cpu_selection(write_project):
    # look-alike: its other branch gives MPS
    r = scan_path(write_project({"sample.py": _get_device("mps"), **REQS}))
    assert [f for f in r.findings if f.code == "API104"] == []
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- a setup.py's table of pinned requirements
def _setup(keys: str) -> str:
    return "import re\nfrom setuptools import setup\n\n_deps = [\n    'einops>=0.8.0',\n    'deepspeed==0.16.8',\n" \
        "    'trl[vllm]==0.18.0',\n]\n" \
        "deps = {b: a for a, b in (re.findall(r'^(([^!=<>~ ]+)(?:[!=<>~ ].*)?$)', x)[0] for x in _deps)}\n\n\n" \
        "def deps_list(*pkgs):\n    return [deps[pkg] for pkg in pkgs]\n\n\n" \
        f"install_requires = {keys}\nsetup(name='proj', install_requires=install_requires)\n"


def test_a_lookup_into_the_setup_table_of_pinned_requirements_is_read(write_project):
    r = scan_path(write_project({"setup.py": _setup("[deps['einops'], deps['deepspeed']]"), "train.py": TORCH}))
    assert [(d.name, d.specifier, d.line) for d in r.dependencies] == [("einops", ">=0.8.0", 16),
                                                                     ("deepspeed", "==0.16.8", 16)]
    assert [(f.code, f.location.line) for f in r.findings if f.code.startswith("DEP")] == [("DEP101", 16)]
    r = scan_path(write_project({"setup.py": _setup("[deps['einops']] + deps_list('trl')"), "train.py": TORCH}))
    assert [d.name for d in r.dependencies] == ["einops", "trl"]


def test_a_lookup_of_a_name_the_table_does_not_hold_stays_unread(write_project):
    # look-alike: `deps['accelerate']` names no requirement of the table: computed at run time, not guessed
    r = scan_path(write_project({"setup.py": _setup("[deps['einops'], deps['accelerate']]"), "train.py": TORCH}))
    assert [d.name for d in r.dependencies] == ["einops"]
    assert [(f.code, f.location.line) for f in r.findings if f.code.startswith("DEP")] == [("DEP108", 16)]


# ---------------------------------------------------------------- a CUDA-only package the knowledge base now knows
def _rotation(imports: str, use: str) -> str:
    return TORCH + imports + "\n\nclass Rotate(torch.autograd.Function):\n    @staticmethod\n" \
        f"    def forward(ctx, u):\n        return {use}\n\n\n" \
        "if __name__ == '__main__':\n    print(Rotate.apply(torch.ones(4)))\n"


def test_a_hadamard_kernel_package_the_rotation_calls_unconditionally_keeps_the_project_on_cuda(write_project):
    r = scan_path(write_project({"rotate.py": _rotation("from fast_hadamard_transform import hadamard_transform",
                                                        "hadamard_transform(u)"), **REQS}))
    assert r.outlook.value == "stay_on_cuda"
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.line, f.severity.value, f.core_op) == (2, "blocker", "hadamard_transform in Rotate.forward "
                                                                            "(rotate.py:7)")


def test_a_hadamard_kernel_package_behind_a_fallback_is_no_core_op(write_project):
    # look-alike: the import has a pure-PyTorch fallback and the rotation chooses between them
    imports = "try:\n    from fast_hadamard_transform import hadamard_transform\nexcept ImportError:\n" \
              "    hadamard_transform = None"
    r = scan_path(write_project({"rotate.py": _rotation(imports, "hadamard_transform(u) if hadamard_transform else u"),
                                 **REQS}))
    assert r.outlook.value == "runs_on_mac"
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert f.severity.value == "degrades"
