"""Round 4 of issue 33: an alpha multiply MPSGraph cannot type (add/sub with a float alpha and a second tensor of
another dtype aborts on 2.6, pytorch#143932) and AT_DISPATCH refusals of MPS kernels raised before the CPU runs
(histc on integers before 2.12: the CPU refuses them too, so the Mac's message must come first)."""

from __future__ import annotations

import pytest

from mpsready.ops.judge import CallFacts, Judge
from mpsready.ops.shape_tests import _promoted_differs

from .helpers import emulate, write

ABORT = "MPSGraphUtilities.mm: error: 'mps.multiply' op requires the same element type for all operands and results"


@pytest.mark.parametrize(("first", "second", "differs"), [
    ("float32", "int64", True), ("float32", "bool", True), ("float32", "float16", True),
    ("float16", "bfloat16", True), ("int64", "float32", False), ("float16", "float32", False),
    ("int32", "int64", False), ("int64", "int32", True), ("float32", "float32", False)])
def test_promotion_of_the_second_operand(first, second, differs):
    assert _promoted_differs(first, second) is differs


@pytest.mark.parametrize(("op", "dtypes", "alpha", "fails"), [
    ("aten::add.Tensor", ("float32", "int64"), 2, True),
    ("aten::sub.Tensor", ("float32", "int64"), 0.5, True),
    ("aten::add_.Tensor", ("float32", "int32"), 3, True),
    ("aten::add.Tensor", ("float32", "int64"), 1, False),
    ("aten::add.Tensor", ("float32", "float32"), 2, False),
    ("aten::add.Tensor", ("int64", "float32"), 2, False)])
def test_alpha_with_a_second_operand_of_another_dtype_aborts_on_2_6(op, dtypes, alpha, fails):
    j = Judge("2.6.0", macos="15.2").call(op, CallFacts(dtypes=dtypes, args={"alpha": alpha}), False)
    assert (j.outcome, j.message, j.fixed_in) == (("crash", ABORT, "2.7.0") if fails else ("runs", None, None))
    assert Judge("2.7.1", macos="15.2").call(op, CallFacts(dtypes=dtypes, args={"alpha": alpha}), False).outcome \
        == "runs"


