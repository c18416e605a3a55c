"""Issue 32 items 3 and 6, round 12: code behind a value a Mac user never sets is optional (docs/scan.md, "round 12:
values a Mac user never sets"). An environment variable compared with a literal holds its default; a function called
only under ``if self.x:`` with ``__init__(self, x=False)`` is not reached. Each fixture has a look-alike that keeps its
limit. Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme

README = bash_readme("pip install -r requirements.txt", "python run.py")
RUN = ("import torch\n\nfrom pkg.ops import conv\n\n\ndef main():\n"
       "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
       "    print(conv(torch.zeros(1, 4, device=dev)))\n\n\nif __name__ == \"__main__\":\n    main()\n")
# a compiled kernel imported when built, else built at import time only under an environment variable's test
OPS = ("import os\n\nimport torch\n\ntry:\n    from . import conv_ext\nexcept ImportError:\n"
       "    JIT = {read}\n    if {test}:\n        from torch.utils.cpp_extension import load\n"
       "        conv_ext = load('conv', sources=['conv.cpp', 'conv_kernel.cu'])\n\n\n"
       "def conv(x):\n    return x * 2\n")


def _env(scan_project, read: str, test: str):
    return scan_project({"run.py": RUN, "pkg/__init__.py": "", "pkg/ops.py": OPS.format(read=read, test=test)},
                        readme=README)


def _build(r):
    [f] = [f for f in r.findings if f.code == "EXT102"]
    assert (f.location.path, f.location.line) == ("pkg/ops.py", 11)
    return f


def test_a_build_under_an_unset_environment_variable_is_optional_and_names_it(scan_project):
    r = _env(scan_project, "os.getenv('OPS_JIT')", "JIT == 'True'")
    f = _build(r)
    assert f.behind_flag == ("runs only when `JIT == 'True'` (pkg/ops.py:9) holds, which it does not at the defaults: "
                             "environment variable OPS_JIT holds its default None (a user may set it)")
    assert f.evidence["calls_guarded"] == {"test": "JIT == 'True'", "path": "pkg/ops.py", "line": 9,
                                           "facts": ["environment variable OPS_JIT holds its default None (a user "
                                                     "may set it)"], "by": "option default"}
    # issue 32 item 6: the value that decides it and what each choice gives
    assert f.evidence["undecided"] == [{"test": "JIT == 'True'", "line": 9,
                                        "decided_by": ["environment variable OPS_JIT"], "if_true": "runs",
                                        "if_false": "does not run"}]
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_a_falsy_default_compared_with_a_tuple_is_off_too(scan_project):
    r = _env(scan_project, "os.environ.get('OPS_JIT', '0')", "JIT in ('1', 'true')")
    assert _build(r).behind_flag.endswith("environment variable OPS_JIT holds its default '0' (a user may set it)")
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_default_that_turns_it_on_keeps_the_limit(scan_project):
    r = _env(scan_project, "os.getenv('OPS_JIT', 'True')", "JIT == 'True'")
    f = _build(r)
    assert f.behind_flag is None
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("EXT102", "pkg/ops.py", 11)]
    assert r.outlook.value == "stay_on_cuda"


def test_look_alike_a_negated_read_is_taken_and_keeps_the_limit(scan_project):
    # a truth test (no comparison with a literal) stays undecided: the build counts
    r = _env(scan_project, "os.getenv('OPS_NO_JIT')", "not JIT")
    assert _build(r).behind_flag is None
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("EXT102", "pkg/ops.py", 11)]
    assert r.outlook.value == "stay_on_cuda"


# ---------------------------------------------------------------- a function-local import behind an off parameter
MODEL = ("import torch\n\n\ndef sparse_mask(n):\n    from xformers.sparse import SparseCSRTensor\n"
         "    return SparseCSRTensor.from_dense(torch.ones(n, n))\n\n\nclass Layer(torch.nn.Module):\n"
         "    def __init__(self, sparse=False):\n        super().__init__()\n        self.sparse = sparse\n"
         "        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        mask = None\n"
         "        if {test}:\n            mask = sparse_mask(4)\n        return self.fc(x), mask\n")
MAIN = ("import torch\n\nfrom pkg.model import Layer\n\n\ndef main():\n"
        "    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
        "    print(Layer({kw}).to(dev)(torch.zeros(1, 4, device=dev)))\n\n\nif __name__ == \"__main__\":\n    main()\n")


def _sparse(scan_project, test: str, kw: str = ""):
    return scan_project({"run.py": MAIN.format(kw=kw), "pkg/__init__.py": "", "pkg/model.py": MODEL.format(test=test)},
                        readme=README)


def _import(r):
    [f] = [f for f in r.findings if f.code == "DEP107"]
    assert (f.location.path, f.location.line) == ("pkg/model.py", 5)
    return f


def test_a_local_import_in_a_function_called_only_behind_an_off_parameter_is_optional(scan_project):
    r = _sparse(scan_project, "self.sparse and x.dim() == 2")
    f = _import(r)
    assert f.behind_flag == ("called only when `self.sparse and x.dim() == 2` (pkg/model.py:17) holds, which it does "
                             "not at the defaults: sparse=False (the default)")
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_main_path_turns_the_parameter_on(scan_project):
    r = _sparse(scan_project, "self.sparse and x.dim() == 2", kw="sparse=True")
    f = _import(r)
    assert f.behind_flag is None
    assert f.evidence["main_path"]["calls"] == ["run.py:12 main", "run.py:8 Layer", "pkg/model.py:15 Layer.forward",
                                                "pkg/model.py:18 sparse_mask"]
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("DEP107", "pkg/model.py", 5)]


def test_look_alike_a_function_the_main_path_calls_still_limits(scan_project):
    r = _sparse(scan_project, "x.dim() == 2")
    f = _import(r)
    assert f.behind_flag is None
    assert [(x.code, x.location.path, x.location.line) for x in r.limiting] == [("DEP107", "pkg/model.py", 5)]
