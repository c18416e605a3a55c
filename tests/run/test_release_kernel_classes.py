"""Mac failures that completed on the emulated Mac, by class and release (issue 33, builder h4, round 13): each with
a fixture of our own words, the exact outcome, kind, exception, message and line, and a look-alike that completes.

- an empty tensor in an elementwise activation whose MPSGraph kernel had no ``numel() == 0`` return in that release:
  ``relu`` before 2.3 (PR #118965), ``leaky_relu`` before 2.4 (PR #123049);
- layout: ``argmax``/``argmin`` without ``dim`` of a strided view flattens it with a view (2.8-2.13, pytorch#160740);
- ``torch.compile``: an elementwise op Inductor lowers to an ops-handler method the release's ``MetalOverrides``
  has no code for (``sinh`` on every mined release 2.7-2.14; ``atan2`` on 2.7 only), mined per release.
"""

from __future__ import annotations

import pytest

from mpsready.ops import inductor
from mpsready.ops.build.inductor_ops import missing

from .helpers import emulate, write

HEAD = "import torch\nimport torch.nn.functional as F\n\ndev = \"mps\"\n"  # the body starts at line 5
PLACEHOLDER = ("[srcBuf length] > 0 INTERNAL ASSERT FAILED at \"aten/src/ATen/native/mps/OperationUtils.mm\", please "
               "report a bug to PyTorch. Placeholder tensor is empty!")
VIEW = ("view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
        "contiguous subspaces). Use .reshape(...) instead.")


def _run(tmp_path, body, torch, macos="14.4"):
    _, doc, _out, _ = emulate(write(tmp_path, HEAD + body), torch=torch, macos=macos)
    ff = doc["first_failure"] or {}
    return doc, (doc["outcome"], ff.get("kind"), ff.get("exception"), ff.get("message"),
                 (ff.get("location") or {}).get("line"), ff.get("fixed_in"))


# ---------------------------------------------------------------- empty tensors in elementwise activations
@pytest.mark.parametrize(("body", "torch", "fixed"), [
    ("h = torch.zeros(0, 16, device=dev)\nout = torch.nn.ReLU()(h)\n", "2.2", "2.3.0"),
    ("h = torch.zeros(3, 0, device=dev)\nh.relu_()\n", "2.2", "2.3.0"),
    ("h = torch.zeros(0, 4, device=dev)\nout = F.leaky_relu(h, 0.1)\n", "2.3", "2.4.0"),
])
def test_an_empty_activation_fails_before_its_early_return(tmp_path, body, torch, fixed):
    _doc, got = _run(tmp_path, body, torch)
    assert got == ("failed", "shape", "RuntimeError", PLACEHOLDER, 6, fixed)


@pytest.mark.parametrize(("body", "torch"), [
    ("h = torch.zeros(0, 16, device=dev)\nout = torch.nn.ReLU()(h)\n", "2.3"),  # the release with the return
    ("h = torch.zeros(2, 16, device=dev)\nout = torch.nn.ReLU()(h)\n", "2.2"),  # not empty
    ("h = torch.zeros(0, 4, device=dev)\nout = F.leaky_relu(h, 0.1)\n", "2.4"),
    ("h = torch.zeros(0, 4, device=dev)\nout = torch.sigmoid(h)\n", "2.2"),  # no record for this kernel
])
def test_look_alikes_of_the_empty_activation_complete(tmp_path, body, torch):
    doc, got = _run(tmp_path, body, torch)
    assert got[0] == "completed", doc["unverified"]


# ---------------------------------------------------------------- layout: argmax without dim of a strided view
@pytest.mark.parametrize(("expr", "torch"), [
    ("torch.argmax(x.t())", "2.8"), ("x[::2, ::2].argmin()", "2.10"), ("torch.argmax(x.t())", "2.13"),
])
def test_argmax_without_dim_of_a_strided_view_raises_the_view_error(tmp_path, expr, torch):
    _doc, got = _run(tmp_path, f"x = torch.randn(6, 6, device=dev)\ni = {expr}\n", torch, macos="15.6")
    assert got == ("failed", "shape", "RuntimeError", VIEW, 6, None)


@pytest.mark.parametrize(("expr", "torch"), [
    ("torch.argmax(x)", "2.8"),  # contiguous: the flattening view works
    ("torch.argmax(x.t(), dim=0)", "2.8"),  # with a dim nothing is flattened
    ("torch.argmax(x.t().contiguous())", "2.8"),
    ("torch.argmax(x.t())", "2.14"),  # not established after the Metal rewrite: the judge says nothing
])
def test_look_alikes_of_the_strided_argmax_complete(tmp_path, expr, torch):
    doc, got = _run(tmp_path, f"x = torch.randn(6, 6, device=dev)\ni = {expr}\n", torch, macos="15.6")
    assert got[0] == "completed", doc["unverified"]


