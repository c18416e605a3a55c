"""Round 5 of issue 33 (tuned on reports42/42b tune halves): classes of Mac behaviour with their sources, each
asserted with the exact message, line and outcome (a dtype check of MPS's isin, ...)."""

from __future__ import annotations

import pytest

from mpsready.ops.judge import CallFacts, Judge

from .helpers import emulate, write

ISIN = ("Expected elements.dtype() == test_elements.dtype() to be true, but got false.  (Could this error message be "
        "improved?  If so, please report an enhancement request to PyTorch.)")


@pytest.mark.parametrize(("release", "dtypes", "refused"), [
    ("2.4.1", ("int64", "int32"), True), ("2.6.0", ("float32", "float16"), True), ("2.7.1", ("int32", "int64"), True),
    ("2.6.0", ("int64", "int64"), False), ("2.8.0", ("int64", "int32"), False)])
def test_isin_of_two_dtypes_is_refused_by_mps_from_2_4_to_2_7(release, dtypes, refused):
    j = Judge(release, macos="15.4").call("aten::isin.Tensor_Tensor", CallFacts(dtypes=dtypes), False)
    assert (j.outcome, j.message) == (("error", ISIN) if refused else ("runs", None))


def test_isin_of_int64_tokens_against_int32_ids_fails_at_its_line(tmp_path):
    script = write(tmp_path, """\
import torch

tokens = torch.tensor([5, 10_000, 42, 7], device="mps")
stop = torch.tensor([10_000, 10_001], dtype=torch.int32, device="mps")
hit = torch.isin(tokens, stop)
print(hit.tolist())
""")
    _, doc, _, _ = emulate(script, torch="2.6", macos="15.4")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
        "failed", "RuntimeError", ISIN, 5, "2.8.0")
    _, doc, out, _ = emulate(script, torch="2.8", macos="15.4")
    assert (doc["outcome"], out) == ("completed", "[False, True, False, False]\n")


DYNAMIC_VAR = """\
import torch


@torch.compile(dynamic={dynamic})
def row_var(x):
    return x.var(dim=-1)


x = torch.randn(4, 5000, device="mps")
v = row_var(x)
print(tuple(v.shape))
"""


def test_the_miner_finds_a_raw_sympy_size_in_a_welford_branch():
    from mpsready.ops.build.inductor import mine_codegen

    text = '''
import sympy
class K:
    def _reduction_nocache(self, dtype, src_dtype, reduction_type, value):
        acc_buf_size = sympy.Min(self.numel, 1024)
        acc_buf_size_str = self.sexpr(acc_buf_size)
        if reduction_type == "sum":
            return f"threadgroup_sum({value}, {acc_buf_size_str})"
        if reduction_type == "welford_reduce":
            return f"threadgroup_welford_combine(buf, {acc_buf_size})"
        raise NotImplementedError(reduction_type)
'''
    assert mine_codegen(text)["symbolic_size_printed"] == {"welford_reduce": "Min"}
    assert mine_codegen(text.replace("sympy.Min(", "min("))["symbolic_size_printed"] == {}


def test_mined_releases_that_print_the_sympy_size():
    from mpsready.ops import inductor

    rels = inductor.load()["releases"]
    assert sorted((r for r in rels if rels[r]["symbolic_size_printed"]), key=lambda r: tuple(map(int, r.split(".")))) == [
        "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.12.1"]
    assert {rels[r]["symbolic_size_printed"].get("welford_reduce") for r in rels} == {"Min", None}


@pytest.mark.parametrize(("release", "dynamic", "outcome"), [
    ("2.12", "True", "failed"), ("2.9", "True", "failed"), ("2.12", "None", "completed"), ("2.13", "True", "completed")])
def test_a_dynamic_compiled_variance_fails_on_the_sympy_min_from_2_9_to_2_12(tmp_path, release, dynamic, outcome):
    script = write(tmp_path, DYNAMIC_VAR.format(dynamic=dynamic))
    _, doc, _, _ = emulate(script, torch=release, macos="26.4")
    assert doc["outcome"] == outcome
    if outcome == "failed":
        f = doc["first_failure"]
        assert (f["exception"], f["message"], f["location"]["line"], f["fixed_in"]) == (
            "InductorError", "use of undeclared identifier 'Min'", 10, "2.13.0")


def _wrong(doc):
    return [(w["id"], w["op"], w["location"]["line"]) for w in doc["wrong_results"]]


LAYER_NORMS = """\
import torch
import torch.nn.functional as F

x = torch.randn(4, 8, dtype=torch.{dtype}, device="mps")
w = torch.randn(8, dtype=torch.{wdtype}, device="mps")
b = torch.randn(8, dtype=torch.{wdtype}, device="mps")
out = F.layer_norm(x, (8,), w, b)
print(out.dtype)
"""


def test_a_half_layer_norm_with_float32_affine_is_a_wrong_result_from_2_8(tmp_path):
    script = write(tmp_path, LAYER_NORMS.format(dtype="float16", wdtype="float32"))
    _, doc, _, _ = emulate(script, torch="2.13", macos="26.5")
    assert (doc["outcome"], _wrong(doc)) == (
        "completed", [("layer-norm-half-input-float32-affine", "aten::native_layer_norm", 7)])
    _, doc, _, _ = emulate(script, torch="2.7", macos="15.5")  # MPSGraph's layer norm before the Metal kernel
    assert doc["wrong_results"] == []
    for dtype, wdtype in (("float16", "float16"), ("float32", "float32"), ("bfloat16", "bfloat16")):
        _, doc, _, _ = emulate(write(tmp_path, LAYER_NORMS.format(dtype=dtype, wdtype=wdtype)), torch="2.13",
                               macos="26.5")
        assert doc["wrong_results"] == [], dtype


