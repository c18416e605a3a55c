"""The static outlook on projects nobody here has read (issue 23): each general rule with a small fixture that
copies no repository, and its look-alike negatives. Every test asserts the exact verdict, flags and edits."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import rows

TORCH = "import torch\n"
ARGS = "import argparse\np = argparse.ArgumentParser()\n"


def outlook(r):
    """(verdict, flags, [(path, line, code, kind)]) of a scan result."""
    return (r.outlook.value, r.flags, [(e.path, e.line, e.code, e.kind) for e in r.edits])


# ---------------------------------------------------------------- 3. device flags are flags about devices
def test_single_dash_device_option_with_mps_among_its_choices_is_the_flag(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('-device', default='cuda', choices=['cuda', 'cpu', 'mps'])\nargs = p.parse_args()\n"
        "model = torch.nn.Linear(2, 2).to(args.device)\n")}))
    assert rows(r) == [("API103", "train.py", 4, "blocker")]
    assert outlook(r) == ("runs_on_mac", ["-device mps"], [])


def test_an_option_whose_value_flows_into_torch_device_is_a_device_flag(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--where', default='cuda')\nargs = p.parse_args()\n"
        "dev = torch.device(args.where)\nmodel = torch.nn.Linear(2, 2).to(dev)\n")}))
    assert outlook(r) == ("runs_on_mac", ["--where mps"], [])


def test_a_batch_size_per_device_is_no_device_flag(write_project):
    # a project that uses MPS only when asked (`--device mps`) has a device option; the per-device batch size
    # beside it, default None or a number, is not one: no `--device-batch-size mps` is printed
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--device', default='')\n"
        "p.add_argument('--device-batch-size', default=None)\n"
        "p.add_argument('--device_batch_size_eval', type=int, default=32)\n"
        "p.add_argument('--devices', default=1)\n"
        "args = p.parse_args()\n"
        "dev = 'mps' if args.device == 'mps' else ('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = torch.nn.Linear(2, 2).to(dev)\n")}))
    assert r.flags == ["--device mps"]
    assert r.outlook.value == "runs_on_mac"


# ---------------------------------------------------------------- 6. the exit code says why
def test_the_last_terminal_line_explains_exit_1_with_a_runs_on_mac_outlook(write_project, capsys):
    from mpsready.cli import main

    root = write_project({"train.py": TORCH + "model = torch.nn.Linear(2, 2)\n",
                          "tests/test_gpu.py": TORCH + "x = torch.zeros(2).cuda()\n"})
    code = main(["scan", str(root), "--no-cache", "-q"])
    lines = [ln.strip() for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert code == 1
    assert "static outlook: " in lines[-3] and "(runs_on_mac)" in lines[-3]
    assert lines[-2] == "secondary part tests: mac_for_dev, 1 edit"
    assert lines[-1] == ("exit 1: 1 finding at or above blocker, all off the main path (tests, examples, secondary "
                         "parts, guarded or optional code), so the outlook stays runs_on_mac; the exit code follows "
                         "--fail-on blocker (pass --exit-zero to exit 0)")


def test_no_exit_line_when_nothing_reaches_fail_on_and_the_exit_zero_line_says_so(write_project, capsys):
    from mpsready.cli import main

    clean = write_project({"train.py": TORCH + "model = torch.nn.Linear(2, 2)\n"})
    assert main(["scan", str(clean), "--no-cache", "-q"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("static outlook: ")
    dirty = write_project({"train.py": TORCH + "x = torch.zeros(2).cuda()\n"})
    assert main(["scan", str(dirty), "--no-cache", "-q", "--exit-zero"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "exit 0 (--exit-zero): 1 finding at or above blocker, all on the main path (they set the outlook "
        "mac_for_dev); the exit code follows --fail-on blocker")


# ---------------------------------------------------------------- 1. main path from entry points
LIB = {"lib/__init__.py": "from .core import Net\n",
       "lib/core.py": TORCH + "class Net(torch.nn.Module):\n    pass\n"}


def test_a_library_readme_makes_its_api_the_main_path_and_root_demos_secondary(write_project):
    r = scan_path(write_project({
        **LIB, "README.md": "# lib\n\n```python\nfrom lib import Net\nnet = Net()\n```\n",
        "train_demo.py": TORCH + "from lib import Net\nif __name__ == '__main__':\n    Net().cuda()\n"}))
    assert rows(r) == [("API101", "train_demo.py", 4, "blocker")]
    assert r.findings[0].output_evidence()["reach"] == "off_main_path"
    assert outlook(r) == ("runs_on_mac", [], [])
    assert [(s.part, s.outlook.value, len(s.edits)) for s in r.secondary] == [("train_demo.py", "mac_for_dev", 1)]


def test_a_library_whose_readme_runs_a_root_script_keeps_it_on_the_main_path(write_project):
    r = scan_path(write_project({
        **LIB, "README.md": "```python\nfrom lib import Net\n```\n\n```bash\npython train_demo.py\n```\n",
        "train_demo.py": TORCH + "from lib import Net\nif __name__ == '__main__':\n    Net().cuda()\n"}))
    assert outlook(r) == ("mac_for_dev", [], [("train_demo.py", 4, "API101", "edit")])


def test_a_readme_command_after_cd_runs_the_script_in_that_folder(write_project):
    files = {"pkg/__init__.py": "", "pkg/model.py": TORCH + "class M(torch.nn.Module):\n    pass\n",
             "pkg/train.py": TORCH + "from model import M\nif __name__ == '__main__':\n    M().cuda()\n",
             "tools/plot.py": "if __name__ == '__main__':\n    print(1)\n",
             "demo.py": TORCH + "if __name__ == '__main__':\n    print(torch.zeros(1))\n"}
    r = scan_path(write_project({**files, "README.md": "```bash\ncd pkg\npython train.py --lr 1\ncd ..\n```\n"}))
    assert outlook(r) == ("mac_for_dev", [], [("pkg/train.py", 4, "API101", "edit")])
    # the same script without the cd names a root train.py the project lacks: pkg/train.py stays secondary
    r = scan_path(write_project({**files, "README.md": "```bash\npython train.py --lr 1\n```\n"}))
    assert outlook(r) == ("runs_on_mac", [], [])


def test_cd_state_ends_with_its_block_and_a_cd_out_of_the_project_names_nothing(write_project):
    from mpsready.scan.model.entries import block_scripts, readme_blocks

    py = {"a/run.py", "a/b/run.py", "run.py"}
    assert block_scripts(["cd a && python run.py", "cd b; python run.py", "cd ../..", "python run.py"], py) == [
        "a/run.py", "a/b/run.py", "run.py"]
    assert block_scripts(["cd $HOME/a", "python run.py", "cd ~", "python run.py"], py) == []
    # the first cd into a folder the project lacks is the clone itself (`git clone .../Proj && cd Proj`)
    assert block_scripts(["git clone https://x/Proj.git", "cd Proj", "python run.py"], py) == ["run.py"]
    assert block_scripts(["cd Proj/a", "python run.py"], py) == ["a/run.py"]
    assert block_scripts(["cd a", "cd missing", "python run.py"], py) == []
    assert readme_blocks("```\ncd a\n```\n\n```\npython run.py\n```\n", markdown=True) == [["cd a"], ["python run.py"]]


# ---------------------------------------------------------------- 5. user flags vs CUDA-availability checks
MOVE = "model = torch.nn.Linear(2, 2)\nif args.cuda:\n    model.cuda()\n"


def test_a_user_cuda_flag_off_by_default_keeps_a_mac_on_the_cpu(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--cuda', action='store_true')\nargs = p.parse_args()\n" + MOVE)}))
    assert rows(r) == [("API101", "train.py", 8, "blocker"), ("API104", "train.py", 4, "degrades")]
    assert r.findings[0].output_evidence()["behind_flag"] == "--cuda" and "guarded" not in r.findings[0].output_evidence()
    assert r.findings[1].message == ("the device is chosen only by the option --cuda (off by default; 1 device call(s) "
                                     "behind it): on a Mac the program runs on the CPU, never on MPS")
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 4, "API104", "edit")])


def test_a_user_cuda_flag_on_by_default_runs_its_cuda_calls_on_a_mac(write_project):
    r = scan_path(write_project({"train.py": TORCH + ARGS + (
        "p.add_argument('--no-cuda', dest='cuda', action='store_false')\nargs = p.parse_args()\n" + MOVE)}))
    assert rows(r) == [("API101", "train.py", 8, "blocker")]
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 8, "API101", "edit")])


def test_a_cuda_attribute_assigned_from_availability_is_a_cuda_check(write_project):
    for setup in (("p.add_argument('--cuda', action='store_true')\nargs = p.parse_args()\n"
                   "args.cuda = args.cuda and torch.cuda.is_available()\n"),
                  "p.add_argument('--cuda', default=torch.cuda.is_available())\nargs = p.parse_args()\n"):
        r = scan_path(write_project({"train.py": TORCH + ARGS + setup + MOVE}))
        api101 = [f for f in r.findings if f.code == "API101"]
        assert [(f.severity.value, f.output_evidence().get("guarded")) for f in api101] == [("info", True)]
        assert not any(f.code == "API104" and "option" in f.output_evidence() for f in r.findings)


# ---------------------------------------------------------------- 4. the CUDA-core rule
ATTN = ("class Attention(torch.nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        return {call}\n")


def test_a_cuda_first_package_the_forward_calls_with_no_other_path_is_core(write_project):
    r = scan_path(write_project({
        "requirements.txt": "torch\n",
        "train.py": TORCH + "from flash_attn import flash_attn_func\n"
                    + ATTN.format(call="flash_attn_func(q, k, v)")
                    + "if __name__ == '__main__':\n    Attention()\n"}))
    dep = next(f for f in r.findings if f.code == "DEP107")
    assert dep.output_evidence()["core_op"] == "flash_attn_func in Attention.forward (train.py:5)"
    assert dep.output_evidence()["remedy"] == {"kind": "none"}
    assert r.outlook.value == "stay_on_cuda" and [f.code for f in r.limiting] == ["DEP107"]


def test_a_model_that_picks_mps_but_calls_a_cuda_only_kernel_in_its_core_stays_on_cuda(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + "import triton\n"
                    "@triton.jit\ndef fused_kernel(x_ptr):\n    pass\n"
                    + ATTN.format(call="fused_kernel[(1,)](q)")
                    + "if __name__ == '__main__':\n"
                    "    dev = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() "
                    "else 'cpu'\n    Attention().to(dev)\n"}))
    assert r.outlook.value == "stay_on_cuda"
    assert [(f.code, f.message) for f in r.limiting] == [("EXT103", "Triton kernel fused_kernel()")]


def test_a_cuda_first_package_beside_another_path_or_outside_a_model_stays_a_swap(write_project):
    beside = ATTN.format(call="flash_attn_func(q, k, v) if self.flash else "
                              "torch.nn.functional.scaled_dot_product_attention(q, k, v)")
    for files in ({"train.py": TORCH + "from flash_attn import flash_attn_func\n" + beside},
                  {"train.py": TORCH + "from flash_attn import flash_attn_func\n"
                               "def bench(q):\n    return flash_attn_func(q, q, q)\n"}):
        r = scan_path(write_project(files))
        dep = next(f for f in r.findings if f.code == "DEP107")
        assert "core_op" not in dep.output_evidence()
        assert dep.output_evidence()["remedy"]["kind"] == "swap" and r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- 2. the project's own MPS handling dominates
def test_code_in_a_branch_that_mps_tensors_never_take_does_not_limit(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/ops.py": TORCH + (
        "def dist(x, y):\n"
        "    if x.device.type != 'mps':\n        x, y = x.double(), y.double()\n"
        "    if x.is_mps:\n        pass\n    else:\n        x = x.to(torch.float64)\n"
        "    return x - y\n")}))
    assert [(f.code, f.location.line, f.severity.value, f.output_evidence().get("mps_excluded")) for f in r.findings
            if f.code == "DTY101"] == [("DTY101", 4, "info", True), ("DTY101", 4, "info", True),
                                       ("DTY101", 8, "info", True)]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_the_branch_mps_tensors_take_still_limits(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/ops.py": TORCH + (
        "def dist(x):\n    if x.device.type == 'mps':\n        x = x.double()\n    return x\n")}))
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code != "DEP110"] == [
        ("DTY101", 4, "blocker")]
    assert r.outlook.value == "mac_for_dev"


def test_a_literal_listing_accepted_dtypes_makes_no_float64_tensor(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/q.py": TORCH + (
        "from torch import float16, float32, float64\n"
        "def check(x, allowed=(torch.float32, torch.float64)):\n"
        "    assert x.dtype in allowed\n"
        "    ok = [float16, float32, float64]\n"
        "    return ok\n"
        "def make(n):\n    return torch.zeros(n, dtype=(torch.float64,)[0], device='mps')\n")}))
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code != "DEP110"] == [
        ("DTY101", 8, "blocker")]


def test_a_library_path_behind_an_off_by_default_keyword_does_not_limit_unless_the_project_turns_it_on(write_project):
    lib = {"lib/__init__.py": "from .attend import Attend\n", "lib/attend.py": TORCH + (
        "class Attend(torch.nn.Module):\n"
        "    def __init__(self, packed=False):\n        super().__init__()\n        self.packed = packed\n"
        "        if self.packed:\n            from flash_attn import flash_attn_varlen_func\n"
        "            self.fn = flash_attn_varlen_func\n"
        "    def forward(self, q):\n        if self.packed:\n            torch.cuda.synchronize()\n        return q\n")}
    r = scan_path(write_project({**lib, "README.md": "```python\nfrom lib import Attend\n```\n"}))
    assert [(f.code, f.output_evidence().get("behind_flag")) for f in r.findings if f.code in ("DEP107", "API102")] == [
        ("DEP107", "packed=False (the default)"), ("API102", "packed=False (the default)")]
    assert outlook(r) == ("runs_on_mac", [], [])
    r = scan_path(write_project({**lib, "train.py": TORCH + "from lib import Attend\nm = Attend(packed=True)\n"}))
    assert r.outlook.value == "mac_for_dev"
    assert sorted(f.code for f in r.limiting) == ["API102", "DEP107"]


def test_dtypes_a_loop_iterates_over_are_each_made(write_project):
    r = scan_path(write_project({"lib/__init__.py": "", "lib/q.py": TORCH + (
        "def make(n):\n    for dt in (torch.float32, torch.float64):\n"
        "        yield torch.zeros(n, dtype=dt, device='mps')\n"
        "    return [torch.ones(n, dtype=d) for d in [torch.float16, torch.float64]]\n")}))
    assert [(f.code, f.location.line) for f in r.findings if f.code == "DTY101"] == [("DTY101", 3), ("DTY101", 5)]


def test_a_project_that_picks_its_device_through_the_accelerator_api_runs_as_shipped(write_project):
    r = scan_path(write_project({
        "train.py": TORCH + "from evaluation.bench import bench\n"
                    "def main():\n"
                    "    dev = torch.accelerator.current_accelerator() or torch.device('cpu')\n"
                    "    model = torch.nn.Linear(2, 2).to(dev)\n"
                    "if __name__ == '__main__':\n    main()\n",
        "evaluation/__init__.py": "",
        "evaluation/bench.py": TORCH + "def bench():\n    pass\n",
        "evaluation/run_eval.py": TORCH + "if __name__ == '__main__':\n"
                                  "    torch.cuda.synchronize()\n    x = torch.zeros(2, device='cuda')\n"}))
    assert outlook(r) == ("runs_on_mac", [], [])
    assert [s.line() for s in r.secondary] == ["evaluation: mac_for_dev, 2 edits"]


def test_a_collection_whose_members_all_use_the_accelerator_api_runs_on_a_mac(write_project):
    member = TORCH + ("if __name__ == '__main__':\n"
                      "    dev = torch.accelerator.current_accelerator()\n    print(torch.ones(2, device=dev))\n")
    r = scan_path(write_project({f"ex{i}/main.py": member for i in range(3)}))
    assert [(s.path, s.outlook.value) for s in r.subprojects] == [
        ("ex0", "runs_on_mac"), ("ex1", "runs_on_mac"), ("ex2", "runs_on_mac")]
    assert outlook(r) == ("runs_on_mac", [], [])


SCRIPT_NAMED_LIKE_A_TEST = ("import argparse\nimport torch\np = argparse.ArgumentParser()\n"
                            "p.add_argument('--cuda', action='store_false')\nargs = p.parse_args()\n"
                            "model = torch.nn.Linear(2, 2)\nif args.cuda:\n    model.cuda()\n"
                            "def train(epoch):\n    return model(torch.ones(1, 2))\ntrain(1)\n")


def test_a_script_named_like_a_test_is_the_main_path(write_project):
    # locuslab/TCN runs `python add_test.py`: its --cuda is store_false (on by default), so a Mac calls .cuda()
    r = scan_path(write_project({"add_test.py": SCRIPT_NAMED_LIKE_A_TEST}))
    assert [(f.code, f.location.line, f.severity.value, f.scope.value) for f in r.findings if f.code == "API101"] == [
        ("API101", 8, "blocker", "main")]
    assert r.outlook.value == "mac_for_dev"


def test_a_test_module_or_a_script_in_a_tests_folder_stays_tests(write_project):
    unit = ("import unittest\nimport torch\n\n\nclass T(unittest.TestCase):\n    def test_move(self):\n"
            "        torch.ones(1).cuda()\n\n\nif __name__ == '__main__':\n    unittest.main()\n")
    r = scan_path(write_project({"model_test.py": unit, "tests/run_test.py": SCRIPT_NAMED_LIKE_A_TEST,
                                 "train.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n"}))
    assert sorted((f.location.path, f.scope.value) for f in r.findings if f.code == "API101") == [
        ("model_test.py", "tests"), ("tests/run_test.py", "tests")]
    assert r.outlook.value == "runs_on_mac"


def test_the_exit_line_says_main_path_blockers_a_flag_clears_leave_runs_on_mac(write_project, capsys):
    # nanoGPT's shape: `device = 'cuda'` overridden by a configurator's `--device=mps`; the line said the blockers
    # "set the outlook runs_on_mac"
    from mpsready.cli import main

    train = (TORCH + "import argparse\n\np = argparse.ArgumentParser()\np.add_argument('--device', default='cuda')\n"
             "args = p.parse_args()\nmodel = torch.nn.Linear(2, 2).to(args.device)\n")
    root = write_project({"train.py": train, "requirements.txt": "torch\n",
                          "README.md": "# demo\n\n```bash\npython train.py\n```\n"})
    code = main(["scan", str(root), "--no-cache", "-q"])
    lines = [ln.strip() for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert code == 1
    assert lines[-2] == "run on the Mac with: --device mps"
    assert lines[-1] == ("exit 1: 1 finding at or above blocker, all on the main path (each cleared by a command-line "
                         "value: the outlook is runs_on_mac with --device mps); the exit code follows --fail-on "
                         "blocker (pass --exit-zero to exit 0)")
