"""Which files are on the main path (model/graph.py, model/entries.py): the README's commands, root launchers
and package modules' ``__main__`` demo blocks. Each pattern has a positive and a look-alike negative test with
the exact findings and outlook."""

from __future__ import annotations

import pytest

from mpsready.scan import scan_path
from mpsready.scan.model.entries import command_scripts, readme_lines
from tests.scan.test_model_outlook import TORCH, outlook

CUDA_OR_CPU = TORCH + ("if __name__ == '__main__':\n    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                       "    x = torch.zeros(2, device=device)\n")
MPS_OR_CPU = TORCH + ("if __name__ == '__main__':\n"
                      "    device = torch.device('mps' if torch.backends.mps.is_available() else 'cpu')\n"
                      "    x = torch.zeros(2, device=device)\n")


def reaches(r):
    """(code, path, line, reach) of every finding but DEP110 (most projects here declare nothing)."""
    return [(f.code, f.location.path, f.location.line, f.output_evidence().get("reach"))
            for f in r.findings if f.code != "DEP110"]


# ---------------------------------------------------------------- the README's commands
def test_a_script_the_readme_runs_is_a_main_entry(write_project):
    r = scan_path(write_project({
        "README.md": "# Demo\n\nSample: `python sample.py --seed 1`\n\n```bash\n"
                     "torchrun --nnodes=1 --nproc_per_node=2 train.py \\\n    --lr 0.1\n```\n",
        "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
    assert reaches(r) == [("API104", "sample.py", 3, None)]
    assert outlook(r) == ("mac_for_dev", [], [("sample.py", 3, "API104", "edit", True)])


def test_a_readme_naming_a_missing_script_changes_nothing(write_project):
    r = scan_path(write_project({
        "README.md": "Sample: `python samples/sample.py`, or `python -m tools.sample`\n",
        "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
    assert reaches(r) == [("API104", "sample.py", 3, "off_main_path")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_the_readme_adds_entries_and_demotes_none(write_project):
    # no script named for the main work: every root script starts the path, the README's first command too
    r = scan_path(write_project({"README.md": "```\npython download.py\npython setup.py develop\n```\n",
                                 "download.py": "import urllib.request\nurllib.request.urlretrieve('u', 'f')\n",
                                 "setup.py": "from setuptools import setup\nsetup(name='x')\n",
                                 "demo.py": CUDA_OR_CPU}))
    assert reaches(r) == [("API104", "demo.py", 3, None)]
    assert outlook(r) == ("mac_for_dev", [], [("demo.py", 3, "API104", "edit", True)])


def test_readme_prose_outside_code_is_not_a_command(write_project):
    r = scan_path(write_project({"README.md": "Then run python sample.py to see samples.\n",
                                 "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
    assert outlook(r) == ("runs_on_mac", [], [])


def test_python_m_and_a_shell_script_in_the_readme(write_project):
    r = scan_path(write_project({
        "README.rst": "Usage\n=====\n\nRun ``python -m tools.evaluate`` or::\n\n    bash scripts/sample.sh\n",
        "scripts/sample.sh": "#!/bin/bash\nset -e\nCUDA_VISIBLE_DEVICES=0 python sample.py --n 4 && echo done\n",
        "tools/__init__.py": "", "tools/evaluate.py": CUDA_OR_CPU,
        "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
    assert reaches(r) == [("API104", "sample.py", 3, None), ("API104", "tools/evaluate.py", 3, None)]
    assert outlook(r) == ("mac_for_dev", [], [("sample.py", 3, "API104", "edit", True),
                                              ("tools/evaluate.py", 3, "API104", "edit", True)])


@pytest.mark.parametrize("line, expected", [
    ("python sample.py --image-size 512", ["sample.py"]),
    ("CUDA_VISIBLE_DEVICES=0 uv run python3 -u ./sample.py", ["sample.py"]),
    ("accelerate launch --num_processes 2 train.py --lr 1e-4", ["train.py"]),
    ("deepspeed --num_gpus 8 train.py --deepspeed ds.json", ["train.py"]),
    ("python -m torch.distributed.launch --nproc_per_node 2 train.py", ["train.py"]),
    ("torchrun --nproc_per_node 2 -m pkg.train", ["pkg/train.py"]),
    ("python -m pkg", ["pkg/__main__.py"]),
    ("python sample.py; python -W ignore train.py | tee log", ["sample.py", "train.py"]),
    ("python -c 'import sample'", []),
    ("python -m pytest tests/test_sample.py", []),  # runs the tests, not a main entry
    ("python missing.py", []),
    ("python ../sample.py", []),
    ("python 'sample.py", []),  # an open quote splits into nothing
    ("pip install -r requirements.txt", []),
])
def test_command_scripts(line, expected):
    py = {"sample.py", "train.py", "pkg/train.py", "pkg/__init__.py", "pkg/__main__.py", "tests/test_sample.py"}
    assert command_scripts(line, py) == expected


def test_readme_lines_take_code_blocks_and_inline_code_only():
    md = "Run `python a.py` now.\n\n```sh\npython b.py \\\n  --x 1\n```\n\n    python c.py\n\npython d.py\n"
    assert readme_lines(md, markdown=True) == ["python a.py", "python b.py    --x 1", "python c.py"]


# ---------------------------------------------------------------- root launchers
def test_a_script_a_root_launcher_starts_is_a_main_entry(write_project):
    r = scan_path(write_project({
        "tuner.py": "import subprocess\nsubprocess.run(['python', 'scripts/ppo.py', '--lr', '0.001'])\n",
        "scripts/ppo.py": CUDA_OR_CPU, "scripts/dqn.py": CUDA_OR_CPU}))
    assert reaches(r) == [("API104", "scripts/dqn.py", 3, "off_main_path"), ("API104", "scripts/ppo.py", 3, None)]
    assert outlook(r) == ("mac_for_dev", [], [("scripts/ppo.py", 3, "API104", "edit", True)])


def test_a_script_named_by_keyword_in_a_root_launcher(write_project):
    r = scan_path(write_project({
        "tuner_example.py": "from utils.tuner import Tuner\nt = Tuner(script='algos/ppo.py', trials=3)\nt.tune()\n",
        "utils/__init__.py": "", "utils/tuner.py": "class Tuner:\n    pass\n", "algos/ppo.py": CUDA_OR_CPU}))
    assert outlook(r) == ("mac_for_dev", [], [("algos/ppo.py", 3, "API104", "edit", True)])


def test_a_path_string_outside_a_root_entry_or_to_a_missing_file_launches_nothing(write_project):
    r = scan_path(write_project({
        "tuner.py": "import subprocess\nsubprocess.run(['python', 'scripts/missing.py'])\n",
        "tools/launch.py": "import subprocess\nsubprocess.run(['python', 'scripts/ppo.py'])\n",
        "scripts/ppo.py": CUDA_OR_CPU}))
    assert reaches(r) == [("API104", "scripts/ppo.py", 3, "off_main_path")]
    assert outlook(r) == ("runs_on_mac", [], [])


# ---------------------------------------------------------------- __main__ demo blocks of package modules
_VARIANT = TORCH + ("class Variant(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n\n\n"
                    "if __name__ == '__main__':\n    m = Variant().cuda()\n")
_PYPROJECT = "[project]\nname = 'pkg'\nversion = '0'\ndependencies = ['torch']\n"


def test_a_package_modules_main_block_is_a_demo(write_project):
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "pkg/__init__.py": "from pkg.variant import Variant\n",
                                 "pkg/variant.py": _VARIANT}))
    assert reaches(r) == [("API101", "pkg/variant.py", 8, "module_demo")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_the_same_call_outside_the_main_block_limits(write_project):
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "pkg/__init__.py": "",
                                 "pkg/variant.py": _VARIANT.replace("return x * 2", "return x.cuda()")}))
    assert reaches(r) == [("API101", "pkg/variant.py", 4, None), ("API101", "pkg/variant.py", 8, "module_demo")]
    assert outlook(r) == ("mac_for_dev", [], [("pkg/variant.py", 4, "API101", "edit", True)])


def test_a_root_scripts_main_block_is_the_main_path(write_project):
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "train.py": _VARIANT}))
    assert reaches(r) == [("API101", "train.py", 8, None)]
    assert outlook(r) == ("mac_for_dev", [], [("train.py", 8, "API101", "edit", True)])


@pytest.mark.parametrize("files", [
    {"README.md": "`python -m pkg.variant`\n"},
    {"README.md": "`python -m pkg.variant`\n",
     "pyproject.toml": _PYPROJECT + "[project.scripts]\nvariant = 'pkg.variant:main'\n"},
], ids=["readme-m", "readme-m-and-console-script"])
def test_a_package_module_run_as_a_main_entry_limits(write_project, files):
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "pkg/__init__.py": "", "pkg/variant.py": _VARIANT,
                                 **files}))
    assert reaches(r) == [("API101", "pkg/variant.py", 8, None)]
    assert outlook(r) == ("mac_for_dev", [], [("pkg/variant.py", 8, "API101", "edit", True)])


@pytest.mark.parametrize("files", [
    {"pyproject.toml": _PYPROJECT + "[project.scripts]\nvariant = 'pkg.variant:main'\n"},
    {"setup.py": "from setuptools import setup\nsetup(name='pkg', entry_points={'console_scripts': "
                 "['variant=pkg.variant:main']})\n"},
    {"setup.cfg": "[options.entry_points]\nconsole_scripts =\n    variant = pkg.variant:main\n"},
    {"pyproject.toml": _PYPROJECT + "[project.scripts]\nvariant = 'pkg.variant:main'\n",
     "README.md": "```\nvariant --steps 3\n```\n"},
], ids=["project-scripts", "setup-py", "setup-cfg", "readme-runs-the-console-command"])
def test_a_console_script_modules_main_block_is_a_demo(write_project, files):
    """Issue 32, round 4: a console script calls ``pkg.variant:main``, never the module's ``__main__`` block (nnUNet's
    ``predict_from_raw_data.py`` ends with a CUDA demo under its ``nnUNetv2_predict`` entry point)."""
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "pkg/__init__.py": "", "pkg/variant.py": _VARIANT,
                                 **files}))
    assert reaches(r) == [("API101", "pkg/variant.py", 8, "module_demo")]
    assert outlook(r) == ("runs_on_mac", [], [])