# ---------------------------------------------------------------- torch.compile: ops the Metal handler lacks
COMPILED = "def f(x):\n    return torch.{op}(x) * 0.5 + x\n\n\nx = torch.linspace(-2.0, 2.0, 16, device=dev)\ny = torch.compile(f)(x)\n"


def test_a_compiled_sinh_fails_where_the_metal_handler_has_no_code_for_it(tmp_path):
    doc, got = _run(tmp_path, COMPILED.format(op="sinh"), "2.13", macos="15.6")
    assert got == ("failed", "compile", "InductorError", "NotImplementedError: ", 10, None)
    assert "lowers aten::sinh to ops.sinh, which MetalOverrides does not implement" in doc["first_failure"]["source"]


def test_a_compiled_sin_is_not_refused(tmp_path):
    doc, got = _run(tmp_path, COMPILED.format(op="sin"), "2.13", macos="15.6")
    assert got[0] == "completed", doc["unverified"]


def test_the_mined_handler_gaps_differ_by_release():
    assert inductor.unlowerable("2.7", {"aten::atan2"}) == ("aten::atan2", "atan2", "2.7.0")
    assert inductor.unlowerable("2.8", {"aten::atan2"}) is None  # MetalOverrides.atan2 from 2.8.0
    assert inductor.unlowerable("2.14.1", {"aten::cosh_", "aten::add.Tensor"}) == ("aten::cosh_", "cosh", "2.14.0")
    assert inductor.unlowerable("2.6", {"aten::sinh"}) is None  # no Metal back-end mined before 2.7


def test_the_miner_reads_what_the_metal_handler_defines():
    handler = ("class OpsHandler:\n    def sinh(self, x):\n        raise NotImplementedError\n"
               "    def sin(self, x):\n        raise NotImplementedError\n"
               "    def erf(self, x):\n        raise NotImplementedError\n"
               "    def sigmoid(self, x):\n        raise NotImplementedError\n"
               "    def hypot(self, x, y):\n        raise NotImplementedError\n")
    mps = ("class MetalOverrides:\n    def sin(x):\n        return x\n"
           "    @classmethod\n    def _initialize_special_ops(cls):\n        for name in ['erf']:\n            pass\n")
    common = ("class OpDecompositions:\n    def sigmoid(x):\n        return x\n"
              "pointwise_overrides_data = dict(hypot=OverridesData(name='hypot', cpp=None, mps=None))\n")
    assert missing(mps, common, handler) == ["sinh"]


# ---------------------------------------------------------------- complex inputs: the mined TORCH_CHECK refusals
@pytest.mark.parametrize(("body", "torch", "message"), [
    ("x = torch.randn(1, 2, 4, 4, dtype=torch.complex64, device=dev)\ny = F.max_pool2d(x, 2)\n", "2.12",
     "Max pooling for complex is not supported for MPS"),
    ("x = torch.randn(2, 3, dtype=torch.complex64, device=dev)\ny = torch.nansum(x)\n", "2.9",
     "nansum on MPS does not support complex inputs"),
])
def test_a_complex_input_meets_the_kernels_mined_refusal(tmp_path, body, torch, message):
    _doc, got = _run(tmp_path, body, torch, macos="15.6")
    assert got == ("failed", "dtype", "RuntimeError", message, 6, None if torch == "2.12" else "2.13.0")


def test_before_the_mined_release_a_complex_max_pool_stays_unverified(tmp_path):
    """2.9.1's binary has no complex max-pooling message: the CPU's refusal is its own (cpu_refusal), not a pass."""
    doc, got = _run(tmp_path, "x = torch.randn(1, 2, 4, 4, dtype=torch.complex64, device=dev)\n"
                              "y = F.max_pool2d(x, 2)\n", "2.9", macos="15.6")
    assert got[0] == "unverified"
    assert [(u["kind"], u["op"], u["location"]["line"]) for u in doc["unverified"]] == [
        ("cpu_refusal", "aten::max_pool2d", 6)]


def test_a_float_max_pool_is_not_refused(tmp_path):
    doc, got = _run(tmp_path, "x = torch.randn(1, 2, 4, 4, device=dev)\ny = F.max_pool2d(x, 2)\n", "2.12",
                    macos="15.6")
    assert got[0] == "completed", doc["unverified"]
