"""The dtype support table per release and macOS (issue 33, item 2; data/curated/mps_dtype_support.yaml): exact
texts, lines and outcomes for float8, unsigned 16/32/64-bit before 2.9, and the copy back to a CPU float64."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.ops.judge import DTYPE_FACTS, Judge, c10_name

from .helpers import emulate, write

FLOAT8 = '''\
import torch
w = torch.zeros(4, 4).to(torch.float8_e4m3fn)
w = w.to("mps")
print(w.dtype)
'''


@pytest.mark.parametrize("rel", ["2.3", "2.9", "2.14"])
def test_float8_refused_at_the_move_on_every_shipped_release(tmp_path, rel):
    # the NaN watch is another issue's (item 7): off here, so that only the move is judged
    _, doc, out, _ = emulate(write(tmp_path, FLOAT8), torch=rel, nan_check=False)
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["exception"], ff["dtype"], ff["location"]["line"], ff["fixed_in"],
            out) == ("failed", "dtype", "TypeError", "float8_e4m3fn", 3, None, "")
    assert ff["message"] == ("Trying to convert Float8_e4m3fn to the MPS backend but it does not have support "
                             "for that dtype.")


UINT16 = '''\
import torch
t = torch.arange(10, dtype=torch.int32).to(torch.uint16)
t = t.to("mps")
print(t.dtype)
'''


def test_uint16_refused_before_2_9_and_allowed_from_it(tmp_path):
    _, doc, _, _ = emulate(write(tmp_path, UINT16), torch="2.8", nan_check=False)
    ff = doc["first_failure"]
    assert (ff["kind"], ff["exception"], ff["dtype"], ff["location"]["line"], ff["fixed_in"]) == (
        "dtype", "TypeError", "uint16", 3, "2.9.0")
    assert ff["message"] == "Trying to convert UInt16 to the MPS backend but it does not have support for that dtype."
    _, doc, out, _ = emulate(write(tmp_path, UINT16), torch="2.9", nan_check=False)
    assert (doc["outcome"], out) == ("completed", "torch.uint16\n")


COPY_BACK = '''\
import torch
x = torch.arange(1, 9, dtype=torch.float32, device="mps") / 3
y = x.to("cpu", torch.float64)
z = x.cpu().double()
print(y.dtype, z.dtype)
'''


def test_copy_back_to_float64_raises_to_2_13_and_is_wrong_in_2_14(tmp_path):
    # pytorch#197715: "2.13.0 raises a TypeError ..., 2.14.0 ... silently" (zeros)
    _, doc, out, _ = emulate(write(tmp_path, COPY_BACK), torch="2.13")
    ff = doc["first_failure"]
    assert (doc["outcome"], ff["kind"], ff["op"], ff["exception"], ff["location"]["line"], out) == (
        "failed", "dtype", "aten::_to_copy", "TypeError", 3, "")
    assert ff["message"].startswith("Cannot convert a MPS Tensor to float64 dtype")
    _, doc, out, _ = emulate(write(tmp_path, COPY_BACK), torch="2.14")
    assert (doc["outcome"], doc["exit_code"], out) == ("completed", 1, "torch.float64 torch.float64\n")
    [w] = doc["wrong_results"]
    assert (w["id"], w["location"]["line"], w["report"]) == (
        "copy-back-float64-writes-nothing", 3, "https://github.com/pytorch/pytorch/issues/197715")


def test_every_torch_dtype_has_a_row_or_the_default_branch():
    import torch

    names = sorted({str(d).replace("torch.", "") for d in (getattr(torch, n) for n in dir(torch))
                    if isinstance(d, torch.dtype)})
    for rel, macos in (("2.3", "13.5"), ("2.8", "15.0"), ("2.14", "15.0")):
        judge = Judge(rel, macos)
        table = judge.dtype_support()
        for name in names:
            for what in DTYPE_FACTS:
                v, src = judge.dtype_fact(name, what)
                assert v in ("ok", "refused", "wrong", "global") and src, (rel, name, what)
        assert table["float32"]["create"] == "ok" and table["float64"]["create"] == "refused"
    assert Judge("2.8", "13.5").dtype_support()["bfloat16"]["create"] == "refused"
    assert Judge("2.8", "14.0").dtype_support()["bfloat16"]["create"] == "ok"
    assert Judge("2.8", "15.0").dtype_support()["uint32"]["to_mps"] == "refused"
    assert Judge("2.9", "15.0").dtype_support()["uint32"]["to_mps"] == "ok"
    assert Judge("2.14", "15.0").dtype_support()["float64"]["from_mps"] == "wrong"
    assert Judge("2.5", "15.0").allocation("qint8").message == (
        "Trying to convert QInt8 to the MPS backend but it does not have support for that dtype.")
    assert (c10_name("float4_e2m1fn_x2"), c10_name("quint4x2"), c10_name("uint3")) == (
        "Float4_e2m1fn_x2", "QUInt4x2", "UInt3")


SDPA = '''\
import torch
import torch.nn.functional as F
q, k, v = (torch.randn(1, 4, 64, 64) for _ in range(3))
half = [t.to("mps", torch.float16) for t in (q, k, v)]
got = F.scaled_dot_product_attention(*half, is_causal=True)
full = F.scaled_dot_product_attention(*[t.float() for t in half], is_causal=True)
pooled = torch.nn.functional.adaptive_max_pool2d(torch.randn(2, 4, 5, 5).to("mps"), (3, 3))
fine = torch.nn.functional.adaptive_max_pool2d(torch.randn(2, 4, 6, 6).to("mps"), (3, 3))
'''


def test_new_wrong_result_advisories_name_the_line(tmp_path):
    # pytorch#195910 (causal SDPA in half precision, 2.10+), pytorch#190064 (adaptive_max_pool2d 5 -> 3, 2.13)
    _, doc, _, _ = emulate(write(tmp_path, SDPA), torch="2.13")
    assert doc["outcome"] == "completed" and doc["exit_code"] == 1
    assert [(w["id"], w["location"]["line"]) for w in doc["wrong_results"]] == [
        ("sdpa-causal-half-mask-per-group", 5), ("adaptive-max-pool2d-nondivisible", 7)]
    _, doc, _, _ = emulate(write(tmp_path, SDPA), torch="2.9")
    assert doc["wrong_results"] == []


SATURATE = '''\
import torch
x = torch.tensor([[100, 200, 1], [5, 3, 6]], dtype=torch.uint8, device="mps")
s = x.sum(dtype=torch.uint8)
g = torch.lgamma(torch.rand(3, 1, device="mps").expand(3, 4))
h = torch.lgamma(torch.rand(3, 4, device="mps"))
t = x[:, 2:].sum(dtype=torch.uint8)
'''


def test_saturating_sum_and_lgamma_of_a_broadcast_input_are_named(tmp_path):
    # pytorch#179415 (2.11.0: sum(dtype=uint8) saturates), PR #175603 (lgamma of a non-contiguous input, fixed 2.12);
    # the sum of line 3 (315) passes 255, the look-alike of line 6 (7) fits: a saturating sum is right there
    _, doc, _, _ = emulate(write(tmp_path, SATURATE), torch="2.11")
    assert [(w["id"], w["location"]["line"], w["fixed_in"]) for w in doc["wrong_results"]] == [
        ("sum-small-int-saturates", 3, None), ("lgamma-digamma-noncontiguous", 4, "2.12.0")]
    _, doc, _, _ = emulate(write(tmp_path, SATURATE), torch="2.12")
    assert doc["wrong_results"] == []