def test_a_main_block_in_a_directory_of_scripts_is_not_a_demo(write_project):
    # no __init__.py: examples/a/gan.py is a script of a collection, its __main__ block is its program
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "examples/gan.py": _VARIANT}))
    assert reaches(r) == [("API101", "examples/gan.py", 8, None)]
    assert outlook(r) == ("mac_for_dev", [], [("examples/gan.py", 8, "API101", "edit", True)])


def test_a_package_module_named_for_the_main_work_is_not_a_demo(write_project):
    r = scan_path(write_project({"pyproject.toml": _PYPROJECT, "pkg/__init__.py": "", "pkg/train.py": _VARIANT}))
    assert outlook(r) == ("mac_for_dev", [], [("pkg/train.py", 8, "API101", "edit", True)])


def test_an_oversized_or_unreadable_readme_names_nothing(write_project, tmp_path):
    from mpsready.scan.model.entries import MAX_README_BYTES, MAX_README_LINES

    for big in ("`python sample.py`\n" + "x" * MAX_README_BYTES, "`python sample.py`\n" + "-\n" * MAX_README_LINES):
        r = scan_path(write_project({"README.md": big, "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
        assert outlook(r) == ("runs_on_mac", [], [])
    r = scan_path(write_project({"README.md": "`python sample.py`\n" + "-\n" * (MAX_README_LINES - 1)}))
    assert outlook(r) == ("mac_for_dev", [], [("sample.py", 3, "API104", "edit", True)])  # at the limit: read
    (tmp_path / "proj" / "README.md").unlink()
    (tmp_path / "proj" / "README.md").mkdir()  # a directory where the README should be
    (tmp_path / "proj" / "README.rst").write_bytes(b"``python sample.py``\n\xff\xfe")  # not UTF-8
    r = scan_path(tmp_path / "proj")
    assert outlook(r) == ("runs_on_mac", [], [])


def test_a_shell_script_outside_the_project_is_not_read(write_project):
    r = scan_path(write_project({"README.md": "`bash ../run.sh` and `bash /etc/run.sh`\n",
                                 "sample.py": CUDA_OR_CPU, "train.py": MPS_OR_CPU}))
    assert outlook(r) == ("runs_on_mac", [], [])
