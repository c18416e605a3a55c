"""`--dump-installed` with a fake dispatcher reproducing what a Mac's torch reports (no Mac here)."""

from __future__ import annotations

import argparse
import json

import pytest

from mpsready.ops import installed
from mpsready.ops.api import load_db, load_table_file
from mpsready.ops.cli import _run_dump
from mpsready.errors import UsageError

MPS_REG = "/Users/runner/work/pytorch/pytorch/build/aten/src/ATen/RegisterMPS_0.cpp:1234"
FALLBACK_REG = "/Users/runner/work/pytorch/pytorch/aten/src/ATen/mps/MPSFallback.mm:98"
PY_REG = "/opt/lib/python3.11/site-packages/torch/backends/mps/__init__.py:53"


class FakeMacDispatcher:
    """torch 2.5.1 on macOS 14.4 as far as these ops go (kernels per the 2.5.1 yaml and MPSFallback.mm)."""

    torch_version = "2.5.1"

    def __init__(self, built=True):
        self.built = built
        self.kernels = {
            ("aten::add.Tensor", "MPS"): MPS_REG,
            ("aten::add.out", "MPS"): MPS_REG,
            ("aten::embedding_renorm_", "MPS"): FALLBACK_REG,
            ("aten::_slow_conv2d_forward", "MPS"): FALLBACK_REG,
            ("aten::native_group_norm_backward", "MPS"): PY_REG,
            ("aten::nanmedian.dim", "CompositeExplicitAutograd"): "RegisterCompositeExplicitAutograd_0.cpp:1",
            ("aten::upsample_bicubic2d", "MPS"): MPS_REG,  # a difference from the shipped 2.5.1 table
        }
        self.names = ["aten::add.Tensor", "aten::add.out", "aten::embedding_renorm_", "aten::_slow_conv2d_forward",
                      "aten::native_group_norm_backward", "aten::nanmedian.dim", "aten::nanmedian.dim_values",
                      "aten::upsample_bicubic2d", "prims::convert_element_type"]

    def op_names(self):
        return list(self.names)

    def has_kernel(self, op, key):
        return (op, key) in self.kernels

    def registration(self, op, key):
        return self.kernels.get((op, key))

    def mps_available(self):
        return self.built, self.built


def test_dump_classifies_like_the_shipped_table():
    doc = installed.dump(FakeMacDispatcher(), shipped=load_db("2.5.1"), macos="14.4", machine="arm64")
    ops = doc["ops"]
    assert doc["basis"] == "observed" and doc["schema"]["name"] == "mpsready.ops-table"
    assert doc["observed_on"] == {"system": "macOS", "macos": "14.4", "machine": "arm64", "mps_available": True}
    assert {k: v["s"] for k, v in ops.items()} == {
        "add.Tensor": "kernel", "add.out": "kernel", "embedding_renorm_": "cpu_fallback_always",
        "_slow_conv2d_forward": "guard", "native_group_norm_backward": "kernel", "nanmedian.dim": "composite",
        "nanmedian.dim_values": "missing", "upsample_bicubic2d": "kernel"}
    assert ops["embedding_renorm_"]["h"] == f"observed:{FALLBACK_REG}"
    assert ops["add.Tensor"]["c"] == "kernel" and ops["add.Tensor"]["core"] == 1  # from the shipped table
    assert doc["min_macos"] == "12.3"


def test_dump_compare_reports_differences():
    shipped = load_db("2.5.1")
    doc = installed.dump(FakeMacDispatcher(), shipped=shipped, macos="14.4", machine="arm64")
    assert installed.compare(doc, shipped) == [
        {"op": "aten::upsample_bicubic2d", "predicted": "missing", "observed": "kernel"}]


def test_dump_written_and_queried_as_table(tmp_path, capsys):
    out = tmp_path / "observed.json"
    args = argparse.Namespace(output=str(out))
    assert _run_dump(args, dispatcher=FakeMacDispatcher(), system="darwin") == 0
    assert "1 differ from the shipped table 2.5.1" in capsys.readouterr().err
    db = load_table_file(str(out))
    s = db.lookup("aten::embedding_renorm_")
    assert (db.basis, s.status, s.torch) == ("observed", "cpu_fallback_always", "2.5.1")
    assert s.sources[0].startswith("live dispatcher of torch 2.5.1 on macOS")
    from mpsready.cli import main
    assert main(["ops", "upsample_bicubic2d", "--table", str(out), "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["basis"], r["results"][0]["basis"], r["results"][0]["status"]) == ("observed", "observed", "kernel")


def test_dump_refuses_linux_and_non_mps_builds():
    with pytest.raises(installed.NotOnMac, match="pitfall 8"):
        installed.check_platform(FakeMacDispatcher(), system="linux")
    with pytest.raises(installed.NotOnMac, match="not built with MPS"):
        installed.check_platform(FakeMacDispatcher(built=False), system="darwin")
    with pytest.raises(UsageError):
        _run_dump(argparse.Namespace(output=None), dispatcher=FakeMacDispatcher(built=False), system="darwin")


def test_dump_without_shipped_table():
    fake = FakeMacDispatcher()
    fake.torch_version = "2.16.0"
    doc = installed.dump(fake, shipped=None, macos="26.0", machine="arm64")
    assert doc["min_macos"] is None and doc["ops"]["add.Tensor"]["c"] == "unknown"
