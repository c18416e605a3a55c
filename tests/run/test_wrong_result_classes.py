"""Round 4 of issue 33: silent wrong results named by class, not by report: a graph cache keyed without an argument
(SDPA's scale on 2.12), a batched matmul over a long K (M1/M2's MPSGraph kernel), a layer norm of a sliced input
(2.4's sliced-input gather, the batch norm twin)."""

from __future__ import annotations

from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex

from .helpers import emulate, write

SDPA = """\
import torch
import torch.nn.functional as F

q = torch.randn(1, 2, 4, 8, device="mps")
a = F.scaled_dot_product_attention(q, q, q)
b = F.scaled_dot_product_attention(q, q, q)
c = F.scaled_dot_product_attention(q, q, q, scale=2.0)
d = F.scaled_dot_product_attention(q[:, :1], q[:, :1], q[:, :1], scale=0.5)
print(float((a - c).abs().max()))
"""


def _wrong(doc):
    return [(w["id"], w["op"], w["location"]["line"], w["calls"]) for w in doc["wrong_results"]]


def test_a_second_sdpa_with_another_scale_on_the_same_shapes_is_named_on_2_12(tmp_path):
    script = write(tmp_path, SDPA)
    _, doc, _, _ = emulate(script, torch="2.12", macos="26.4")
    assert doc["outcome"] == "completed"
    assert _wrong(doc) == [("sdpa-scale-cache-stale", "aten::_scaled_dot_product_flash_attention_for_cpu", 7, 1)]
    _, doc, _, _ = emulate(script, torch="2.13", macos="26.4")
    assert doc["wrong_results"] == []


def test_cache_key_condition_is_per_op_dtypes_and_shapes():
    idx = AdvisoryIndex("2.12.0", "26.4")
    op = "aten::_scaled_dot_product_attention_math_for_mps"

    def call(shape, scale):
        return idx.match(op, AdvisoryFacts(dtypes=("float32",) * 3, shapes=(shape,) * 3, contiguous=(True,) * 3,
                                           args={"scale": scale}))
    assert call((1, 2, 4, 8), None) is None  # first of its key
    assert call((1, 2, 4, 8), None) is None  # same scale again
    assert call((1, 1, 4, 8), 2.0) is None  # other shapes: another graph
    assert call((1, 2, 4, 8), 2.0).id == "sdpa-scale-cache-stale"
    assert call((1, 2, 4, 8), 2.0) is None  # the cache now holds 2.0 (as this emulation records it)


def test_long_k_batched_matmul_named_with_its_thresholds(tmp_path):
    script = write(tmp_path, """\
import torch

a = torch.randn(2, 16, 32767, device="mps")
b = torch.randn(2, 32767, 16, device="mps")
c = torch.bmm(a, b)
d = torch.bmm(a[:, :15], b)
e = torch.baddbmm(torch.zeros(2, 16, 16, device="mps"), a, b)
print(c.shape, d.shape, e.shape)
""")
    _, doc, _, _ = emulate(script, torch="2.14", macos="26.6")
    assert _wrong(doc) == [("bmm-long-k-apple7-8", "aten::bmm", 5, 1), ("bmm-long-k-apple7-8", "aten::baddbmm", 7, 1)]
    idx = AdvisoryIndex("2.14.0", "26.6")
    short = AdvisoryFacts(dtypes=("float32",) * 2, shapes=((2, 16, 32766), (2, 32766, 16)), contiguous=(True, True))
    assert idx.match("aten::bmm", short) is None


def test_layer_norm_of_a_row_slice_named_on_2_4_only(tmp_path):
    script = write(tmp_path, """\
import torch

rows = torch.randn(3, 4, device="mps")
w, b = torch.ones(4, device="mps"), torch.zeros(4, device="mps")
whole = torch.layer_norm(rows, (4,), w, b, 1e-5)
part = torch.layer_norm(rows[1:3], (4,), w, b, 1e-5)
print(part.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.4", macos="14.5")
    assert [(i, line) for i, _op, line, _n in _wrong(doc)] == [("layer-norm-sliced-input", 6)]
    for release in ("2.3", "2.5"):
        _, doc, _, _ = emulate(script, torch=release, macos="14.5")
        assert doc["wrong_results"] == [], release
