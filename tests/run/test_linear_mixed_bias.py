"""A linear whose bias has another dtype than its input and weight, on MPS (issue 33, round 7). linear dispatches to
_mps_linear there; the 2.2/2.3-era kernel (Linear.mm, c10::optional era) checks only that the input is float or
half and adds a bias placeholder of the bias's own dtype to the matmul result in one MPSGraph addition, whose type
inference aborts the process before any dtype check of the CPU's could speak. Look-alikes: the same call with one
dtype, a 3-D input (the message's shapes are not modelled there), 2.4 (not established) and a mixed-dtype mm (a
structured op whose meta function refuses on every device): none is named an abort."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mpsready.ops.judge import CallFacts
from mpsready.ops.shape_tests import _SHAPE_TESTS

from .helpers import emulate, write

HEAD = '''\
import torch
head = torch.nn.Linear(16, 24).to("mps")
head.bias.data = head.bias.data.to(torch.{bias})
feats = torch.rand({shape}, device="mps"){cast}
print("built")
logits = head(feats)
print("done", tuple(logits.shape))
'''


def _head(bias="float16", shape="3, 16", cast=""):
    return HEAD.format(bias=bias, shape=shape, cast=cast)


@pytest.mark.parametrize(("torch", "macos"), [("2.2", "13.6"), ("2.2", "14.3"), ("2.3", "14.3")])
def test_float16_bias_on_a_float32_linear_aborts(tmp_path, torch, macos):
    _, doc, out, _ = emulate(write(tmp_path, _head()), torch=torch, macos=macos)
    ff = doc["first_failure"]
    assert (doc["outcome"], out) == ("failed", "built\n")
    assert (ff["exception"], ff["message"], ff["location"]["line"], ff["op"], ff["fixed_in"]) == (
        "MacCrash", "error: input types 'tensor<3x24xf32>' and 'tensor<24xf16>' are not broadcast compatible\n"
        "LLVM ERROR: Failed to infer result type(s).", 6, "aten::linear", None)


def test_float32_bias_on_a_float16_linear_aborts_with_the_types_swapped(tmp_path):
    text = _head(bias="float32", cast=".half()").replace('.to("mps")\n', '.to("mps").half()\n', 1)
    text = text.replace("head.bias.data.to(torch.float32)", "head.bias.data.float()")
    _, doc, _, _ = emulate(write(tmp_path, text), torch="2.2", macos="14.3")
    assert doc["first_failure"]["message"].startswith(
        "error: input types 'tensor<3x24xf16>' and 'tensor<24xf32>' are not broadcast compatible")


def test_look_alike_one_dtype_completes(tmp_path):
    _, doc, out, _ = emulate(write(tmp_path, _head(bias="float32")), torch="2.2", macos="14.3")
    assert (doc["outcome"], out) == ("completed", "built\ndone (3, 24)\n")


@pytest.mark.parametrize(("torch", "shape"), [("2.4", "3, 16"), ("2.2", "2, 5, 16")], ids=["2.4", "3-D input"])
def test_look_alikes_not_established_are_not_named_an_abort(tmp_path, torch, shape):
    # 2.4+: the kernel's bias handling was not read; 3-D inputs: the shapes in the message are not modelled. The CPU
    # refuses the mixed call itself and the meta kernel does not, so the run is unverified (emulate/cpu_refusal.py:
    # never completed, never a predicted abort, not the program's error either)
    _, doc, _, _ = emulate(write(tmp_path, _head(shape=shape)), torch=torch, macos="14.3")
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["first_failure"], u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", None, "cpu_refusal", "aten::linear", 6)
    assert "(RuntimeError: self and mat2 must have the same dtype, but got Half and Float)" in u["reason"]


def test_look_alike_mixed_mm_is_not_named_an_abort(tmp_path):
    text = ('import torch\na = torch.rand(3, 16, device="mps")\nb = torch.rand(16, 24, device="mps").half()\n'
            'c = torch.mm(a, b)\n')
    _, doc, _, _ = emulate(write(tmp_path, text), torch="2.2", macos="14.3")
    # the CPU kernel refuses it and the meta kernel does not: not the program's error, not verified either
    # (emulate/cpu_refusal.py)
    [u] = doc["unverified"]
    assert (doc["outcome"], doc["first_failure"], u["kind"], u["op"], u["location"]["line"]) == (
        "unverified", None, "cpu_refusal", "aten::mm", 4)
    assert "(RuntimeError: expected m1 and m2 to have the same dtype, but got: float != c10::Half)" in u["reason"]


@pytest.mark.parametrize(("dtypes", "want"), [
    (("float32", "float32", "float16"), True), (("float16", "float16", "float32"), True),
    (("float32", "float32", "float32"), False), (("float32", "float16", "float16"), False),
    (("float32", "float32"), False)])
def test_bias_dtype_differs(dtypes, want):
    assert _SHAPE_TESTS["bias_dtype_differs"](True, CallFacts(dtypes=dtypes)) is want
