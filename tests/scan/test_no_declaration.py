"""DEP110: a project that declares no dependencies says so instead of staying silent."""

from __future__ import annotations

from mpsready.scan import scan_path
from tests.scan.conftest import FIXTURES, rows

LOOKED_FOR = ["requirements", "pyproject", "setup.py", "setup.cfg", "conda environment", "Pipfile", "lock file",
              "Dockerfile", "shell script", "notebook"]


def test_python_only_project_gets_exactly_dep110():
    r = scan_path(FIXTURES / "no_declaration")
    assert rows(r, with_scope=True, keep_no_declaration=True) == [("DEP110", ".", None, "info", "main")]
    f = r.findings[0]
    assert f.message == ("no dependency declaration found (looked for: requirements, pyproject, setup.py, setup.cfg, "
                         "conda environment, Pipfile, lock file, Dockerfile, shell script, notebook)")
    assert f.evidence == {"looked_for": LOOKED_FOR}
    assert f.basis.value == "predicted"
    assert r.outlook.value == "runs_on_mac"  # info: it limits nothing


def test_a_declared_dependency_means_no_dep110(write_project):
    root = write_project({"train.py": "import torch\n", "requirements.txt": "torch==2.3.1\n"})
    assert rows(scan_path(root), keep_no_declaration=True) == []


def test_dynamic_declaration_is_dep108_not_dep110(write_project):
    root = write_project({"setup.py": "from setuptools import setup\nsetup(install_requires=get_requirements())\n"})
    assert [f.code for f in scan_path(root).findings] == ["DEP108"]


def test_single_file_scan_gets_no_dep110(write_project):
    root = write_project({"train.py": "import torch\n"})
    assert rows(scan_path(root / "train.py"), keep_no_declaration=True) == []
