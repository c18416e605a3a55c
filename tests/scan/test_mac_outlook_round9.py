"""Issue 32, round 9: the classes of ``runs_on_mac`` projects the outlook called ``mac_for_dev`` (the census in
docs/scan.md, "Round 9"), each fixed by a general rule with a fixture and a look-alike that keeps its old verdict.
Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme, rows

# ---------------------------------------------------------------- a module's own definition shadows a `*` import
UTILS = ("import torch\n\n\ndef setup_seed(seed):\n    torch.manual_seed(seed)\n\n\n"
         "def init_model(width, device=\"cuda\"):\n    model = torch.nn.Linear(width, width)\n"
         "    return model.to(device)\n")
TRAIN = ("import argparse\n\nimport torch\n\nfrom utils import init_model, setup_seed\n\n"
         "parser = argparse.ArgumentParser()\n"
         "parser.add_argument(\"--device\", default=\"cpu\", choices=[\"cpu\", \"mps\", \"cuda\"])\n"
         "args = parser.parse_args()\nsetup_seed(0)\nmodel = init_model(8, device=args.device)\n"
         "print(model(torch.zeros(1, 8, device=args.device)))\n")
README = bash_readme("pip install -r requirements.txt", "python train.py", "python evaluate.py")


def _evaluate(own_def: bool) -> str:
    head = "import argparse\n\nfrom utils import *\n\n\n"
    own = "def init_model(opts):\n    return opts.width\n\n\n" if own_def else ""
    call = "init_model(parser.parse_args())" if own_def else "init_model(8)"
    return (head + own + "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument(\"--width\", type=int, default=8)\n    setup_seed(0)\n"
            f"    print({call})\n")


def _project(scan_project, own_def: bool):
    return scan_project({"utils.py": UTILS, "train.py": TRAIN, "evaluate.py": _evaluate(own_def)}, readme=README)


def test_a_same_named_function_of_the_calling_module_is_not_a_call_of_the_imported_one(scan_project):
    # evaluate.py brings utils' names with `*` and defines its own init_model(opts): its bare call is of that
    # definition; the one call of utils.init_model (train.py) passes the device, so the 'cuda' default never runs
    r = _project(scan_project, own_def=True)
    assert rows(r) == [("API103", "utils.py", 8, "info")]
    assert r.findings[0].evidence["default_unused"] == ["train.py:11"]
    assert r.outlook.value == "runs_on_mac"
    assert r.flags == ["--device mps"]


def test_a_star_import_call_that_omits_the_device_still_uses_the_default(scan_project):
    # look-alike: evaluate.py has no init_model of its own; its `init_model(8)` is utils' and omits the device
    r = _project(scan_project, own_def=False)
    assert rows(r) == [("API103", "utils.py", 8, "blocker")]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a device helper imported from another module
def _helper(mps: bool) -> str:
    last = "    if torch.backends.mps.is_available():\n        return torch.device(\"mps\")\n    return torch.device(\"cpu\")\n" \
        if mps else "    return None\n"
    return "import torch\n\n\ndef pick_device():\n    if torch.cuda.is_available():\n        return torch.device(\"cuda\")\n" + last


LOADER = ("import torch\n\n\ndef load_net(width, device=None):\n    net = torch.nn.Linear(width, width)\n"
          "    if device is not None:\n        return net.to(device)\n    return net.cuda()\n")
RUN = ("import torch\n\nfrom tools.devices import pick_device\nfrom tools.loader import load_net\n\n"
       "device = pick_device()\n\n\ndef main():\n    net = load_net(4, device)\n    print(net)\n\n\n"
       "if __name__ == \"__main__\":\n    main()\n")


def _helper_project(scan_project, mps: bool):
    return scan_project({"tools/__init__.py": "", "tools/devices.py": _helper(mps),
                         "tools/loader.py": LOADER, "run.py": RUN}, readme=bash_readme("python run.py", title="x"))


def test_a_device_helper_imported_from_another_module_is_read_under_the_mac_facts(scan_project):
    # run.py passes `pick_device()`'s answer: on a Mac CUDA is skipped and the helper returns mps, so
    # `device is not None` holds on every call and the `.cuda()` default branch never runs there
    r = _helper_project(scan_project, mps=True)
    [f] = [f for f in r.findings if f.code == "API101"]
    assert (f.location.path, f.location.line) == ("tools/loader.py", 8)
    assert f.evidence["mac_never_param"] == ("device is not None is True (line 6) because every call passes "
                                             "device = 'mps' on a Mac (run.py:10)")
    assert r.outlook.value == "runs_on_mac"


def test_a_device_helper_that_gives_none_on_a_mac_keeps_the_branch(scan_project):
    # look-alike: the helper answers None without CUDA, so the `.cuda()` branch is what a Mac runs
    r = _helper_project(scan_project, mps=False)
    [f] = [f for f in r.findings if f.code == "API101"]
    assert f.evidence.get("mac_never_param") is None and f.behind_flag is None
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a part's own requirements.txt below the root
PKG = {"pyproject.toml": "[project]\nname = \"mypkg\"\nversion = \"0.1\"\ndependencies = [\"torch\"]\n",
       "mypkg/__init__.py": "import torch\n\n\ndef run():\n    return torch.zeros(1)\n",
       "mypkg/deploy/requirements.txt": "pycuda\n"}


def _pkg(scan_project, install: str):
    return scan_project(PKG, requirements=None, readme=bash_readme(install, title="mypkg"))


def test_a_sub_folder_requirement_file_the_readme_s_install_leaves_out_is_optional(scan_project):
    # the README installs the package by name; mypkg/deploy/requirements.txt is the deploy part's own file
    r = _pkg(scan_project, "pip install mypkg")
    [f] = [f for f in r.findings if f.code == "DEP101"]
    assert (f.location.path, f.location.line, f.severity.value) == ("mypkg/deploy/requirements.txt", 1, "blocker")
    assert f.evidence["optional"] == ("mypkg/deploy/requirements.txt is not installed by the README's install "
                                      "(the package by name)")
    assert r.outlook.value == "runs_on_mac"
    assert r.optional == [{"path": "mypkg/deploy/requirements.txt", "line": 1, "code": "DEP101",
                           "why": f.evidence["optional"]}]


def test_a_sub_folder_requirement_file_the_readme_installs_stays_required(scan_project):
    # look-alike: the README's install names the file, so a Mac following it installs pycuda
    r = _pkg(scan_project, "pip install mypkg\npip install -r mypkg/deploy/requirements.txt")
    [f] = [f for f in r.findings if f.code == "DEP101"]
    assert f.evidence.get("optional") is None
    assert r.outlook.value == "stay_on_cuda"


def test_a_requirement_file_the_readme_installs_after_a_cd_stays_required(scan_project):
    # look-alike: `cd mypkg/deploy` then `pip install -r requirements.txt`: the install names the file without its
    # folder (the cd is not followed), so every requirements.txt below the root of that name stays required
    r = _pkg(scan_project, "cd mypkg/deploy\npip install -r requirements.txt")
    [f] = [f for f in r.findings if f.code == "DEP101"]
    assert f.evidence.get("optional") is None
    assert r.outlook.value == "stay_on_cuda"


def test_without_an_install_in_the_readme_a_sub_folder_requirement_file_counts(scan_project):
    # look-alike: no install command at all: nothing says which file a Mac installs, so every file counts
    r = scan_project(PKG, requirements=None, readme="# mypkg\n")
    assert r.outlook.value == "stay_on_cuda"


# ---------------------------------------------------------------- code only a non-main module's own program runs
CONVERT = ("import torch\n\n\nclass Int8Handler:\n    def __init__(self, net):\n        self.net = net\n\n"
           "    def create_state_dict(self):\n        return {k: v.to(\"cuda\") for k, v in self.net.state_dict().items()}\n\n"
           "    def convert_for_runtime(self):\n        return self.net\n\n\n"
           "def convert(path):\n    net = torch.load(path)\n    torch.save(Int8Handler(net).create_state_dict(), path)\n\n\n"
           "if __name__ == \"__main__\":\n    convert(\"model.pt\")\n")
MODEL = ("import torch\n\nfrom tools.convert import Int8Handler\n\n\ndef build(quantized):\n"
         "    net = torch.nn.Linear(4, 4)\n    return Int8Handler(net).convert_for_runtime() if quantized else net\n")
TRAIN_MPS = ("import torch\n\nfrom model import build\n\n"
             "device = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
             "net = build(False).to(device)\nprint(net(torch.zeros(1, 4, device=device)))\n")


def _tool_project(scan_project, model: str = MODEL, readme: str = "python train.py"):
    return scan_project({"tools/__init__.py": "", "tools/convert.py": CONVERT, "model.py": model,
                         "train.py": TRAIN_MPS}, readme=bash_readme(readme, title="x"))


def test_a_method_only_the_module_s_own_main_block_reaches_is_off_the_main_path(scan_project):
    # model.py imports Int8Handler for convert_for_runtime(); create_state_dict() runs only from convert(), which
    # only the __main__ block of tools/convert.py calls, and the README never runs that file
    r = _tool_project(scan_project)
    [f] = [f for f in r.findings if f.code == "API103"]
    assert (f.location.path, f.location.line, f.reach) == ("tools/convert.py", 9, "off_main_path")
    assert f.evidence["own_program"] == (
        "Int8Handler.create_state_dict() runs only when tools/convert.py is run as a program (only its "
        "`if __name__ == \"__main__\":` block reaches it), and tools/convert.py is no main entry: the modules that "
        "import it never call it")
    assert r.outlook.value == "runs_on_mac"


def test_a_method_another_module_calls_stays_on_the_main_path(scan_project):
    # look-alike: model.py calls create_state_dict() too, so importing the module is not all the main path does
    model = MODEL.replace(".convert_for_runtime()", ".create_state_dict()")
    r = _tool_project(scan_project, model=model)
    [f] = [f for f in r.findings if f.code == "API103"]
    assert f.reach is None and "own_program" not in f.evidence
    assert r.outlook.value == "mac_for_dev"


def test_a_module_the_readme_runs_keeps_its_own_program(scan_project):
    # look-alike: the README runs tools/convert.py itself: its __main__ block is a main entry
    r = _tool_project(scan_project, readme="python train.py\npython tools/convert.py")
    [f] = [f for f in r.findings if f.code == "API103"]
    assert "own_program" not in f.evidence
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a cast by a dtype-named value before the move
def _latent(cast: str) -> str:
    return ("import numpy as np\nimport torch\n\n\nclass Sampler:\n    def __init__(self, device):\n"
            "        self.torch_dtype = torch.float16\n"
            f"        self.z = torch.from_numpy(np.random.randn(1, 8)).to({cast}).to(device)\n")


def test_a_cast_by_a_dtype_named_attribute_before_the_move_is_no_float64_on_the_device(scan_project):
    # `.to(self.torch_dtype)` casts the float64 array before `.to(device)` moves it: nothing float64 reaches MPS
    r = scan_project({"sampler.py": _latent("self.torch_dtype")}, requirements="torch\nnumpy\n")
    assert [f for f in r.findings if f.code == "DTY102"] == []


def test_a_move_to_a_device_named_attribute_is_still_float64_on_the_device(scan_project):
    # look-alike: `.to(self.device)` is a move, so the array lands on the device as float64 (before, each of the
    # two `.to()` calls was read as a move)
    r = scan_project({"sampler.py": _latent("self.device")}, requirements="torch\nnumpy\n")
    assert [(f.code, f.location.line, f.severity.value) for f in r.findings if f.code == "DTY102"] == [
        ("DTY102", 8, "blocker"), ("DTY102", 8, "blocker")]


# ---------------------------------------------------------------- a command-line group's sub-commands are programs
GROUP = {
    "pyproject.toml": "[project]\nname = \"tool\"\nversion = \"0.1\"\ndependencies = [\"torch\", \"click\", \"gradio\"]\n\n"
                      "[project.scripts]\ntool = \"tool.cli:main\"\n",
    "tool/__init__.py": "",
    "tool/run.py": "import click\nimport torch\n\n\n@click.command()\n@click.option(\"--device\", \"device_name\", "
                   "default=\"cuda\")\ndef main(device_name):\n    device = torch.device(device_name)\n"
                   "    print(torch.zeros(2, device=device))\n",
    "tool/demo.py": "import click\nimport gradio as gr\nimport torch\n\n\n@click.command()\ndef main():\n"
                    "    net = torch.nn.Linear(2, 2).cuda()\n"
                    "    gr.Interface(fn=lambda x: net(x), inputs=\"text\", outputs=\"text\").launch()\n",
    "tool/bench.py": "import time\n\nimport click\nimport torch\n\n\n@click.command()\ndef main():\n"
                     "    start = time.time()\n    torch.cuda.synchronize()\n    print(time.time() - start)\n",
    "README.md": bash_readme("pip install tool", "tool run --device cuda", "tool demo", title="tool"),
}
DISPATCH = ("import click\n\n\n@click.group()\ndef cli():\n    pass\n\n\ndef main():\n"
            "    from tool import bench, demo, run\n    cli.add_command(run.main, name=\"run\")\n"
            "    cli.add_command(demo.main, name=\"demo\")\n    cli.add_command(bench.main, name=\"bench\")\n    cli()\n")
ONE_PROGRAM = ("from tool import bench, demo, run\n\n\ndef main():\n    run.main()\n    demo.main()\n    bench.main()\n")


def _reach_rows(r):
    return [(f.code, f.location.path, f.location.line, f.reach) for f in r.findings if f.code.startswith("API")]


def test_each_sub_command_of_a_click_group_is_its_own_program(scan_project):
    # `tool run` takes --device (a click option defaulting to 'cuda': a flag now, as argparse's); `tool demo` is a
    # Gradio UI and `tool bench` a sub-command the README never runs: their CUDA calls are their own programs'
    r = scan_project({**GROUP, "tool/cli.py": DISPATCH}, requirements=None)
    assert _reach_rows(r) == [("API102", "tool/bench.py", 10, "off_main_path"),
                              ("API101", "tool/demo.py", 8, "off_main_path"),
                              ("API103", "tool/run.py", 6, None)]
    run = r.findings[-1]
    assert run.message == "command-line device defaults to 'cuda'" and run.evidence["flag"] == "--device mps"
    assert r.outlook.value == "runs_on_mac"
    assert r.commands == ["tool run --device mps"]
    assert r.selection["entries"] == ["tool/run.py"]


def test_a_console_module_that_runs_every_module_in_turn_is_one_program(scan_project):
    # look-alike: the console function calls the three modules' functions itself (no sub-command registered), so
    # one command runs the demo's `.cuda()` and the benchmark's synchronize
    r = scan_project({**GROUP, "tool/cli.py": ONE_PROGRAM}, requirements=None)
    assert [row for row in _reach_rows(r) if row[3] == "off_main_path"] == []
    assert r.outlook.value == "mac_for_dev"


MODEL_API = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
README_API = GROUP["README.md"] + "\n```python\nfrom tool.model import Net\n\nnet = Net()\n```\n"


def test_a_library_module_the_readme_imports_leaves_the_device_to_its_caller(scan_project):
    # the README's code imports tool.model (an API module, no program): it chooses no device and does not vote
    # against `tool run`, the one program that chooses one (before, 1 of 3 main entries picked MPS: undecided)
    r = scan_project({**GROUP, "tool/cli.py": DISPATCH, "tool/model.py": MODEL_API, "README.md": README_API},
                     requirements=None)
    assert r.outlook.value == "runs_on_mac"
    assert r.selection["entries"] == ["tool/run.py"]


def test_a_library_module_that_names_a_cuda_device_still_votes(scan_project):
    # look-alike: the API module hard-codes CUDA itself, so it keeps its vote (a CUDA device of its own)
    model = MODEL_API.replace("return x * 2", "return x.to(torch.device(\"cuda\")) * 2")
    r = scan_project({**GROUP, "tool/cli.py": DISPATCH, "tool/model.py": model, "README.md": README_API},
                     requirements=None)
    assert r.outlook.value == "mac_for_dev"
    assert r.selection["answer"] == "cuda"


# ---------------------------------------------------------------- a kernel's builder, by folder when names repeat
LOAD = "from torch.utils.cpp_extension import load\n\n\ndef build():\n    return load(name=\"k\", sources=[\"k.cu\"])\n"


def _kernels(scan_project, train_imports: str):
    files = {f"{d}/{rel}": text for d in ("a", "b") for rel, text in
             (("__init__.py", ""), ("cuda/__init__.py", ""), ("cuda/k.cu", "__global__ void k() {}\n"),
              ("cuda/load.py", LOAD))}
    files.update({"train.py": f"import torch\n\n{train_imports}\n\nif torch.cuda.is_available():\n    build()\n"
                              "print(torch.zeros(1))\n",
                  "tools/old.py": "from a.cuda.load import build\n\nif __name__ == \"__main__\":\n    build()\n",
                  "requirements.txt": "torch\n", "README.md": bash_readme("python train.py", title="k")})
    r = scan_project(files, requirements=None)
    return [(f.location.path, f.reach) for f in r.findings if f.code == "EXT101"]


def test_a_kernel_copy_whose_own_builder_is_off_the_main_path_is_off_it_too(scan_project):
    # a/cuda/k.cu and b/cuda/k.cu share a name; only tools/old.py (no main entry) builds a's copy, train.py builds
    # b's: before, b's builder on the main path kept a's sources limiting too
    assert _kernels(scan_project, "from b.cuda.load import build") == [("a/cuda/k.cu", "off_main_path"),
                                                                       ("b/cuda/k.cu", None)]


def test_a_kernel_copy_the_main_path_builds_stays_on_it(scan_project):
    # look-alike: train.py builds a's copy itself
    assert _kernels(scan_project, "from a.cuda.load import build\nfrom b.cuda.load import build") == [
        ("a/cuda/k.cu", None), ("b/cuda/k.cu", None)]


# ---------------------------------------------------------------- an FSDP variant beside the main script
FSDP = ("import torch\nimport torch.distributed as dist\n\n\ndef worker(rank):\n"
        "    dist.init_process_group(\"nccl\", rank=rank, world_size=2)\n    torch.cuda.set_device(rank)\n\n\n"
        "if __name__ == \"__main__\":\n    if not torch.cuda.is_available():\n"
        "        raise RuntimeError(\"FSDP requires CUDA.\")\n    torch.multiprocessing.spawn(worker, nprocs=2)\n")
TRAIN_MAIN = ("import torch\n\ndevice = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
              "print(torch.zeros(1, device=device))\n")


def _variant(scan_project, name: str):
    return scan_project({"train.py": TRAIN_MAIN, name: FSDP})


def test_an_fsdp_variant_script_is_distributed_code(scan_project):
    # train_fsdp.py is the multi-GPU (fully sharded) variant: distributed scope, as train_ddp.py has been
    r = _variant(scan_project, "train_fsdp.py")
    assert {(f.location.path, f.scope.value) for f in r.findings} == {("train_fsdp.py", "distributed")}
    assert r.outlook.value == "runs_on_mac"


def test_a_script_of_another_name_with_the_same_code_stays_main(scan_project):
    # look-alike: the same program named train_full.py is main code, and its CUDA calls limit
    r = _variant(scan_project, "train_full.py")
    assert {(f.location.path, f.scope.value) for f in r.findings} == {("train_full.py", "main")}
    assert r.outlook.value != "runs_on_mac"
