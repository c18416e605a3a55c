"""Issue 32, round 12: a container's environment file and a lock file pin another platform's install, not the
Mac's (docs/scan.md, "round 12"); a torch pin newer than the release table still has MPS. Each fixture has a
look-alike that keeps the other answer. Fixtures written for these tests."""

from __future__ import annotations

from tests.scan.conftest import bash_readme

from mpsready.scan.dependencies import excludes_mps_torch
from mpsready.scan.sources.interface import Dependency

TRAIN = ("import torch\n\n\ndef main():\n    dev = \"mps\" if torch.backends.mps.is_available() else \"cpu\"\n"
         "    print(torch.nn.Linear(4, 4).to(dev))\n\n\nif __name__ == \"__main__\":\n    main()\n")
README = bash_readme("pip install -e .", "python train.py")
RUN_ONLY = bash_readme("python train.py")  # no install shown (round 9's rule decides nothing)
SETUP = "from setuptools import setup\n\nsetup(name=\"demo\", install_requires=[\"torch\"])\n"
ENV = "name: demo\nchannels:\n  - pytorch\ndependencies:\n  - python=3.10\n  - cudatoolkit=11.3.1\n  - pytorch=1.12.1\n"
LOCK = ("version = 1\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"demo\"\nversion = \"0.1\"\n"
        "source = { editable = \".\" }\ndependencies = [\n    { name = \"torch\" },\n]\n\n"
        "[[package]]\nname = \"torch\"\nversion = \"2.5.1+cu124\"\n"
        "source = { registry = \"https://download.pytorch.org/whl/cu124\" }\n")
PYPROJECT = "[project]\nname = \"demo\"\nversion = \"0.1\"\ndependencies = [\"torch\"{more}]\n"


def _deps(r):
    return sorted((f.code, f.location.path, f.location.line, (f.evidence or {}).get("optional"))
                  for f in r.findings if f.code.startswith("DEP") and f.code != "DEP103")


def test_a_docker_folders_environment_file_is_optional(scan_project):
    r = scan_project({"train.py": TRAIN, "setup.py": SETUP, "docker/environment.yml": ENV},
                     requirements=None, readme=RUN_ONLY)
    assert _deps(r) == [("DEP105", "docker/environment.yml", 6,
                         "docker/environment.yml sets up the container image (a Linux install), not what a Mac "
                         "installs")]
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_the_readme_installs_the_docker_folders_file(scan_project):
    readme = bash_readme("conda env create -f docker/environment.yml", "python train.py")
    r = scan_project({"train.py": TRAIN, "setup.py": SETUP, "docker/environment.yml": ENV},
                     requirements=None, readme=readme)
    assert _deps(r) == [("DEP105", "docker/environment.yml", 6, None)]
    assert [(f.code, f.location.path) for f in r.limiting] == [("DEP105", "docker/environment.yml")]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_project_shipped_only_as_an_image(scan_project):
    # nothing outside the container folder declares the project: the image is its install path
    readme = bash_readme("docker build -t demo docker", "docker run demo python train.py")
    r = scan_project({"train.py": TRAIN, "docker/environment.yml": ENV}, requirements=None, readme=readme)
    assert _deps(r) == [("DEP105", "docker/environment.yml", 6, None)]
    assert r.outlook.value == "mac_for_dev"


def test_a_lock_files_cuda_wheel_is_optional(scan_project):
    r = scan_project({"train.py": TRAIN, "pyproject.toml": PYPROJECT.format(more=""),
                      "uv.lock": LOCK}, requirements=None, readme=README)
    assert _deps(r) == [("DEP104", "uv.lock", 13,
                         "uv.lock pins one platform's wheels; a Mac installs pyproject.toml with its own wheels of "
                         "the same packages")]
    assert r.limiting == []
    assert r.outlook.value == "runs_on_mac"


def test_look_alike_a_cuda_only_package_the_declaration_requires_still_limits(scan_project):
    r = scan_project({"train.py": TRAIN, "pyproject.toml": PYPROJECT.format(more=", \"flash-attn\""),
                      "uv.lock": LOCK}, requirements=None, readme=README)
    assert [(f.code, f.location.path) for f in r.limiting] == [("DEP101", "pyproject.toml")]
    assert r.outlook.value == "mac_for_dev"


def test_look_alike_a_lock_file_with_no_declaration_beside_it(scan_project):
    r = scan_project({"train.py": TRAIN, "uv.lock": LOCK}, requirements=None, readme=README)
    assert [(f.code, f.location.path) for f in r.limiting] == [("DEP104", "uv.lock")]


def test_a_torch_pin_newer_than_the_release_table_has_mps():
    def dep(spec):
        return Dependency(name="torch", specifier=spec, path="pyproject.toml", line=1)

    assert excludes_mps_torch(dep("==2.12.0")) is False
    assert excludes_mps_torch(dep("==3.0.0")) is False
    assert excludes_mps_torch(dep("==1.11.0")) is True
    assert excludes_mps_torch(dep("<1.12")) is True
    assert excludes_mps_torch(dep(">=1.8,<1.10")) is True


def test_look_alike_the_readme_installs_a_file_the_scan_does_not_read(scan_project):
    # `conda create --file` with a conda explicit list the scan reads no dependency from: what the main install
    # requires is unknown, so the lock's CUDA wheel stays the evidence (the cautious answer)
    readme = bash_readme("conda create --name demo --file conda_list.txt", "python train.py")
    conda_list = "# platform: linux-64\n_libgcc_mutex=0.1=main\npytorch-cuda=11.7=h778d358_5\n"
    r = scan_project({"train.py": TRAIN, "pyproject.toml": PYPROJECT.format(more=""), "conda_list.txt": conda_list,
                      "uv.lock": LOCK}, requirements=None, readme=readme)
    assert _deps(r) == [("DEP104", "uv.lock", 13, None)]
    assert [(f.code, f.location.path) for f in r.limiting] == [("DEP104", "uv.lock")]


def test_conda_create_with_a_file_list_is_an_install_and_without_one_is_not():
    from mpsready.scan.model.entries import install_files

    assert install_files(["conda create --name demo --file ./conda_list.txt"]) == ["conda_list.txt"]
    assert install_files(["conda create -n demo --file=conda_list.txt"]) == ["conda_list.txt"]
    assert install_files(["conda create -n demo python=3.10"]) is None
