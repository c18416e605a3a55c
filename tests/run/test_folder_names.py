"""A project's files are the user's whatever the folders holding them are called (issue 31): PyTorch's and
mpsready's own files are known by the loaded packages' directories, never by a name in the path. The same fixture
project is copied into folders named like mpsready, PyTorch, a site directory and mpsready's step runner, and every
predicted failure keeps the project's line."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from .helpers import emulate  # noqa: E402

NAMES = ["mpsready", "torch", "site-packages-data", "step"]

MAIN = "import torch\nfrom helper import to_mps\n\nx = torch.ones(3)\ny = to_mps(x.double())\nprint(y)\n"
HELPER = "def to_mps(t):\n    return t.to(\"mps\")\n"
API = "import torch\n\nprint(\"device index:\", torch.mps.current_device())\n"


def _project(tmp_path: Path, name: str) -> Path:
    """The fixture project at ``<tmp>/<name>/`` with its scripts in ``<tmp>/<name>/<name>/``: the name is both the
    root's own folder and a folder below it."""
    code = tmp_path / name / name
    code.mkdir(parents=True)
    (code / "main.py").write_text(MAIN)
    (code / "helper.py").write_text(HELPER)
    (code / "api.py").write_text(API)
    return tmp_path / name


@pytest.mark.parametrize("name", NAMES)
def test_kernel_refusal_keeps_the_users_line(tmp_path, name):
    root = _project(tmp_path, name)
    sys.modules.pop("helper", None)  # each case imports its own copy
    try:
        _r, doc, _o, _e = emulate(root / name / "main.py", root=root)
    finally:
        sys.modules.pop("helper", None)
    assert doc["outcome"] == "failed"
    [f] = doc["failures"]
    assert (f["kind"], f["op"], f["exception"]) == ("dtype", "aten::_to_copy", "TypeError")
    assert f["location"] == {"path": f"{name}/helper.py", "line": 2, "function": "to_mps"}
    assert f["stack"] == [f"{name}/main.py:5 in <module>", f"{name}/helper.py:2 in to_mps"]


@pytest.mark.parametrize("name", NAMES)
def test_release_api_error_keeps_the_users_line(tmp_path, name):
    """The failing case of issue 31: ``torch.mps.current_device`` on 2.6 lost its line under a folder ``mpsready``."""
    root = _project(tmp_path, name)
    _r, doc, _o, _e = emulate(root / name / "api.py", torch="2.6", root=root)
    assert doc["outcome"] == "failed"
    [f] = doc["failures"]
    assert (f["kind"], f["exception"], f["message"]) == (
        "release_api", "AttributeError", "module 'torch.mps' has no attribute 'current_device'")
    assert f["location"] == {"path": f"{name}/api.py", "line": 3, "function": "<module>"}


@pytest.mark.parametrize("name", NAMES)
def test_project_files_by_whole_components(tmp_path, name):
    from mpsready.frames import ProjectFiles, UserFrames

    root = _project(tmp_path, name)
    files = ProjectFiles([root])
    assert files.relative(str(root / name / "helper.py")) == f"{name}/helper.py"
    # a copy of mpsready's or PyTorch's layout in the project is the project's: only the loaded packages are theirs
    assert files.relative(str(root / "src" / "mpsready" / "frames.py")) == "src/mpsready/frames.py"
    assert files.relative(str(root / "torch" / "_ops.py")) == "torch/_ops.py"
    # a virtual environment kept in the project is not
    assert files.relative(str(root / ".venv" / "lib" / "site-packages" / "pkg" / "m.py")) is None
    assert files.relative(str(root / "lib" / "dist-packages" / "m.py")) is None
    import mpsready.frames
    import torch

    assert files.relative(mpsready.frames.__file__) is None
    assert files.relative(torch.__file__) is None
    frames = UserFrames(root)  # (equal code objects share a cache entry: each source differs)
    assert frames.owns(compile("a = 1\n", str(root / name / "main.py"), "exec")) is True
    assert frames.owns(compile("b = 1\n", str(root / "torch" / "_ops.py"), "exec")) is True
    assert frames.owns(compile("c = 1\n", torch.__file__, "exec")) is False


def test_project_inside_a_folder_named_site_packages(tmp_path):
    """Only folders below the root are compared with ``site-packages``: the folders holding the root are the
    user's business."""
    from mpsready.frames import ProjectFiles

    root = tmp_path / "site-packages" / "proj"
    assert ProjectFiles([root]).relative(str(root / "train.py")) == "train.py"


def test_symlinked_root(tmp_path):
    """A root reached through a symbolic link holds the files by either spelling."""
    from mpsready.frames import ProjectFiles

    real = _project(tmp_path, "mpsready")
    link = tmp_path / "link"
    link.symlink_to(real)
    files = ProjectFiles([link])
    assert files.relative(str(link / "mpsready" / "api.py")) == "mpsready/api.py"
    assert files.relative(str(real / "mpsready" / "api.py")) == "mpsready/api.py"
