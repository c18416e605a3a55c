"""torch.compile on MPS judged by what each release's own Inductor Metal code generation lowers (issue 33, round 4):
the facts mined from ``torch/_inductor/codegen/mps.py`` of every macOS wheel 2.7.0-2.14.1
(``data/mined/inductor_mps.json``, ``python -m mpsready.ops.build.inductor``)."""

from __future__ import annotations

import pytest

from mpsready.ops import inductor
from mpsready.ops.build.inductor import mine_codegen

from .helpers import emulate, write

WIDE_LAYER_NORM = """\
import torch
import torch.nn.functional as F

dev = "mps"


def normalise(x):
    return F.layer_norm(x, x.shape[-1:])


x = torch.randn({rows}, {cols}, device=dev)
fast = torch.compile(normalise)
y = fast(x)
print(float(y.mean()))
"""


def test_the_mined_facts_per_release():
    rels = inductor.load()["releases"]
    assert sorted(rels, key=lambda r: tuple(map(int, r.split(".")))) == [
        "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0",
        "2.14.1"]
    assert rels["2.7.1"]["reductions"] == ["any", "argmax", "argmin", "max", "min", "prod", "sum", "welford_reduce"]
    assert rels["2.7.1"]["multistage_refused"] == {
        "welford_reduce": "Multistage reduction not yet supported for welford_reduce"}
    assert all("welford_combine" in rels[r]["reductions"] and not rels[r]["multistage_refused"]
               for r in rels if not r.startswith("2.7"))
    assert [r for r in rels if "uint16" in rels[r]["metal_dtypes"]] == ["2.14.0", "2.14.1"]
    assert rels["2.9.0"]["source"]["wheel"] == "torch-2.9.0-cp311-none-macosx_11_0_arm64.whl"
    assert rels["2.9.0"]["source"]["range"] == "read"
    assert inductor.facts("2.6.0") is None and inductor.facts("2.9")["source"]["wheel"].startswith("torch-2.9.0")


def test_the_miner_reads_branches_asserts_and_the_dtype_map():
    text = '''
import torch
DTYPE_TO_METAL = {torch.float: "float", torch.half: "half", torch.uint16: "ushort"}
class K:
    max_threadgroup_size = 1024
    def reduction(self, dtype, src_dtype, reduction_type, value):
        if reduction_type in ["sum", "prod"]:
            return 1
        if reduction_type == "welford_reduce":
            assert not self.multistage_reduction, f"Multistage reduction not yet supported for {reduction_type}"
            return 2
        raise NotImplementedError(reduction_type)
'''
    assert mine_codegen(text) == {
        "reductions": ["prod", "sum", "welford_reduce"], "metal_dtypes": ["float16", "float32", "uint16"],
        "multistage_refused": {"welford_reduce": "Multistage reduction not yet supported for welford_reduce"},
        "max_threadgroup_size": 1024, "symbolic_size_printed": {}}


@pytest.mark.parametrize(("reduced", "outputs", "kind"), [
    (262144, 2, "welford_split"), (262144, 13, "welford_split"), (262144, 14, "welford_split_maybe"),
    (262144, 159, "welford_split_maybe"), (262144, 160, "welford_multistage"), (8192, 2, "welford_multistage"),
    (1025, 4, "welford_multistage"), (1024, 2, "welford")])
def test_welford_kind_follows_inductors_split_heuristic(reduced, outputs, kind):
    assert inductor.welford_kind(reduced, outputs) == kind


def test_a_split_layer_norm_fails_on_2_7_with_welford_combine_and_completes_from_2_8(tmp_path):
    script = write(tmp_path, WIDE_LAYER_NORM.format(rows=2, cols=262144))
    _, doc, _, _ = emulate(script, torch="2.7", macos="15.6")
    f = doc["first_failure"]
    assert (doc["outcome"], f["kind"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
        "failed", "compile", "InductorError", "NotImplementedError: welford_combine", 13, "2.8.0")
    _, doc, _, _ = emulate(script, torch="2.9", macos="15.6")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_a_multistage_layer_norm_fails_on_2_7_with_the_assertion(tmp_path):
    script = write(tmp_path, WIDE_LAYER_NORM.format(rows=256, cols=2048))
    _, doc, _, _ = emulate(script, torch="2.7", macos="15.6")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
        "failed", "InductorError", "AssertionError: Multistage reduction not yet supported for welford_reduce", 13,
        "2.8.0")


def test_a_chip_dependent_split_on_2_7_stays_unverified(tmp_path):
    script = write(tmp_path, WIDE_LAYER_NORM.format(rows=32, cols=16384))
    _, doc, _, _ = emulate(script, torch="2.7", macos="15.6")
    assert (doc["outcome"], [u["kind"] for u in doc["unverified"]]) == ("unverified", ["compile"])


def test_unsigned_16_bit_buffers_in_a_compiled_region_fail_before_2_14(tmp_path):
    script = write(tmp_path, """\
import torch

x = torch.tensor([1, 2, 3], dtype=torch.uint16, device="mps")
f = torch.compile(lambda t: t.float() * 2)
y = f(x)
print(y.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.10", macos="15.6")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
        "failed", "InductorError", "KeyError: torch.uint16", 5, "2.14.0")
    assert "DTYPE_TO_METAL has no torch.uint16" in f["source"]
