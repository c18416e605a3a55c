"""Issue 32, third round: general causes found on the tuning sets (the 43 repositories of 2026-12, the 30 of
``../shared/labelled/``). Each rule has a look-alike negative. The fixtures are written for these tests and copy
no repository."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"
MAIN = "if __name__ == '__main__':\n    {body}\n"


def _subs(r):
    return [(s.path, s.outlook.value) for s in r.subprojects]


# ---------------------------------------------------------------- a project that installs itself is no collection
def _kernel_package(declaration: dict[str, str]) -> dict[str, str]:
    files = {
        "vmnet/__init__.py": "from vmnet.net import Net\n",
        "vmnet/net.py": TORCH + "from mamba_ssm import Mamba\n\n\nclass Net(torch.nn.Module):\n"
                        "    def __init__(self):\n        super().__init__()\n        self.mix = Mamba(d_model=16)\n\n"
                        "    def forward(self, x):\n        return self.mix(x)\n\n\n"
                        + MAIN.format(body="print(Net()(torch.zeros(1, 4, 16)).shape)"),
        "tools/convert.py": TORCH + MAIN.format(body="print(torch.load('a.pt').keys())"),
        "evaluation/score.py": TORCH + MAIN.format(body="print(torch.zeros(2).sum())"),
        "demo/show.py": TORCH + MAIN.format(body="print(torch.ones(1))"),
    }
    files.update(declaration)
    return files


def test_a_package_the_project_installs_is_not_excused_by_its_sibling_folders(write_project):
    setup = "from setuptools import setup\nsetup(name='vmnet', packages=['vmnet'], install_requires=['torch'])\n"
    r = scan_path(write_project(_kernel_package({"setup.py": setup})))
    assert (r.outlook.value, _subs(r)) == ("stay_on_cuda", [])
    # the declaration one folder above the package (`pkg/setup.py` over `pkg/vmnet`) counts the same way
    nested = {f"pkg/{k}": v for k, v in _kernel_package({"setup.py": setup}).items()}
    r = scan_path(write_project(nested))
    assert (r.outlook.value, _subs(r)) == ("stay_on_cuda", [])


def test_independent_example_folders_without_an_installed_package_stay_a_collection(write_project):
    # look-alike: the same folders, no package declaration: one CUDA-only example never condemns the rest
    r = scan_path(write_project(_kernel_package({})))
    assert _subs(r) == [("demo", "runs_on_mac"), ("evaluation", "runs_on_mac"), ("tools", "runs_on_mac"),
                        ("vmnet", "stay_on_cuda")]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- device options whose allowed values leave out mps
ABSL = "from absl import app, flags\nFLAGS = flags.FLAGS\n"


def test_an_absl_device_flag_validated_against_cpu_and_cuda_is_an_edit(write_project):
    src = TORCH + ABSL + ("flags.DEFINE_string('device', 'cpu', 'where to run')\n"
                          "_VALID = ['cpu', 'cuda']\n"
                          "def check(device):\n    if device not in _VALID:\n        raise ValueError(device)\n"
                          "    return True\n"
                          "flags.register_validator('device', check)\n"
                          "def main(_):\n    model = torch.nn.Linear(2, 2).to(torch.device(FLAGS.device))\n"
                          "app.run(main)\n")
    r = scan_path(write_project({"run.py": src}))
    assert rows(r) == [("API104", "run.py", 4, "degrades")]
    f = r.findings[0]
    assert f.message == ("device option --device is validated against ['cpu', 'cuda'] (default 'cpu'): on a Mac the "
                         "program runs on the CPU, and --device=mps is rejected")
    assert (r.outlook.value, [(e.path, e.line, e.code, e.kind) for e in r.edits]) == (
        "mac_for_dev", [("run.py", 4, "API104", "edit")])


def test_an_absl_device_flag_without_a_validator_is_a_flag(write_project):
    # look-alike: the same flag, nothing rejects 'mps': the Mac needs --device=mps only
    src = TORCH + ABSL + ("flags.DEFINE_string('device', 'cpu', 'where to run')\n"
                          "def main(_):\n    model = torch.nn.Linear(2, 2).to(torch.device(FLAGS.device))\n"
                          "app.run(main)\n")
    r = scan_path(write_project({"run.py": src}))
    assert (r.outlook.value, r.flags) == ("runs_on_mac", ["--device=mps"])


def test_an_inline_check_against_a_device_list_limits_an_argparse_option(write_project):
    src = TORCH + ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default='cpu')\n"
                   "args = p.parse_args()\n"
                   "if args.device not in ('cpu', 'cuda'):\n    raise SystemExit('bad device')\n"
                   "model = torch.nn.Linear(2, 2).to(args.device)\n")
    r = scan_path(write_project({"train.py": src}))
    assert rows(r) == [("API104", "train.py", 4, "degrades")]
    assert r.outlook.value == "mac_for_dev"
    # look-alike: the list names mps: the flag is enough
    r = scan_path(write_project({"train.py": src.replace("('cpu', 'cuda')", "('cpu', 'cuda', 'mps')")}))
    assert (rows(r), r.outlook.value, r.flags) == ([], "runs_on_mac", ["--device mps"])


def test_a_cuda_or_cpu_default_written_over_several_lines_is_fixed_by_the_flag(write_project):
    src = TORCH + ("import argparse\np = argparse.ArgumentParser()\np.add_argument(\n    '--device',\n"
                   "    type=str,\n    default='cuda' if torch.cuda.is_available() else 'cpu',\n)\n"
                   "args = p.parse_args()\nmodel = torch.nn.Linear(2, 2).to(args.device)\n")
    r = scan_path(write_project({"cli.py": src}))
    assert rows(r) == [("API104", "cli.py", 7, "degrades")]
    assert (r.outlook.value, r.flags, r.commands) == ("runs_on_mac", ["--device mps"], ["python cli.py --device mps"])
    # look-alike: the same line in a plain assignment is no option: an edit
    r = scan_path(write_project({"cli.py": TORCH + "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                                 "model = torch.nn.Linear(2, 2).to(device)\n"}))
    assert (r.outlook.value, r.flags) == ("mac_for_dev", [])


# ---------------------------------------------------------------- a self-test block of an imported module
def test_the_main_block_of_a_module_the_entry_imports_is_a_demo_without_init_py(write_project):
    tok = TORCH + ("class Tok:\n    def __init__(self, device):\n        self.device = device\n\n\n"
                   "if __name__ == '__main__':\n"
                   "    Tok(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n")
    cli = TORCH + ("from lib.models.tok import Tok\n"
                   "dev = torch.device('mps' if torch.backends.mps.is_available() else 'cpu')\n"
                   "Tok(dev)\n")
    r = scan_path(write_project({"lib/models/tok.py": tok, "cli.py": cli}))
    assert [(f.code, f.location.line, f.reach) for f in r.findings if f.code != "DEP110"] == [
        ("API104", 8, "module_demo")]
    assert r.outlook.value == "runs_on_mac"
    # look-alike: a script nobody imports keeps its own block on its own line (a secondary part)
    r = scan_path(write_project({"lib/models/tok.py": tok, "cli.py": TORCH + "print(1)\n"}))
    assert [(f.code, f.location.line, f.reach) for f in r.findings if f.code != "DEP110"] == [
        ("API104", 8, "off_main_path")]


# ---------------------------------------------------------------- the README's usage code
PKG = {"lightpkg/__init__.py": "from lightpkg.net import Net\n",
       "lightpkg/net.py": TORCH + "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"}


def test_cuda_calls_in_the_readme_usage_of_a_library_are_edits(write_project):
    readme = ("# lightpkg\n\n```python\nfrom lightpkg import Net\n"
              "net = Net().eval().cuda()\nx = torch.zeros(1).cuda()\n```\n")
    r = scan_path(write_project({**PKG, "README.md": readme}))
    assert rows(r) == [("API101", "README.md", 5, "blocker"), ("API101", "README.md", 6, "blocker")]
    assert r.findings[0].message == ("the README's usage code calls Net().eval().cuda(): a Mac following it fails "
                                     "(no CUDA)")
    assert (r.outlook.value, [(e.path, e.line, e.migrate) for e in r.edits]) == (
        "mac_for_dev", [("README.md", 5, False), ("README.md", 6, False)])


def test_readme_cuda_calls_that_are_guarded_or_do_not_use_the_project_do_not_limit(write_project):
    guarded = ("```python\nfrom lightpkg import Net\nnet = Net()\nif torch.cuda.is_available():\n"
               "    net = net.cuda()\n```\n")
    r = scan_path(write_project({**PKG, "README.md": guarded}))
    assert (rows(r), r.outlook.value) == ([], "runs_on_mac")
    other = "```python\nimport torch\nx = torch.zeros(1).cuda()\n```\n"  # no import of the project
    r = scan_path(write_project({**PKG, "README.md": other}))
    assert (rows(r), r.outlook.value) == ([], "runs_on_mac")


# ---------------------------------------------------------------- the README's feature sections
PICK = ("dev = torch.device('mps' if torch.backends.mps.is_available() else 'cpu')\n"
        "model = torch.nn.Linear(2, 2).to(dev)\n")
TRAIN_CUDA = TORCH + "model = torch.nn.Linear(2, 2).cuda()\n"


def _readme(*blocks: str) -> str:
    return "# proj\n\n" + "\n".join(f"```bash\n{b}\n```\n" for b in blocks)


def test_scripts_run_after_a_features_install_are_secondary(write_project):
    files = {"requirements.txt": "torch\n", "requirements+.txt": "xformers==0.0.28\n",
             "script/run.py": TORCH + PICK, "script/train.py": TRAIN_CUDA,
             "README.md": _readme("pip install -r requirements.txt", "python script/run.py",
                                  "pip install -r requirements+.txt -r requirements.txt", "python script/train.py")}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    assert [(f.code, f.location.path, f.reach) for f in r.findings if f.code in ("API101", "DEP101")] == [
        ("DEP101", "requirements+.txt", None), ("API101", "script/train.py", "off_main_path")]
    assert r.optional[0]["path"] == "requirements+.txt"
    assert [s.line() for s in r.secondary] == ["script: mac_for_dev, 1 edit"]
    # look-alike: the README runs training right after the main install: it is main work
    files["README.md"] = _readme("pip install -r requirements.txt", "python script/run.py", "python script/train.py")
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


def test_a_root_training_script_run_after_installing_more_packages_is_secondary(write_project):
    files = {"setup.py": "from setuptools import setup\nsetup(name='proj')\n", "demo.py": TORCH + PICK,
             "train_on_data.py": TRAIN_CUDA,
             "README.md": _readme("python demo.py", "pip install -e .",
                                  "pip install pytorch_lightning==1.6.0 tensorboard", "python train_on_data.py")}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    # look-alike: no install between the demo and the training: the main-named root script stays a main entry
    files["README.md"] = _readme("pip install -e .", "python demo.py", "python train_on_data.py")
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


def test_a_folder_with_its_own_requirements_is_a_feature_when_the_readme_runs_other_scripts(write_project):
    files = {"demo.py": TORCH + PICK, "webui/app.py": TRAIN_CUDA, "webui/requirements.txt": "gradio\n",
             "README.md": "# proj\n\nRun `python -m webui.app` after `pip install -r webui/requirements.txt`.\n\n"
                          + _readme("python demo.py")}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    # look-alike: the folder holds every script the README runs: it is the main work
    files["README.md"] = "# proj\n\n" + _readme("pip install -r webui/requirements.txt", "python -m webui.app")
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


def test_folders_of_scripts_that_never_import_torch_are_no_examples(write_project):
    # data preparation folders beside the model's folder (`exps/<dataset>/prep.py` with NumPy only)
    files = {"requirements.txt": "torch\n", "src/net.py": _kernel_package({})["vmnet/net.py"],
             "exps/a/prep.py": "import json\n" + MAIN.format(body="print(json.dumps([1]))"),
             "exps/b/prep.py": "import numpy as np\n" + MAIN.format(body="print(np.zeros(2))")}
    r = scan_path(write_project(files))
    assert (r.outlook.value, _subs(r)) == ("stay_on_cuda", [])


def test_scripts_run_only_under_a_training_heading_are_secondary(write_project):
    readme = ("# Proj\n\n## Usage\n\n```bash\npython demo.py --input x.png\n```\n\n"
              "## Training\n\n### Quick example\n\n```bash\ntorchrun --nproc_per_node=4 train.py\n```\n")
    files = {"setup.py": "from setuptools import setup\nsetup(name='proj')\n", "demo.py": TORCH + PICK,
             "train.py": TRAIN_CUDA, "README.md": readme}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    assert [s.line() for s in r.secondary] == ["train.py: mac_for_dev, 1 edit"]
    # look-alike: a README whose every command is under the training heading: training is the main work
    files["README.md"] = "# Proj\n\n## Training\n\n```bash\npython demo.py\npython train.py\n```\n"
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- residence: moved to the CPU when on MPS
GUIDE = TORCH + ("def project(v0, v1):\n    kind = v0.device.type\n    if {test}:\n"
                 "        v0, v1 = v0.cpu(), v1.cpu()\n    v0, v1 = v0.double(), v1.double()\n"
                 "    return (v0 * v1).float().to(kind)\n")


def test_a_tensor_moved_to_the_cpu_when_on_mps_is_float64_on_the_cpu(write_project):
    r = scan_path(write_project({"guide.py": GUIDE.format(test="kind == 'mps'")}))
    assert rows(r) == [("DTY101", "guide.py", 6, "info"), ("DTY101", "guide.py", 6, "info")]
    assert r.outlook.value == "runs_on_mac"


def test_a_tensor_moved_to_the_cpu_only_when_on_cuda_stays_on_mps(write_project):
    # look-alike: a Mac never enters `if v0.is_cuda:`, so the tensor is still on MPS when it is made float64
    r = scan_path(write_project({"guide.py": GUIDE.format(test="v0.is_cuda")}))
    assert rows(r) == [("DTY101", "guide.py", 6, "blocker"), ("DTY101", "guide.py", 6, "blocker")]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- the README runs the console command
def test_a_console_command_the_readme_runs_is_the_main_work(write_project):
    setup = ("from setuptools import setup\n"
             "setup(name='tool', entry_points={'console_scripts': ['tool=tool.gui:main']})\n")
    files = {"setup.py": setup, "tool/__init__.py": "", "tool/gui.py": TORCH + "def main():\n    " +
             PICK.replace("\n", "\n    ").rstrip() + "\n", "trainer.py": TRAIN_CUDA,
             "README.md": "# tool\n\n```bash\npip install -e .\ntool --port 7865\n```\n"}
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"
    assert [s.line() for s in r.secondary] == ["trainer.py: mac_for_dev, 1 edit"]
    # look-alike: the README runs the root training script too: it stays main work
    files["README.md"] = "# tool\n\n```bash\npip install -e .\ntool --port 7865\npython trainer.py\n```\n"
    r = scan_path(write_project(files))
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a model file driven by its notebooks
def _nb(source: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "source": source.splitlines(keepends=True), "metadata": {},
                                  "outputs": [], "execution_count": None}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_notebooks_are_the_main_work_when_nothing_else_runs(write_project):
    model = TORCH + "class Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    files = {"net.py": model, "train.ipynb": _nb("import torch\nfrom net import Net\nm = Net().to('cuda:0')\n")}
    r = scan_path(write_project(files))
    assert [(f.code, f.location.path, f.reach) for f in r.findings if f.code == "API103"] == [
        ("API103", "train.ipynb", None)]
    assert r.outlook.value == "mac_for_dev"
    # look-alike: a script runs the model too: the notebook is a demo beside it
    files["train.py"] = TORCH + "from net import Net\n" + PICK
    r = scan_path(write_project(files))
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- a switch that selects MPS is the Mac's flag
SWITCH = TORCH + ("import argparse\np = argparse.ArgumentParser()\n"
                  "p.add_argument('--apple_silicon', action='store_true')\nargs = p.parse_args()\n"
                  "apple = args.apple_silicon\n"
                  "if {test}:\n    if torch.backends.mps.is_available():\n        device = torch.device({value!r})\n"
                  "    else:\n        device = torch.device('cpu')\n"
                  "else:\n    device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')\n"
                  "model = torch.nn.Linear(2, 2).to(device)\n")


def test_a_store_true_option_that_selects_mps_is_printed_as_the_flag(write_project):
    r = scan_path(write_project({"run.py": SWITCH.format(test="args.apple_silicon", value="mps")}))
    assert (r.outlook.value, r.flags) == ("runs_on_mac", ["--apple_silicon"])


def test_a_store_true_option_whose_branch_picks_no_mps_is_no_flag(write_project):
    # look-alike: the same switch choosing another CUDA device: not the Mac's flag
    r = scan_path(write_project({"run.py": SWITCH.format(test="args.apple_silicon", value="cuda:1")}))
    assert "--apple_silicon" not in r.flags


# ---------------------------------------------------------------- a kernel with a Metal implementation beside it
def test_cuda_sources_beside_a_metal_implementation_are_not_the_macs_build(write_project):
    files = {"requirements.txt": "torch\n", "run.py": TORCH + PICK,
             "baker/csrc/bake.cu": "__global__ void bake() {}\n", "baker/csrc/bake.cpp": "// dispatch\n"}
    r = scan_path(write_project(files))
    assert [(f.code, f.location.path, f.severity.value) for f in r.findings if f.code == "EXT101"] == [
        ("EXT101", "baker/csrc/bake.cu", "blocker")]
    assert r.outlook.value == "stay_on_cuda"
    # the same kernel with its Metal implementation in the source folder: the Mac builds that one
    files["baker/csrc/bake.metal"] = "kernel void bake() {}\n"
    r = scan_path(write_project(files))
    ext = [f for f in r.findings if f.code == "EXT101"]
    assert [(f.location.path, f.severity.value, f.evidence.get("metal")) for f in ext] == [
        ("baker/csrc/bake.cu", "info", "baker/csrc/bake.metal")]
    assert r.outlook.value == "runs_on_mac"
