"""The evidence envelope on the emulated Mac (issue 33, round 10; ``mpsready.ops.envelope``): a call with a property
that no sample of its op's MPS OpInfo tests had, of an op whose family has a record of MPS aborts or wrong results,
makes a run that would have completed ``unverified``, with the call, its line and the reason; the same call inside
the envelope stays ``completed``."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.run.render import render_terminal

from .helpers import emulate, write

CONV = '''\
import torch
conv = torch.nn.Conv2d(3, 4, 3).to("mps")
x = torch.randn(2, 3, 8, 8, device="mps", requires_grad=True)
y = conv(x)
y.backward(GRAD)
print("done")
'''

LOSS = '''\
import torch
a = torch.ones(ROWS, 3, device="mps")
b = torch.zeros(ROWS, 3, device="mps")
print(torch.nn.functional.mse_loss(a, b, reduction="sum").item())
'''


def _run(tmp_path, text, torch="2.9"):
    _, doc, out, _ = emulate(write(tmp_path, text), torch=torch, macos="15.5")
    return doc, out


def test_conv_backward_through_a_permuted_gradient_is_unverified(tmp_path):
    doc, out = _run(tmp_path, CONV.replace("GRAD", 'torch.ones(2, 6, 6, 4, device="mps").permute(0, 3, 1, 2)'))
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["exit_code"], doc["failures"], out) == ("unverified", 4, [], "done\n")
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == ("regime", "aten::convolution_backward", 5, 1)
    assert u["reason"].startswith(
        "convolution_backward with a non-contiguous view (permuted, transposed or sliced; not a broadcast): no sample "
        "of torch 2.13.0's MPS OpInfo tests had one, and the convolution family has a record of MPS aborts or wrong "
        "results (")
    assert u["reason"].endswith(": not verified on torch 2.9.1 (regime envelope-convolution_backward-noncontig)")
    assert doc["judged"]["regime"] == 1
    lines = render_terminal(doc).rstrip("\n").splitlines()
    assert lines[-1].endswith("; on no data: 0; in a size or parameter regime the data cannot vouch for: 1")
    # the reason's end names the release and the regime: a long one is cut in its middle (an end cut lost both)
    [shown] = [line for line in lines if "(regime; 1 call(s))" in line]
    assert len(u["reason"]) > 320 and " ... " in shown
    assert shown.endswith(": not verified on torch 2.9.1 (regime envelope-convolution_backward-noncontig)")


@pytest.mark.parametrize("grad", ['torch.ones(2, 4, 6, 6, device="mps")', 'torch.ones((), device="mps").expand(2, 4, 6, 6)'])
def test_conv_backward_with_a_contiguous_or_broadcast_gradient_completes(tmp_path, grad):
    doc, _ = _run(tmp_path, CONV.replace("GRAD", grad))
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_loss_over_an_empty_tensor_is_unverified_and_over_rows_completes(tmp_path):
    doc, out = _run(tmp_path, LOSS.replace("ROWS", "0"))
    assert (doc["outcome"], out) == ("unverified", "0.0\n")
    assert [(u["op"], u["location"]["line"], u["reason"]) for u in doc["unverified"]] == [
        ("aten::mse_loss", 4, "mse_loss with a tensor with no elements: no sample of torch 2.13.0's MPS OpInfo tests "
         "had one, and the mse_loss family has a record of MPS aborts or wrong results (mse-loss-noncontiguous): not "
         "verified on torch 2.9.1 (regime envelope-mse_loss-empty)")]
    doc, _ = _run(tmp_path, LOSS.replace("ROWS", "2"))
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


BN = '''\
import torch
import torch.nn.functional as F
x = torch.randn(4, 3, 5, device="mps").to(DTYPE)
w = torch.ones(3, device="mps")
b = torch.zeros(3, device="mps")
y = F.batch_norm(x, None, None, w, b, training=True)
print(y.dtype)
'''


def test_batch_norm_of_a_bfloat16_input_with_float32_affine_is_unverified_and_all_float32_completes(tmp_path):
    doc, out = _run(tmp_path, BN.replace("DTYPE", "torch.bfloat16"))
    [u] = doc["unverified"]
    assert (doc["outcome"], out) == ("unverified", "torch.bfloat16\n")
    assert (u["op"], u["location"]["line"], u["calls"]) == ("aten::native_batch_norm", 6, 1)
    assert u["reason"] == (
        "native_batch_norm with floating tensors of different dtypes: no sample of torch 2.13.0's MPS OpInfo tests "
        "had one, and the batch_norm family has a record of MPS aborts or wrong results (batch-norm-sliced-input, "
        "batch-norm-avg-pool-channels-last-offset, compiled-welford-missing-barrier and 1 more): not verified on "
        "torch 2.9.1 (regime envelope-native_batch_norm-mixed_float)")
    doc, _ = _run(tmp_path, BN.replace("DTYPE", "torch.float32"))
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])
