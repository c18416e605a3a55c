"""Classes the emulated Mac used to pass without data (issue 33, builder h3): MPSGraph's 2**16 padding limit (named
wrong results where a public record pins it, unverified where no release is recorded), an empty tensor outside the
MPS tests' envelope in any op family, a ``torch.compile`` mode no fact covers, and a call the CPU kernel refuses
where the meta kernel (the checks every backend shares) accepts it. Each with its message, line and outcome, and a
look-alike that keeps its old outcome."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.emulate.cpu_refusal import meta_accepts
from mpsready.ops.pad_limits import extent

from .helpers import emulate, write

PAD5 = '''\
import torch
import torch.nn.functional as F
x = torch.randn(1, 1, 4, 64, WIDTH, device="mps")
y = F.pad(x, (0, 0, 0, 0, 2, 0))
print(tuple(y.shape))
'''

PAD1 = '''\
import torch
import torch.nn.functional as F
ids = torch.arange(COUNT, device="mps")
padded = F.pad(ids, [0, 1], value=2)
print(padded.shape[0])
'''

REFLECT = '''\
import torch
import torch.nn.functional as F
wave = torch.randn(1, LENGTH, device="mps", requires_grad=True)
padded = F.pad(wave, (256, 256), mode="reflect")
padded.sum().backward()
print(wave.grad.shape[1])
'''

REPLICATE = '''\
import torch
import torch.nn as nn
x = torch.randn(SHAPE, device="mps", requires_grad=True)
out = nn.ReplicationPad1d((3, 4))(x)
out.backward(torch.ones_like(out))
print(tuple(x.grad.shape))
'''

NLL = '''\
import torch
import torch.nn.functional as F
logits = torch.randn(2, 3, ROWS, 7, device="mps")
target = torch.zeros(2, ROWS, 7, dtype=torch.long, device="mps")
loss = F.nll_loss(logits, target)
print(loss.shape)
'''

COMPILE = '''\
import torch
net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()).to("mps")
compiled = torch.compile(net, MODE)
x = torch.randn(4, 8, device="mps")
with torch.no_grad():
    y = compiled(x)
print(tuple(y.shape))
'''

CONVT = '''\
import torch
import torch.nn as nn
layer = nn.ConvTranspose2d(1, 1, kernel_size=3, stride=STRIDE, output_padding=1).to("mps")
x = torch.randn(1, 1, 4, 4, device="mps")
y = layer(x)
print(tuple(y.shape))
'''

MATMUL = '''\
import torch
a = torch.randn(3, 4, device="mps")
b = torch.randn(5, 6, device="mps")
c = a @ b
print(c.shape)
'''


def _run(tmp_path, text, torch, macos):
    _, doc, out, _ = emulate(write(tmp_path, text), torch=torch, macos=macos)
    return doc, out


def test_pad_extent_is_pr_195147s_measure():
    # constant_pad_nd of (1, 1, 4, 64, 1024) by (0, 0, 0, 0, 2, 0): padded axis -3, product after it 64 * 1024
    assert extent([(1, 1, 4, 64, 1024)], {"pad": [0, 0, 0, 0, 2, 0]}) == 65536
    assert extent([(1, 1, 4, 64, 1023)], {"pad": [0, 0, 0, 0, 2, 0]}) == 65472
    # a backward: grad_output (the output's shape) first; 1-D padding: the output's last dim
    assert extent([(1, 70512), (1, 70000)], {"padding": [256, 256]}) == 70512
    assert extent([(3, 4)], {"value": 0}) == 0


def test_rank5_pad_at_2pow16_is_a_named_wrong_result_and_one_below_completes(tmp_path):
    doc, out = _run(tmp_path, PAD5.replace("WIDTH", "1024"), "2.13", "26.6")
    [w] = doc["wrong_results"]
    assert (doc["outcome"], out, w["id"], w["op"], w["location"]["line"]) == (
        "completed", "(1, 1, 6, 64, 1024)\n", "pad-rank5-extent-2pow16", "aten::constant_pad_nd", 4)
    doc, _ = _run(tmp_path, PAD5.replace("WIDTH", "1023"), "2.13", "26.6")
    assert (doc["outcome"], doc["wrong_results"], doc["unverified"]) == ("completed", [], [])


def test_rank5_pad_at_2pow16_is_unverified_from_2_14_no_fixed_release_recorded(tmp_path):
    doc, _ = _run(tmp_path, PAD5.replace("WIDTH", "1024"), "2.14", "26.6")
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["wrong_results"], u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", [], "regime", "aten::constant_pad_nd", 4)
    assert "(regime pad-rank5-extent-2pow16-unreleased-fix, https://github.com/pytorch/pytorch/issues/194922)" \
        in u["reason"]


def test_constant_pad_of_2pow16_elements_by_macos(tmp_path):
    # named before macOS 15.2 (reported broken up to 15.1), unverified from 15.2 to 26, nothing on 26 (rank <= 4)
    doc, _ = _run(tmp_path, PAD1.replace("COUNT", "2 ** 17"), "2.2", "14.4")
    assert (doc["outcome"], [w["id"] for w in doc["wrong_results"]], doc["wrong_results"][0]["location"]["line"]) \
        == ("completed", ["pad-constant-2pow16-elements-macos15"], 4)
    doc, _ = _run(tmp_path, PAD1.replace("COUNT", "2 ** 15"), "2.2", "14.4")
    assert (doc["outcome"], doc["wrong_results"]) == ("completed", [])
    doc, _ = _run(tmp_path, PAD1.replace("COUNT", "2 ** 17"), "2.9", "15.5")
    assert (doc["outcome"], [u["reason"].split("(regime ")[1][:46] for u in doc["unverified"]]) == (
        "unverified", ["pad-constant-2pow16-elements-macos-unrecorded,"])
    doc, _ = _run(tmp_path, PAD1.replace("COUNT", "2 ** 17"), "2.13", "26.6")
    assert (doc["outcome"], doc["wrong_results"], doc["unverified"]) == ("completed", [], [])


def test_pad_backwards_past_2pow16(tmp_path):
    doc, _ = _run(tmp_path, REFLECT.replace("LENGTH", "70000"), "2.13", "26.6")
    assert (doc["outcome"], [(w["id"], w["location"]["line"]) for w in doc["wrong_results"]]) == (
        "completed", [("reflection-pad1d-backward-long-2pow16", 5)])
    doc, _ = _run(tmp_path, REFLECT.replace("LENGTH", "60000"), "2.13", "26.6")
    assert (doc["outcome"], doc["wrong_results"]) == ("completed", [])
    doc, _ = _run(tmp_path, REPLICATE.replace("SHAPE", "65736, 2, 4"), "2.4", "14.6")
    assert (doc["outcome"], [(w["id"], w["location"]["line"]) for w in doc["wrong_results"]]) == (
        "completed", [("replication-pad1d-backward-batch-2pow16", 5)])
    doc, _ = _run(tmp_path, REPLICATE.replace("SHAPE", "2, 65736, 4"), "2.4", "14.6")
    assert (doc["outcome"], doc["wrong_results"]) == ("completed", [])
    doc, _ = _run(tmp_path, REPLICATE.replace("SHAPE", "65736, 2, 4"), "2.8", "15.5")
    assert (doc["outcome"], doc["wrong_results"]) == ("completed", [])


def test_an_empty_tensor_outside_the_envelope_of_a_family_without_a_record_is_unverified(tmp_path):
    # nll_loss over a zero-size spatial dim (pytorch#134431: 'Placeholder tensor is empty!' on the Mac, 2.5)
    doc, out = _run(tmp_path, NLL.replace("ROWS", "0"), "2.5", "14.6")
    [u] = doc["unverified"]
    assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", "torch.Size([])\n", "regime", "aten::nll_loss2d_forward", 5)
    assert u["reason"] == (
        "nll_loss2d_forward with a tensor with no elements: no sample of torch 2.13.0's MPS OpInfo tests had one, "
        "and MPSGraph kernels assert on an empty placeholder ('Placeholder tensor is empty!', OperationUtils.mm; "
        "public reports for sort, nll_loss and matmul) unless the kernel returns first: not verified on torch "
        "2.5.1 (regime envelope-nll_loss2d_forward-empty)")
    doc, _ = _run(tmp_path, NLL.replace("ROWS", "3"), "2.5", "14.6")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_a_compile_mode_no_fact_covers_is_unverified_and_the_default_mode_is_not(tmp_path):
    doc, out = _run(tmp_path, COMPILE.replace("MODE", 'mode="reduce-overhead"'), "2.13", "26.5")
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["exit_code"], out, u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", 4, "(4, 8)\n", "compile", "torch.compile", 6)
    assert u["reason"] == (
        "torch.compile with mode='reduce-overhead': Inductor's MPS tests compile in the default mode only, so no "
        "fact covers this mode's code on MPS (mode='reduce-overhead' and 'max-autotune' turn on CUDA graphs: "
        "pytorch#188970, a crash in MPSStream::copy on torch 2.13): not verified on torch 2.13.0")
    doc, _ = _run(tmp_path, COMPILE.replace("MODE", 'options={"shape_padding": True}'), "2.13", "26.5")
    assert [u["reason"].split(":")[0] for u in doc["unverified"]] == ["torch.compile with options shape_padding"]
    doc, _ = _run(tmp_path, COMPILE.replace("MODE", 'mode="default"'), "2.13", "26.5")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_a_check_of_the_cpu_kernel_alone_makes_the_run_unverified_not_inconclusive(tmp_path):
    # pytorch#169236: the CPU's slow_conv_transpose2d refuses output_padding >= stride; MPS returns a wider result
    doc, out = _run(tmp_path, CONVT.replace("STRIDE", "1"), "2.10", "26.1")
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["exit_code"], doc["program_error"], out) == ("unverified", 4, None, "")
    assert (u["kind"], u["op"], u["location"]["line"], u["calls"]) == ("cpu_refusal", "aten::convolution", 5, 1)
    assert u["reason"] == (
        "the CPU kernel of aten::convolution refused this call (RuntimeError: output padding must be smaller than "
        "either stride or dilation, but got output_padding_height: 1 output_padding_width: 1 stride_height: 1 "
        "stride_width: 1 dilation_height: 1 dilation_width: 1), but the meta kernel accepts it: the check is the CPU "
        "kernel's own, MPS's kernel has its own, and what torch 2.10.0 on a Mac does here is not known (the run "
        "stopped at this call): not verified")
    doc, out = _run(tmp_path, CONVT.replace("STRIDE", "2"), "2.10", "26.1")
    assert (doc["outcome"], doc["unverified"], out) == ("completed", [], "(1, 1, 10, 10)\n")


def test_a_shape_error_every_backend_raises_stays_the_programs_own(tmp_path):
    doc, _ = _run(tmp_path, MATMUL, "2.10", "26.1")
    pe = doc["program_error"]
    assert (doc["outcome"], doc["unverified"], pe["kind"], pe["exception"], pe["location"]["line"]) == (
        "inconclusive", [], "program_error", "RuntimeError", 4)


def test_meta_accepts_reads_shapes_only():
    import torch

    mm = torch.ops.aten.mm.default
    assert meta_accepts(mm, (torch.ones(2, 3), torch.ones(3, 4)), {}) is True
    assert meta_accepts(mm, (torch.ones(2, 3), torch.ones(4, 4)), {}) is False
    assert meta_accepts(mm, (torch.ones(2, 2, dtype=torch.bool), torch.ones(2, 2, dtype=torch.bool)), {}) is True


MV = '''\
import torch
feats = torch.empty(ROWS, 7, device="mps")
w = torch.ones(7, device="mps")
scores = feats @ w
print(scores.shape)
'''

FFT = '''\
import torch
z = torch.randn(SHAPE, dtype=torch.complex64, device="mps")
spec = torch.fft.fftn(z, dim=(1, 2))
print(spec.shape)
'''


def test_an_empty_batch_of_a_kernel_that_is_not_elementwise_is_unverified_even_with_an_empty_result(tmp_path):
    # a matrix-vector product of an empty batch raised 'Placeholder tensor is empty!' on 2.4 (tuning report)
    doc, out = _run(tmp_path, MV.replace("ROWS", "0"), "2.4", "14.6")
    [u] = doc["unverified"]
    assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", "torch.Size([0])\n", "regime", "aten::mv", 4)
    assert u["reason"].endswith("unless the kernel returns first: not verified on torch 2.4.1 "
                                "(regime envelope-mv-empty)")
    doc, _ = _run(tmp_path, MV.replace("ROWS", "2"), "2.4", "14.6")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


def test_more_dimensions_than_any_sample_past_rank_4_is_unverified(tmp_path):
    doc, out = _run(tmp_path, FFT.replace("SHAPE", "2, 3, 2, 2, 4, 4"), "2.12", "15.5")
    [u] = doc["unverified"]
    assert (doc["outcome"], out, u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", "torch.Size([2, 3, 2, 2, 4, 4])\n", "regime", "aten::_fft_c2c", 3)
    assert u["reason"] == (
        "_fft_c2c with a tensor of more than 4 dimensions: no sample of torch 2.13.0's MPS OpInfo tests had one, "
        "and kernels that are not elementwise have public records of MPS aborts past rank 4 (FFT, batch norm, "
        "reductions, cumulative ops): not verified on torch 2.12.1 (regime envelope-_fft_c2c-rank)")
    doc, _ = _run(tmp_path, FFT.replace("SHAPE", "2, 3, 4, 4"), "2.12", "15.5")
    assert (doc["outcome"], doc["unverified"]) == ("completed", [])


LU = '''\
import torch
a = torch.tensor([[1.0, 3.0], [2.0, 6.0]], device="mps")
lu, piv = torch.linalg.lu_factor(a)
print(piv.tolist())
'''


def test_a_cpu_refusal_inside_an_op_mps_runs_whole_is_unverified(tmp_path):
    # linalg.lu_factor is one MPS kernel (emulate/cia.py): the CPU path's singular-matrix check is not the Mac's
    doc, out = _run(tmp_path, LU, "2.9", "15.5")
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["program_error"], out) == ("unverified", None, "")
    assert (u["kind"], u["op"], u["location"]["line"]) == ("cpu_refusal", "aten::linalg_lu_factor", 3)
    assert u["reason"].startswith("the CPU kernel of aten::linalg_lu_factor refused this call (RuntimeError: "
                                  "torch.linalg.lu_factor: U[2,2] is zero")