FROZEN = """\
import torch
import torch.nn.functional as F

x = torch.randn(2, 4, device="mps", requires_grad={grad})
w = torch.ones(4, device="mps", requires_grad=True)
b = torch.zeros(4, device="mps", requires_grad=True)
F.layer_norm(x, (4,), w, b).sum().backward()
print(w.grad.tolist())
"""


def test_layer_norm_backward_without_an_input_gradient_is_a_wrong_result_on_2_12(tmp_path):
    script = write(tmp_path, FROZEN.format(grad="False"))
    _, doc, _, _ = emulate(script, torch="2.12", macos="26.4")
    assert (doc["outcome"], _wrong(doc)) == (
        "completed", [("layer-norm-backward-frozen-input", "aten::native_layer_norm_backward", 7)])
    _, doc, _, _ = emulate(script, torch="2.13", macos="26.4")
    assert doc["wrong_results"] == []
    _, doc, _, _ = emulate(write(tmp_path, FROZEN.format(grad="True")), torch="2.12", macos="26.4")
    assert doc["wrong_results"] == []


GRID = """\
import torch
import torch.nn.functional as F

volume = torch.randn(1, 2, 4, 5, 5, device="mps")
flow = torch.rand(1, 3, 4, 5, 5, device="mps") * 2 - 1
grid = flow.permute(0, 2, 3, 4, 1){contiguous}
out = F.grid_sample(volume, grid, align_corners=True)
print(out.shape)
"""


def test_a_3d_grid_sample_with_a_permuted_grid_is_a_wrong_result_on_2_9_and_2_10(tmp_path):
    script = write(tmp_path, GRID.format(contiguous=""))
    _, doc, _, _ = emulate(script, torch="2.10", macos="26.2")
    assert (doc["outcome"], _wrong(doc)) == (
        "completed", [("grid-sampler-3d-noncontiguous-grid", "aten::grid_sampler_3d", 7)])
    _, doc, _, _ = emulate(script, torch="2.11", macos="26.2")
    assert doc["wrong_results"] == []
    _, doc, _, _ = emulate(write(tmp_path, GRID.format(contiguous=".contiguous()")), torch="2.10", macos="26.2")
    assert doc["wrong_results"] == []


def test_the_new_conditions_are_read_from_the_named_argument():
    from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex

    idx = AdvisoryIndex("2.12.0", "26.4")
    facts = AdvisoryFacts(dtypes=("float32",) * 5, shapes=((2, 4),) * 5, contiguous=(True,) * 5,
                          args={"output_mask": [False, True, True]})
    assert idx.match("aten::native_layer_norm_backward", facts).id == "layer-norm-backward-frozen-input"
    facts = AdvisoryFacts(dtypes=("float32",) * 5, shapes=((2, 4),) * 5, contiguous=(True,) * 5,
                          args={"output_mask": [True, True, True]})
    assert idx.match("aten::native_layer_norm_backward", facts) is None


def test_nonzero_on_mps_is_c_contiguous_as_its_kernel_allocates_it(tmp_path):
    script = write(tmp_path, """\
import torch

x = torch.tensor([[0.0, 1.0], [2.0, 0.0], [3.0, 4.0]])
on_mps = torch.nonzero(x.to("mps"))
on_cpu = torch.nonzero(x)
print(on_mps.is_contiguous(), on_mps.view(-1).tolist(), on_cpu.stride())
""")
    _, doc, out, _ = emulate(script, torch="2.10", macos="26.1")
    assert (doc["outcome"], out) == ("completed", "True [0, 1, 1, 0, 2, 0, 2, 1] (1, 4)\n")


NDARRAY = ("failed assertion `[MPSNDArray initWithDevice:descriptor:isTextureBacked:] Error: NDArray dimension "
           "length > INT_MAX'")


@pytest.mark.parametrize(("release", "macos", "want"), [
    ("2.8.0", "15.5", ("crash", NDARRAY)), ("2.5.1", "14.4", ("crash", NDARRAY)), ("2.8.0", "13.5", ("runs", None)),
    ("2.9.1", "15.5", ("error", "MPSGaph does not support tensor dims larger than INT_MAX"))])
def test_a_dimension_above_int_max_aborts_in_mpsndarray_before_the_structured_check(release, macos, want):
    j = Judge(release, macos=macos).call("aten::random_.from", CallFacts(dtypes=("uint8",), dim_max=2**31), False)
    assert (j.outcome, j.message) == want


def test_a_composites_callee_meeting_a_dimension_above_int_max_keeps_the_check():
    judge = Judge("2.9.1", macos="15.5")
    j = judge.op("aten::random_.from", CallFacts(dtypes=("uint8",), dim_max=2**31))
    inside = judge.inside_composite(j, True, False, "2.13.0", parent="aten::randint")
    assert (inside.outcome, inside.kind) == ("error", "shape")
    fill = judge.op("aten::fill_.Scalar", CallFacts(dtypes=("int8",), dim_max=2**31))
    # a fill may blit the buffer without a Metal tensor (ConstantOps.mm): not a certain failure inside ones()
    assert judge.inside_composite(fill, True, False, "2.13.0", parent="aten::ones").outcome == "unknown"