def test_add_with_alpha_of_float_and_int64_tensors_is_a_mac_crash_at_its_line(tmp_path):
    script = write(tmp_path, """\
import torch

x = torch.rand(4, device="mps")
offset = torch.tensor([1, 2, 3, 4], device="mps")
y = x.sub(offset, alpha=2)
print(y.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.6", macos="15.2")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["op"], f["fixed_in"]) == (
        "failed", "MacCrash", ABORT, 5, "aten::sub.Tensor", "2.7.0")
    _, doc, _, _ = emulate(script, torch="2.7", macos="15.2")
    assert doc["outcome"] == "completed"


@pytest.mark.parametrize(("dtype", "name"), [("int32", "Int"), ("int64", "Long"), ("uint8", "Byte")])
def test_integer_histc_fails_with_the_mps_dispatch_message_before_2_12(tmp_path, dtype, name):
    script = write(tmp_path, f"""\
import torch

ids = torch.tensor([0, 1, 2, 1, 0], dtype=torch.{dtype}, device="mps")
counts = torch.histc(ids, bins=3, min=0, max=2)
print(counts.tolist())
""")
    _, doc, _, _ = emulate(script, torch="2.10", macos="26.3")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["fixed_in"], f["mac"]) == (
        "failed", "NotImplementedError", f"\"histogram_mps\" not implemented for '{name}'", 4, "2.12.0", True)


def test_float_histc_is_not_refused():
    j = Judge("2.10.0", macos="26.3").call("aten::histc", CallFacts(dtypes=("float32",)), False)
    assert j.outcome == "runs"


def test_integer_histc_on_2_12_runs_on_a_widened_dtype_where_this_cpu_has_no_kernel(tmp_path):
    script = write(tmp_path, """\
import torch

ids = torch.tensor([0, 1, 2, 1, 0], dtype=torch.int32, device="mps")
counts = torch.histc(ids, bins=3, min=0, max=2)
print(counts.dtype, counts.tolist())
""")
    _, doc, out, _ = emulate(script, torch="2.12", macos="26.3")
    assert (doc["outcome"], out) == ("completed", "torch.int32 [2, 2, 1]\n")
    assert Judge("2.12.1", macos="26.3").dtype_added("aten::histc", "int32")
    assert not Judge("2.10.0", macos="26.3").dtype_added("aten::histc", "int32")


def test_a_cpu_dispatch_gap_without_data_stays_the_programs_error(tmp_path):
    # no data says MPS's kthvalue takes bool: the CPU's refusal is not turned into a pass
    script = write(tmp_path, """\
import torch

flags = torch.tensor([True, False, True], device="mps")
v = flags.kthvalue(1)
print(v)
""")
    _, doc, _, _ = emulate(script, torch="2.12", macos="26.3")
    # nor into the program's error: the meta kernel accepts the call, so it is unverified (emulate/cpu_refusal.py)
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["program_error"], u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", None, "cpu_refusal", "aten::kthvalue", 4)
    assert "(NotImplementedError: \"kthvalue_cpu\" not implemented for 'Bool')" in u["reason"]


@pytest.mark.parametrize(("release", "dtypes", "alpha", "message"), [
    ("2.9.1", ("float16", "float32"), 0.33, "Failed to create function state object for: add_alpha_dense_cast_half_float"),
    ("2.12.1", ("bfloat16", "float32"), -1.0,
     "Failed to create function state object for: add_alpha_dense_cast_bfloat_float"),
    ("2.12.1", ("float16", "bfloat16"), 2, "Failed to create function state object for: add_alpha_dense_cast_half_float"),
    ("2.12.1", ("float32", "float16"), 2, None),  # the promotion is self's own dtype
    ("2.12.1", ("float16", "float32"), 1, None),  # alpha 1: the kernel without alpha
    ("2.8.0", ("float16", "float32"), 0.33, None)])  # last known good
def test_in_place_add_into_a_narrower_self_with_alpha_fails_from_2_9(release, dtypes, alpha, message):
    j = Judge(release, macos="26.4").call("aten::add_.Tensor", CallFacts(dtypes=dtypes, args={"alpha": alpha}), False)
    assert (j.outcome, j.message) == (("error", message) if message else ("runs", None))


def test_in_place_add_with_alpha_at_the_users_line(tmp_path):
    script = write(tmp_path, """\
import torch

a = torch.arange(16, dtype=torch.float16, device="mps")
b = torch.arange(16, dtype=torch.float32, device="mps")
a.add_(b, alpha=0.33)
print(a.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.12", macos="26.4")
    f = doc["first_failure"]
    assert (doc["outcome"], f["exception"], f["message"], f["location"]["line"], f["op"], f["fixed_in"]) == (
        "failed", "RuntimeError", "Failed to create function state object for: add_alpha_dense_cast_half_float", 5,
        "aten::add_.Tensor", None)


def test_a_call_computed_on_a_wider_dtype_is_so_computed_every_time(tmp_path):
    # the second call of a memoised plan takes the dispatch mode's inline path, which calls the op as it is: a
    # plan whose call had to be widened (this CPU has no integer histc kernel) must never take that path
    script = write(tmp_path, """\
import torch

ids = torch.tensor([0, 1, 2, 1, 0], dtype=torch.int32, device="mps")
first = torch.histc(ids, bins=3, min=0, max=2)
second = torch.histc(ids, bins=3, min=0, max=2)
print(first.tolist(), second.tolist())
""")
    _, doc, out, _ = emulate(script, torch="2.12", macos="26.3")
    assert (doc["outcome"], out) == ("completed", "[2, 2, 1] [2, 2, 1]\n")
