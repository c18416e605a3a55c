"""Per-kernel dtype, argument and size limits (mps_dtype_checks.yaml) on the emulated Mac: the Mac's refusal at
the user's line inside the release/macOS range, completion outside it and for an accepted dtype; and a refusal
both devices make is reported as the Mac's, because the judgement comes before the CPU computes."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from .helpers import emulate, write  # noqa: E402

CUMSUM = '''\
import torch
mask = torch.ones(2, 5, dtype=torch.int64, device="mps")
pos = mask.cumsum(-1) - 1
'''
FRAC = '''\
import torch
x = torch.arange(4, device="mps")
y = torch.frac(x)
'''
MATMUL = '''\
import torch
a = torch.ones(3, 4, dtype=torch.{dtype}, device="mps")
b = torch.ones(4, 2, dtype=torch.{dtype}, device="mps")
c = a @ b
'''
INDEX_ADD = '''\
import torch
x = torch.zeros(5, dtype=torch.{dtype}, device="mps")
idx = torch.tensor([0, 2], device="mps")
src = torch.ones(2, dtype=torch.{dtype}, device="mps")
x.index_add_(0, idx, src)
'''
LINEAR = '''\
import torch
layer = torch.nn.Linear(2, 3).to("mps")
tokens = torch.tensor([[1, 2]], device="mps")
out = layer(tokens)
'''
FFT = '''\
import torch
x = torch.randn(16, device="mps")
spec = torch.fft.rfft(x)
'''
GATHER = '''\
import torch
x = torch.randn(3, 4, device="mps")
i = torch.zeros(3, 1, dtype=torch.long, device="mps")
g = torch.gather(x, 1, i, sparse_grad={flag})
'''
BIG_DIM = '''\
import torch
x = torch.zeros(1, device="mps").expand(2**31)
s = x.exp()
'''


def _run(tmp_path, text, torch, macos):
    result, doc, out, err = emulate(write(tmp_path, text), torch=torch, macos=macos)
    return doc


def _only_failure(doc):
    assert doc["outcome"] == "failed", doc
    (f,) = doc["failures"]
    return f["op"], f["kind"], f["exception"], f["message"], f["location"]["line"]


def test_cumsum_int64_below_macos_13_3_and_not_at_13_3(tmp_path):
    doc = _run(tmp_path, CUMSUM, "2.5", "13.0")
    assert _only_failure(doc) == ("aten::cumsum", "dtype", "RuntimeError",
                                  "MPS does not support cumsum op with int64 input. Support has been added in macOS 13.3",
                                  3)
    assert _run(tmp_path, CUMSUM, "2.5", "13.3")["outcome"] == "completed"


def test_refused_by_both_devices_is_the_macs_refusal(tmp_path):
    # the CPU refuses integer frac too ("frac_cpu" not implemented for 'Long'); the Mac's check is judged first
    doc = _run(tmp_path, FRAC, "2.4", "14.4")
    assert _only_failure(doc) == ("aten::frac", "dtype", "RuntimeError",
                                  "frac_out_mps is only implemented for floating types", 3)
    assert doc["failures"][0]["fixed_in"] == "2.5.0"


def test_bool_matmul_refused_by_both_devices_is_the_macs(tmp_path):
    doc = _run(tmp_path, MATMUL.format(dtype="bool"), "2.5", "14.4")
    assert _only_failure(doc) == ("aten::mm", "dtype", "RuntimeError",
                                  "MPS device does not support mm for non-float inputs", 4)


def test_integer_matmul_and_a_float_near_miss(tmp_path):
    # the message is in the 2.3.0-2.6.0 binaries only (data/mined/mps_facts.json.gz)
    doc = _run(tmp_path, MATMUL.format(dtype="int64"), "2.6", "14.4")
    assert _only_failure(doc) == ("aten::mm", "dtype", "RuntimeError",
                                  "MPS device does not support mm for non-float inputs", 4)
    assert _run(tmp_path, MATMUL.format(dtype="float32"), "2.6", "14.4")["outcome"] == "completed"


def test_index_add_int64_source_not_its_int64_index(tmp_path):
    doc = _run(tmp_path, INDEX_ADD.format(dtype="int64"), "2.7", "14.4")
    assert _only_failure(doc) == ("aten::index_add_", "dtype", "RuntimeError",
                                  "index_add(): Expected non int64 dtype for source.", 5)
    assert _run(tmp_path, INDEX_ADD.format(dtype="float32"), "2.7", "14.4")["outcome"] == "completed"
    assert _run(tmp_path, INDEX_ADD.format(dtype="int64"), "2.9", "14.4")["outcome"] == "completed"


def test_linear_on_integer_tokens(tmp_path):
    doc = _run(tmp_path, LINEAR, "2.13", "15.5")
    assert _only_failure(doc) == ("aten::linear", "dtype", "RuntimeError",
                                  "MPS device does not support linear for non-float inputs", 4)


def test_fft_needs_macos_14_before_2_9(tmp_path):
    doc = _run(tmp_path, FFT, "2.5", "13.5")
    op, kind, exc, msg, line = _only_failure(doc)
    assert (op, kind, exc, msg, line) == ("aten::_fft_r2c", "dtype", "RuntimeError",
                                          "FFT operations are only supported on MacOS 14+", 3)
    assert _run(tmp_path, FFT, "2.5", "14.4")["outcome"] == "completed"


def test_gather_sparse_grad(tmp_path):
    # the message is in the 2.3.0-2.12.1 binaries (data/mined/mps_facts.json.gz)
    doc = _run(tmp_path, GATHER.format(flag="True"), "2.12", "15.5")
    assert _only_failure(doc) == ("aten::gather", "shape", "RuntimeError", "sparse_grad not supported in MPS yet", 4)
    assert _run(tmp_path, GATHER.format(flag="False"), "2.12", "15.5")["outcome"] == "completed"


def test_dimension_larger_than_int_max_refused_before_the_cpu_computes(tmp_path):
    doc = _run(tmp_path, BIG_DIM, "2.13", "15.5")
    assert _only_failure(doc) == ("aten::exp", "shape", "RuntimeError",
                                  "MPSGraph does not support tensor dims larger than INT_MAX", 3)


LONG_CONV = """import torch
head = torch.nn.Conv1d(4, 2, kernel_size=1).to("mps")
latent = torch.randn(1, 4, {n}, device="mps")
audio = head(latent)
"""


def test_a_conv1d_over_more_than_65536_samples_raises_at_its_line(tmp_path):
    # the refusal of the MPS-only kernel stands inside the composite, whatever the installed torch decomposes
    doc = _run(tmp_path, LONG_CONV.format(n=70000), "2.6", "15.2")
    assert _only_failure(doc) == ("aten::_mps_convolution", "shape", "NotImplementedError",
                                  "Output channels > 65536 not supported at the MPS device. ", 4)
    assert _run(tmp_path, LONG_CONV.format(n=65536), "2.6", "15.2")["outcome"] == "completed"
