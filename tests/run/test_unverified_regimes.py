"""The honest default (issue 33): a call in a size or parameter regime the data cannot vouch for makes a run that
would have completed ``unverified``, per call and counted, never ``completed``; the same call below the regime
stays ``completed``. Classes: a tensor argument past 2**32 bytes (mps_dtype_checks.yaml, effect ``unverified``) and
the op-family regimes of mps_unverified_regimes.yaml (attention scores past 2**32 bytes, linalg.inv past 1024,
strided ceil-mode max pooling)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex, load_regimes
from mpsready.ops.judge import CallFacts, Judge
from mpsready.run.render import render_terminal

from .helpers import emulate, write

SDPA = '''\
import torch
import torch.nn.functional as F
q = torch.randn(1, HEADS, 2048, 1, device="mps")
k = torch.randn(1, HEADS, 2048, 1, device="mps")
v = torch.randn(1, HEADS, 2048, 1, device="mps")
with torch.no_grad():
    out = F.scaled_dot_product_attention(q, k, v)
print(tuple(out.shape))
'''

INV = '''\
import torch
n = SIZE
a = torch.rand(n, n, device="mps") + n * torch.eye(n, device="mps")
inv = torch.linalg.inv(a)
print(tuple(inv.shape))
'''

POOL = '''\
import torch
import torch.nn as nn
pool = nn.MaxPool2d(kernel_size=KERNEL, stride=STRIDE, ceil_mode=CEIL, return_indices=True)
x = torch.rand(2, 3, 4, 6, device="mps")
out, idx = pool(x)
print(tuple(out.shape))
'''

BIG = '''\
import torch
x = torch.ones(1, device="mps").expand(COUNT)
total = x.sum()
print(int(total.item()))
'''


def _run(tmp_path, text, torch="2.7", macos="15.4"):
    _, doc, out, _ = emulate(write(tmp_path, text), torch=torch, macos=macos)
    return doc, out


def _only_unverified(doc):
    [u] = doc["unverified"]
    return u


def test_attention_scores_past_2pow32_bytes_are_unverified_and_a_look_alike_below_completes(tmp_path):
    # 257 heads x 2048 x 2048 float32 scores = 4,311,744,512 bytes > 2**32; 256 heads = exactly 2**32
    doc, out = _run(tmp_path, SDPA.replace("HEADS", "257"))
    u = _only_unverified(doc)
    assert (doc["outcome"], doc["exit_code"], doc["failures"], out) == ("unverified", 4, [], "(1, 257, 2048, 1)\n")
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == (
        "regime", "aten::_scaled_dot_product_flash_attention_for_cpu", 7, 1)
    assert u["reason"] == (
        "scaled_dot_product_attention whose (..., L, S) score matrix passes 2**32 bytes: MPS builds it whole, and "
        "MPSNDArray has aborted past 2**32 bytes ('total bytes of NDArray > 2**32'); no fix recorded for torch 2.7.1: "
        "not verified (regime attention-scores-past-2pow32-bytes, https://github.com/pytorch/pytorch/issues/143859)")
    assert doc["judged"]["regime"] == 1
    text = render_terminal(doc)
    assert f"  script.py:7: aten::_scaled_dot_product_flash_attention_for_cpu (regime; 1 call(s)) - {u['reason']}\n" in text
    last = text.rstrip("\n").splitlines()[-1]
    assert last.endswith("; on no data: 0; in a size or parameter regime the data cannot vouch for: 1")
    doc, _ = _run(tmp_path, SDPA.replace("HEADS", "256"))
    assert (doc["outcome"], doc["unverified"], doc["judged"]["regime"]) == ("completed", [], 0)


def test_linalg_inv_past_1024_is_unverified_on_every_release_and_1024_completes(tmp_path):
    for rel in ("2.5", "2.13"):
        doc, out = _run(tmp_path, INV.replace("SIZE", "1025"), torch=rel)
        u = _only_unverified(doc)
        assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"]) == (
            "unverified", "(1025, 1025)\n", "regime", "aten::linalg_inv_ex", 4)
        assert u["reason"].startswith("linalg.inv of a matrix larger than 1024 x 1024 on MPS: ")
        assert "(regime linalg-inv-past-1024, https://github.com/pytorch/pytorch/issues/101251)" in u["reason"]
    doc, _ = _run(tmp_path, INV.replace("SIZE", "1024"), torch="2.5")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_strided_ceil_mode_max_pool_is_unverified_and_look_alikes_complete(tmp_path):
    doc, out = _run(tmp_path, POOL.replace("KERNEL", "1").replace("STRIDE", "2").replace("CEIL", "True"))
    u = _only_unverified(doc)
    assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"], u["calls"]) == (
        "unverified", "(2, 3, 2, 3)\n", "regime", "aten::max_pool2d_with_indices", 5, 1)
    assert u["reason"].startswith("max pooling with ceil_mode=True where ceil mode changes the output size, on MPS: ")
    assert u["reason"].endswith("no fix recorded for torch 2.7.1: not verified (regime max-pool-ceil-mode-strided, "
                                "https://github.com/pytorch/pytorch/pull/156101)")
    # floor mode; stride 1; and kernel 2, stride 2 on the 4 x 6 map, where ceil and floor mode agree
    for kernel, stride, ceil in (("1", "2", "False"), ("1", "1", "True"), ("2", "2", "True")):
        doc, _ = _run(tmp_path, POOL.replace("KERNEL", kernel).replace("STRIDE", stride).replace("CEIL", ceil))
        assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_a_tensor_past_2pow32_bytes_is_unverified_per_call_and_one_below_completes(tmp_path):
    # an expanded view: 2**30 + 2**20 float32 elements read by sum (4,299,161,600 bytes), one byte of storage
    doc, out = _run(tmp_path, BIG.replace("COUNT", str(2**30 + 2**20)))
    u = _only_unverified(doc)
    assert (doc["outcome"], doc["exit_code"], out) == ("unverified", 4, f"{2**30 + 2**20}\n")
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"], u["dtypes"]) == (
        "size_regime", "aten::sum.dim_IntList", 3, 1, ["float32"])
    assert u["reason"] == (
        "a tensor argument of more than 2**32 bytes: Apple's MPSNDArray has aborted past that size ('total bytes of "
        "NDArray > 2**32') for some ops, releases and macOS versions, and handled it for others; torch 2.7.1 has no "
        "fact for this op at that size: not verified")
    assert doc["judged"]["none"] == 1
    doc, _ = _run(tmp_path, BIG.replace("COUNT", str(2**30)))
    assert (doc["outcome"], doc["unverified"], doc["judged"]["none"]) == ("completed", [], 0)


def test_size_regime_judgement_and_what_vouches_for_a_size():
    j = Judge("2.7", "15.3")
    big = CallFacts(dtypes=("float32", "float32"), bytes_max=2**32 + 4)
    hit = j.op("aten::add.Tensor", big)
    assert (hit.outcome, hit.kind, hit.exception, hit.fixed_in) == ("unknown", "size_regime", None, None)
    assert j.basis(hit.op, hit.outcome, hit.kind) == "none"
    assert j.op("aten::add.Tensor", CallFacts(dtypes=("float32", "float32"), bytes_max=2**32)).outcome == "runs"
    # bmm's own size fact (its tiling past 2**32 entries, macOS 15 onwards) and blits are left to their own facts
    assert j.op("aten::bmm", big).outcome == "runs"
    assert Judge("2.7", "14.4").op("aten::bmm", big).outcome == "runs"  # the fact's release, any macOS
    assert Judge("2.4", "14.4").op("aten::bmm", big).outcome == "unknown"  # before the fact (2.5+)
    assert Judge("2.4", "14.4").op("aten::mm", big).outcome == "unknown"
    assert j.op("aten::zero_", CallFacts(dtypes=("float32",), bytes_max=2**33)).outcome == "runs"


def test_regime_table_entries_are_sourced_and_match_only_in_their_regime():
    assert [r.id for r in load_regimes()] == [
        "attention-scores-past-2pow32-bytes", "linalg-inv-past-1024", "max-pool-ceil-mode-strided",
        "pad-rank5-extent-2pow16-unreleased-fix", "pad-constant-2pow16-elements-macos-unrecorded",
        "reflection-pad1d-backward-long-unreleased-fix"]
    for r in load_regimes():
        assert r.report.startswith("https://github.com/pytorch/pytorch/") and r.note and r.when
    idx = AdvisoryIndex("2.9.1", "15.5")
    pool = "aten::max_pool2d_with_indices"
    assert pool in idx.ops

    def facts(**args):
        return AdvisoryFacts(dtypes=("float32",), shapes=((1, 1, 8, 8),), contiguous=(True,), args=args)

    # ceil mode rounds where (size + 2 * padding - dilation * (kernel - 1) - 1) % stride != 0; an empty stride is the
    # kernel size, as PyTorch's pooling defaults it: (8 - 2 - 1) % 3 != 0
    assert idx.regime(pool, facts(kernel_size=[3, 3], stride=[], ceil_mode=True)).id == "max-pool-ceil-mode-strided"
    assert idx.regime(pool, facts(kernel_size=[3, 3], stride=[1, 1], ceil_mode=True)) is None
    assert idx.regime(pool, facts(kernel_size=[3, 3], stride=[2, 2], ceil_mode=False)) is None
    # kernel 3, stride 2, padding 1: (8 + 2 - 2 - 1) % 2 != 0; kernel 2, stride 2: (8 - 1 - 1) % 2 == 0
    assert idx.regime(pool, facts(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=True)) is not None
    assert idx.regime(pool, facts(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], ceil_mode=True)) is None
    # a wrong-result advisory of the same call is named instead (match first, regime only without one)
    assert idx.match(pool, facts(kernel_size=[3, 3], stride=[2, 2], ceil_mode=True)) is None



def test_a_composite_implicit_op_mps_runs_whole_keeps_the_size_regime_fact():
    # linear is judged whole (emulate/cia.py); its shape facts keep the bytes the size regime reads (an end-to-end run
    # would materialise a 4 GiB result here)
    import torch

    from mpsready.emulate.cia import _linear_facts

    x, w = torch.ones(3, 2), torch.ones(4, 2)
    facts = _linear_facts(CallFacts(dtypes=("float32", "float32"), bytes_max=2**33), (x, w))
    assert (facts.bytes_max, facts.out_matrix, facts.inner) == (2**33, (3, 4), 2)
    assert Judge("2.7", "15.3").op("aten::linear", facts).kind == "size_regime"


CONV = '''\
import torch
conv = torch.nn.Conv1d(1, CHANNELS, 3, padding=1).to("mps")
with torch.no_grad():
    y = conv(torch.ones(1, 1, 3, device="mps"))
print(tuple(y.shape))
'''


def test_sizes_a_later_release_guards_are_unverified_before_the_guard(tmp_path):
    # 2.5 refuses a convolution size above 65536 (PR #129484); 2.4 has no guard and no record of what it does
    doc, out = _run(tmp_path, CONV.replace("CHANNELS", "65537"), torch="2.4", macos="14.6")
    u = _only_unverified(doc)
    assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", "(1, 65537, 3)\n", "size_regime", "aten::_mps_convolution", 4)
    assert u["reason"].endswith("; torch 2.4.1 has no fact for this op at that size: not verified")
    doc, _ = _run(tmp_path, CONV.replace("CHANNELS", "65537"), torch="2.5", macos="14.6")
    assert (doc["outcome"], doc["first_failure"]["exception"], doc["first_failure"]["location"]["line"]) == (
        "failed", "NotImplementedError", 4)
    doc, _ = _run(tmp_path, CONV.replace("CHANNELS", "65536"), torch="2.4", macos="14.6")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])
    # a failure a shape rule predicts wins over the regime: bmm's result past 2**31 elements aborts (every release)
    facts = CallFacts(dtypes=("float32", "float32"), out_numel=2**31 + 1, bytes_max=2**33)
    assert Judge("2.4", "14.6").op("aten::bmm", facts).outcome == "crash"
    assert Judge("2.4", "14.6").op("aten::bmm", CallFacts(dtypes=("float32", "float32"), bytes_max=2**33)).kind \
        == "size_regime"
