"""Issue 32, round 10b: reach by calls follows only the branches a Mac run at the defaults takes (docs/scan.md,
"round 10b"). Each fixture has a look-alike that keeps its old verdict. Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme


README = bash_readme("pip install -r requirements.txt", "python train.py")
# main() calls speed.warmup(net) under {guard}; bench() calls it too, but nothing calls bench(), so round 4's caller
# pass (every use of the name guarded) keeps the limit; warmup -> capture holds the CUDA graph two calls away
TRAIN = ("import argparse\n\nimport torch\n\nfrom pkg.model import Net\nfrom pkg.speed import warmup\n\n\n"
         "def main():\n    p = argparse.ArgumentParser()\n    p.add_argument(\"--trt\", action=\"store_true\")\n"
         "    args = p.parse_args()\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    net = Net().to(dev)\n{guard}        warmup(net)\n    print(net(torch.zeros(1, 4, device=dev)))\n\n\n"
         "def bench(net):\n    warmup(net)\n\n\nif __name__ == \"__main__\":\n    main()\n")
MODEL = ("import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x)\n")
SPEED = ("import torch\n\n\ndef warmup(net):\n    return capture(net)\n\n\ndef capture(net):\n"
         "    x = torch.zeros(1, 4).cuda()\n    return net(x)\n{tail}")


def _scan(scan_project, guard: str, tail: str = ""):
    return scan_project({"train.py": TRAIN.format(guard=guard), "pkg/__init__.py": "",
                         "pkg/model.py": MODEL, "pkg/speed.py": SPEED.format(tail=tail)}, readme=README)


def _cuda(r):
    [f] = [f for f in r.findings if f.code == "API101"]
    assert (f.location.path, f.location.line) == ("pkg/speed.py", 9)
    return f


CHAIN = ["train.py:25 main", "train.py:16 warmup", "pkg/speed.py:5 capture"]


# ---------------------------------------------------------------- a guard the Mac's facts decide
def test_a_callee_reached_only_under_a_branch_a_mac_never_enters_does_not_limit(scan_project):
    r = _scan(scan_project, "    if torch.cuda.is_available():\n")
    f = _cuda(r)
    assert f.behind_flag == ("a Mac never calls it: only under `torch.cuda.is_available()` (train.py:15), decided by "
                             "torch.cuda.is_available() is False")
    assert f.evidence["calls_guarded"] == {"test": "torch.cuda.is_available()", "path": "train.py", "line": 15,
                                           "facts": ["torch.cuda.is_available() is False"], "by": "mac facts"}
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_branch_the_mac_enters_keeps_the_limit(scan_project):
    r = _scan(scan_project, "    if torch.backends.mps.is_available():\n")
    f = _cuda(r)
    assert (f.behind_flag, f.reach) == (None, None)
    assert f.evidence["main_path"]["calls"] == CHAIN
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("API101", "pkg/speed.py", 9)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- a guard an option's default decides
def test_a_callee_reached_only_behind_an_option_off_by_default_does_not_limit(scan_project):
    r = _scan(scan_project, "    if args.trt:\n")
    f = _cuda(r)
    assert f.behind_flag == ("called only when `args.trt` (train.py:15) holds, which it does not at the defaults: "
                             "--trt is off by default")
    assert f.evidence["calls_guarded"] == {"test": "args.trt", "path": "train.py", "line": 15,
                                           "facts": ["--trt is off by default"], "by": "option default"}
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_branch_the_default_enters_keeps_the_limit(scan_project):
    r = _scan(scan_project, "    if not args.trt:\n")
    assert _cuda(r).evidence["main_path"]["calls"] == CHAIN
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("API101", "pkg/speed.py", 9)]
    assert r.outlook.value == "mac_for_dev"


# ---------------------------------------------------------------- an imported module's __main__ block does not run
def test_the_main_block_of_an_imported_module_reaches_nothing(scan_project):
    # pkg/speed.py is imported, never run: its `if __name__ == "__main__":` block calling warmup() does not run (it
    # counted as module-level code before round 10b), so the only reference left is main()'s guarded one
    r = _scan(scan_project, "    if torch.cuda.is_available():\n",
              "\n\nif __name__ == \"__main__\":\n    warmup(None)\n")
    assert _cuda(r).evidence["calls_guarded"]["line"] == 15
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_module_level_call_of_an_imported_module_runs(scan_project):
    r = _scan(scan_project, "    if torch.cuda.is_available():\n", "\n\nwarmup(None)\n")
    f = _cuda(r)
    assert (f.behind_flag, f.evidence["main_path"]["calls"]) == (None, ["pkg/speed.py:13 warmup",
                                                                        "pkg/speed.py:5 capture"])
    assert r.outlook.value == "mac_for_dev"
