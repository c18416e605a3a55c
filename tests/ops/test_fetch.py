"""The builder's wheel step: only the needed members are kept, with the wheel's sha256 (no network here)."""

from __future__ import annotations

import hashlib
import json
import zipfile

from mpsready.ops.build import fetch


def make_wheel(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def test_extract_keeps_members_and_checksum(tmp_path):
    wheel = make_wheel(tmp_path / "torch-2.99.0-cp311-none-macosx_11_0_arm64.whl", {
        "torchgen/packaged/ATen/native/native_functions.yaml": "- func: relu(Tensor self) -> Tensor\n",
        "torch/version.py": "__version__ = '2.99.0'\n",
        "torch/lib/libtorch_cpu.dylib": "x" * 1000,  # not extracted
    })
    info = fetch.extract(wheel, tmp_path / "out")
    assert info["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert info["members"] == ["torchgen/packaged/ATen/native/native_functions.yaml", "torch/version.py"]
    assert not (tmp_path / "out/torch/lib").exists()
    assert json.loads((tmp_path / "out" / fetch.MANIFEST).read_text())["wheel"] == wheel.name


def test_fetch_uses_local_wheel_then_cache(tmp_path):
    local = tmp_path / "wheels"
    local.mkdir()
    make_wheel(local / "torch-2.99.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", {"torch/version.py": "v"})
    info = fetch.fetch("2.99.0", tmp_path / "cache", local_wheels=(local,))
    assert info["wheel"].startswith("torch-2.99.0+cpu")
    (local / "torch-2.99.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").unlink()
    assert fetch.fetch("2.99.0", tmp_path / "cache", local_wheels=(local,)) == info  # from the cache now
