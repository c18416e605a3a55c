"""Packaging metadata: licence, SPDX expression, classifiers, URLs, py.typed, extras that pull only what the
stages import; and every command that needs PyTorch says so with exit 2 when PyTorch does not import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SRC = ROOT / "src" / "mpsready"
IMPORT_NAME = {"PyYAML": "yaml"}
# which stage folders each extra serves
EXTRA_USERS = {"torch": ("record", "trace", "step", "env", "ops"), "report": ("report",), "compare": ("compare",)}


def _imports(folder: Path) -> set[str]:
    names: set[str] = set()
    for py in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def _names(reqs: list[str]) -> set[str]:
    return {Requirement(r).name for r in reqs}


def test_license_is_spdx_with_the_apache_text():
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) == 202


def test_classifiers_urls_and_py_typed():
    assert "Typing :: Typed" in PROJECT["classifiers"] and "Programming Language :: Python :: 3.10" in PROJECT["classifiers"]
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"])  # PEP 639: the SPDX field says it
    assert set(PROJECT["urls"]) == {"Homepage", "Documentation", "Rules", "Issues", "Source"}
    assert (SRC / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["mpsready"]
    assert "py.typed" in data


def test_extras_pull_only_what_their_stages_import():
    extras = PROJECT["optional-dependencies"]
    assert _names(extras["report"]) == {"jinja2", "matplotlib"}  # no safetensors, no numpy: report never imports them
    for extra, folders in EXTRA_USERS.items():
        used = set().union(*(_imports(SRC / f) for f in folders))
        for name in _names(extras[extra]):
            assert IMPORT_NAME.get(name, name) in used, f"the {extra!r} extra pulls {name}, which its stages never import"
    assert {"safetensors", "numpy"}.isdisjoint(_imports(SRC / "report"))
    assert extras["all"] == ["mpsready[torch,report,compare]"]


def test_commands_that_need_pytorch_say_so_with_exit_2(tmp_path):
    # PyTorch made unimportable for this interpreter and its children: a `torch` package that raises on import
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('PyTorch hidden by the test')\n")
    (tmp_path / "step.py").write_text("def step():\n    return lambda: 0\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "shadow")}
    for command in ("record", "trace"):
        args = [command, "step.py:step", "--device", "cpu"] + (["--out", str(tmp_path / "rec")] if command == "record" else [])
        proc = subprocess.run([sys.executable, "-m", "mpsready", *args], capture_output=True, text=True, cwd=tmp_path,
                              env=env, timeout=120)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr == f"mpsready {command}: error: mpsready {command} needs PyTorch: pip install 'mpsready[torch]'\n"
    assert not (tmp_path / "rec").exists()  # nothing half-written


def test_the_test_workflow_matrix_is_every_python_claimed():
    """.github/workflows/tests.yml runs the suite on exactly the Python versions the classifiers claim, from
    requires-python's floor up, with the README's test command."""
    import yaml

    from packaging.specifiers import SpecifierSet

    job = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text(encoding="utf-8"))["jobs"]["tests"]
    claimed = [c.rsplit(" :: ", 1)[1] for c in PROJECT["classifiers"]
               if c.startswith("Programming Language :: Python :: 3.")]
    assert job["strategy"]["matrix"]["python"] == claimed == ["3.10", "3.11", "3.12", "3.13"]
    assert all(v in SpecifierSet(PROJECT["requires-python"]) for v in claimed)
    assert "3.9" not in SpecifierSet(PROJECT["requires-python"])
    assert job["steps"][-1]["run"] == "PYTHON=python bash scripts/test.sh"
    assert job["env"]["PIP_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"


def test_dev_constraints_install_on_every_python_claimed():
    """Each constraint line's marker holds for some claimed Python, and every pinned package has exactly one
    line for each of them (hypothesis 6.170 needs 3.11: 3.10 gets a range of its own)."""
    from packaging.requirements import Requirement as Req

    lines = [ln.strip() for ln in (ROOT / "constraints" / "dev.txt").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    reqs = [Req(ln) for ln in lines]
    for version in ("3.10", "3.11", "3.12", "3.13"):
        env = {"python_version": version, "python_full_version": version + ".0"}
        names = [r.name for r in reqs if r.marker is None or r.marker.evaluate(env)]
        assert sorted(names) == sorted(set(r.name for r in reqs)), version
