"""Notebooks are analysed as the one program the kernel runs: imports bind across cells, non-Python cell
magics are not Python, and guarded findings carry the same evidence at every severity."""

import json

from mpsready.scan import scan_path
from mpsready.scan.code import analyze_source
from tests.scan.conftest import rows


def _nb(*cells: list[str]) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": src}
        for src in cells]}, indent=1)


def _where(r):
    return [(f.code, f.location.line, f.location.end_line, f.output_evidence().get("cell"), f.output_evidence().get("cell_line"))
            for f in r.findings if f.code != "DEP110"]


def test_a_bash_cell_magic_is_not_python(write_project):
    # used to report API101 for `echo .cuda()`: the %%bash body was parsed as Python
    root = write_project({"nb.ipynb": _nb(["import torch\n"], ["%%bash\n", "echo x.cuda()\n", "x.cuda()\n"],
                                          ["%%time\n", "y = torch.ones(1).cuda()\n"])})
    r = scan_path(root)
    # only the %%time cell (Python run by IPython) is analysed: cell 3, line 2
    assert rows(r) == [("API101", "nb.ipynb", 33, "blocker")]
    assert _where(r) == [("API101", 33, 33, 3, 2)]


def test_an_import_in_an_earlier_cell_binds_in_a_later_one(write_project):
    # used to miss API102: cell 3 was analysed without cell 1's `import torch`
    root = write_project({"nb.ipynb": _nb(["import torch\n"], ["x = 1\n"], ["torch.cuda.synchronize()\n"])})
    r = scan_path(root)
    assert rows(r) == [("API102", "nb.ipynb", 30, "blocker")]
    assert _where(r) == [("API102", 30, 30, 3, 1)]
    assert r.findings[0].location.column == 1 and r.findings[0].location.end_column == 23


def test_a_cell_that_does_not_parse_is_reported_and_the_others_stay_one_program(write_project):
    root = write_project({"nb.ipynb": _nb(["import torch\n"], ["x = (\n"], ["torch.ones(1).cuda()\n"])})
    r = scan_path(root)
    assert [(f.code, f.location.line, f.output_evidence()["cell"], f.output_evidence()["cell_line"]) for f in r.findings
            if f.code != "DEP110"] == [("API101", 30, 3, 1), ("INP105", 21, 2, 1)]


def test_a_future_import_in_a_later_cell_falls_back_to_cells_alone(write_project):
    # joined, `from __future__` after other code does not parse; each cell alone still does
    root = write_project({"nb.ipynb": _nb(["import torch\n", "torch.ones(1).cuda()\n"],
                                          ["from __future__ import annotations\n", "import torch\n",
                                           "torch.cuda.synchronize()\n"])})
    r = scan_path(root)
    assert _where(r) == [("API101", 13, 13, 1, 2), ("API102", 24, 24, 2, 3)]


def test_info_findings_inside_a_cuda_check_are_marked_guarded_too():
    src = ("import torch\n"
           "if torch.cuda.is_available():\n"
           "    torch.cuda.synchronize()\n"
           "    torch.cuda.empty_cache()\n")
    found = [(d["code"], d["severity"], d["line"], d["evidence"].get("guarded"), d["message"].endswith(
        "(inside a CUDA-availability check, so skipped on a Mac)")) for d in analyze_source(src).findings]
    # synchronize is a blocker outside the check, empty_cache info (harmless) anywhere: both say guarded
    assert found == [("API102", "info", 3, True, True), ("API102", "info", 4, True, True)]


def test_pip_install_in_shell_cells_is_read_and_placed(write_project):
    # used to be missed: only `!pip` / `%pip` lines were read, never the body of a %%bash cell
    root = write_project({"nb.ipynb": _nb(["%%bash\n", "set -e\n", "pip install flash-attn \\\n", "  einops\n"],
                                          ["%%shell\n", "pip install xformers\n"],
                                          ["%%script bash\n", "pip install apex\n"],
                                          ["%%writefile req.txt\n", "pip install deepspeed\n"],
                                          ["%%script python\n", "pip install triton\n"])})
    r = scan_path(root)
    # the continued command is placed on its first line; %%writefile and %%script python bodies are not shell
    assert [(d.name, d.line, d.group) for d in r.dependencies] == [
        ("flash-attn", 14, "cell:1"), ("einops", 14, "cell:1"), ("xformers", 25, "cell:2"), ("apex", 35, "cell:3")]
    assert [(f.code, f.location.line, f.message.split(":")[0]) for f in r.findings] == [
        ("DEP101", 14, "dependency flash-attn (cell"), ("DEP101", 25, "dependency xformers (cell"),
        ("DEP101", 35, "dependency apex (cell")]


def test_an_indented_magic_keeps_its_block(write_project):
    # used to be INP105 ("expected an indented block"): the `%load_ext` line inside the if-block was blanked
    root = write_project({"nb.ipynb": _nb(["import torch\n", "logger = 'tb'\n", "if logger == 'tb':\n",
                                           "    %load_ext tensorboard\n", "else:\n", "    !echo no\n",
                                           "x = torch.ones(1).cuda()\n"])})
    r = scan_path(root)
    assert _where(r) == [("API101", 18, 18, 1, 7)]
    assert r.incomplete == [] and r.outlook.value == "mac_for_dev"


def test_a_magic_at_column_0_after_a_block_header_still_does_not_parse(write_project):
    # IPython rejects this too: the magic is not inside the block, so nothing is invented for it
    root = write_project({"nb.ipynb": _nb(["import torch\n", "if True:\n", "%load_ext tensorboard\n",
                                           "x = torch.ones(1).cuda()\n"])})
    r = scan_path(root)
    assert [(f.code, f.location.line) for f in r.findings if f.code != "DEP110"] == [("INP105", 15)]
    assert r.incomplete == ["nb.ipynb"]


def test_an_unparsable_demo_notebook_or_unused_script_leaves_the_main_outlook_complete(write_project):
    # used to mark the outlook incomplete: the SPEC's "a file that could not be read" means the main path's files
    root = write_project({"train.py": "import torch\n\nif __name__ == '__main__':\n    print(torch.ones(1))\n",
                          "demo.ipynb": _nb(["import torch\n", "x = (\n"]),
                          "tools/old.py": "def f(:\n"})
    r = scan_path(root)
    assert [(f.code, f.location.path, f.output_evidence().get("reach")) for f in r.findings if f.code != "DEP110"] == [
        ("INP105", "demo.ipynb", "demo_notebook"), ("INP105", "tools/old.py", "off_main_path")]
    assert (r.outlook.value, r.incomplete) == ("runs_on_mac", [])


def test_an_unparsable_module_the_entry_imports_still_makes_it_incomplete(write_project):
    root = write_project({"train.py": "import torch\nfrom models.net import Net\n\n"
                                      "if __name__ == '__main__':\n    print(Net)\n",
                          "models/__init__.py": "", "models/net.py": "def f(:\n"})
    r = scan_path(root)
    assert [(f.code, f.location.path, f.output_evidence().get("reach")) for f in r.findings if f.code != "DEP110"] == [
        ("INP105", "models/net.py", None)]
    assert (r.outlook.value, r.incomplete) == ("runs_on_mac", ["models/net.py"])
