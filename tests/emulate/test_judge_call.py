"""``Judge.call``: the one judgement of a call that the emulated device and the trace both forward (exact values
for torch 2.5 / macOS 15.5 from the shipped tables)."""
from __future__ import annotations

import pytest

from mpsready.ops.judge import CallFacts, Judge, Judgement, Reason
from mpsready.ops.placement import Operand

F32 = CallFacts(dtypes=("float32",))
UPSAMPLE_MSG = ("The operator 'aten::upsample_nearest3d.out' is not currently implemented for the MPS device. If you "
                "want this op to be added in priority during the prototype phase of this feature, please comment on "
                "https://github.com/pytorch/pytorch/issues/77764. As a temporary fix, you can set the environment "
                "variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback for this op. WARNING: this "
                "will be slower than running natively on MPS.")


@pytest.fixture(scope="module")
def judge():
    return Judge("2.5", "15.5")


def test_missing_kernel(judge):
    j = judge.call("aten::upsample_nearest3d", F32)
    assert (j.op, j.outcome, j.kind, j.exception, j.dtype, j.fixed_in, j.named) == (
        "aten::upsample_nearest3d", "error", "missing", "NotImplementedError", "float32", "2.8.0",
        "aten::upsample_nearest3d.out")
    assert j.message == UPSAMPLE_MSG
    assert j == judge.op("aten::upsample_nearest3d", F32)  # no more than op() outside a composite


def test_inside_a_composite_of_another_release_is_unknown(judge):
    j = judge.call("aten::upsample_nearest3d", F32, inside=True, exact=False, installed="2.13.0")
    assert (j.outcome, j.kind) == ("unknown", "callee_of_other_release")
    assert j.message == (UPSAMPLE_MSG + " (reached inside a composite as torch 2.13.0 decomposes it; torch 2.5.1's "
                         "own decomposition may differ)")
    # the same release decomposes it as the target does: the failure stands
    assert judge.call("aten::upsample_nearest3d", F32, inside=True, exact=True, installed="2.5.1") == \
        judge.call("aten::upsample_nearest3d", F32)


def test_placement_only_where_the_op_runs(judge):
    facts = CallFacts(dtypes=("float32", "float32"))
    j = judge.call("aten::add.Tensor", facts, placement=([Operand("self", True, 2), Operand("other", False, 2)], True))
    assert j == Judgement("aten::add.Tensor", "error", "placement", "RuntimeError",
                          "Expected all tensors to be on the same device, but found at least two devices, mps:0 "
                          "and cpu!", None, None, "aten::add.Tensor",
                          "aten/src/ATen/TensorIterator.cpp TensorIteratorBase::compute_types (2.3-2.14)")
    # a 0-dim CPU tensor is a scalar for TensorIterator: allowed
    ok = judge.call("aten::add.Tensor", facts, placement=([Operand("self", True, 2), Operand("other", False, 0)], True))
    assert (ok.outcome, ok.kind) == ("runs", None)
    # a missing kernel is the failure, whatever the placement
    assert judge.call("aten::upsample_nearest3d", F32, placement=([Operand("self", False, 5)], False)).kind == "missing"


def test_composite_whose_callees_were_not_recorded(judge):
    assert judge.call("aten::nanmedian.dim", F32).outcome == "composite"
    j = judge.call("aten::nanmedian.dim", F32, expanded=False)
    assert (j.outcome, j.kind, j.message) == ("unknown", "composite_unseen",
                                              "composite op whose callees were not recorded (trace with this --torch)")


def test_reads_only_dtypes(judge):
    assert judge.reads_only_dtypes("aten::add.Tensor") is True
    assert judge.reads_only_dtypes("aten::index_add") is True  # a dtype check only
    assert judge.reads_only_dtypes("aten::cumsum") is False  # the scan kernel's rank limit reads `dim`
    assert judge.reads_only_dtypes("aten::convolution") is False  # shape rules read ranks and arguments


def test_landing_names_the_call_that_made_the_tensor(judge):
    j = judge.landing("float64", "aten::zeros")
    assert (j.op, j.named, j.outcome, j.kind, j.exception, j.dtype) == (
        "aten::zeros", "aten::zeros", "error", "dtype", "TypeError", "float64")
    assert j.message == ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
                         "Please use float32 instead.")
    assert judge.landing("float32", "aten::zeros") is None


def test_sparse_landing(judge):
    j = judge.sparse_landing("float32", "aten::_to_copy")
    assert (j.op, j.outcome, j.kind, j.exception, j.fixed_in) == (
        "aten::_sparse_coo_tensor_with_dims_and_tensors", "error", "sparse", "NotImplementedError", "2.9.0")
    assert j.message == ("Could not run 'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from the "
                         "'SparseMPS' backend.")
    assert Judge("2.13", "15.5").sparse_landing("float32", "aten::_to_copy") is None


def test_reason_in_words(judge):
    assert judge.reason(judge.call("aten::add.Tensor", CallFacts(dtypes=("float32", "float32")))) is None
    assert judge.reason(judge.call("aten::upsample_nearest3d", F32)) == Reason(
        "missing", "no MPS kernel in torch 2.5.1", "NotImplementedError: " + UPSAMPLE_MSG)
    assert judge.reason(judge.call("aten::im2col", F32)) == Reason(
        "always_fallback", "on PyTorch's always-CPU list in torch 2.5.1 (MPSFallback.mm)",
        "UserWarning: The operator 'aten::im2col' is not currently supported on the MPS backend and will fall back "
        "to run on the CPU. This may have performance implications.")
    assert judge.reason(judge.call("aten::nanmedian.dim", F32, expanded=False)) == Reason(
        "unknown", "composite op whose callees were not recorded (trace with this --torch)", None)
    assert judge.reason(judge.call("myns::op", F32)) == Reason(
        "unknown", "custom operator namespace 'myns': MPS support not in the shipped data", None)
