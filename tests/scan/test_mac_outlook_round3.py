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
        "tools/convert.py": "import json\n" + MAIN.format(body="print(json.dumps({'a': 1}))"),
        "evaluation/score.py": "import sys\n" + MAIN.format(body="print(sum(map(float, sys.argv[1:])))"),
        "demo/show.py": "import os\n" + MAIN.format(body="print(os.getcwd())"),
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
