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
