"""The classes of Mac behaviour found missing on the reports43 tune halves (issue 33, builder h33c): each with a
fixture of our own words, the exact outcome, exception, message and line, and a look-alike that must not fire.

- placement: MPS ``mm``/``addmm`` check their tensors with ATen's ``checkAllSameGPU`` before any placeholder
  ("Tensor for argument #2 'mat2' is on CPU, but expected it to be on GPU (while checking arguments for mm)");
- Inductor before 2.7: ``init_wrapper_code`` asserts "Device mps not supported" before the Scheduler is built;
- size limit: 2.5's tiled bmm refuses a single result matrix over 2**32 elements (macOS 15+);
- linear over an empty feature axis: an abort on macOS 15+ from 2.8, the empty-placeholder refusal otherwise;
- linear with a 1-D weight: the forward runs, the backward aborts (pytorch#187988);
- a factory's sparse ``layout=`` on MPS dispatches to SparseMPS ("Could not run ... 'SparseMPS' backend");
- wrong results: argmax/argmin in float16 on macOS 27 before 2.13 (pytorch#187280), linear with a dimension over
  2**15 before macOS 14.4 (pytorch#116769, #122045), count_nonzero of an empty tensor on 2.5 (pytorch#139400), a
  compiled adaptive max pooling from 2.10 (pytorch#169738, judged: the region completes with the wrong result named).
"""

from __future__ import annotations

import pytest

from .helpers import emulate, write

HEAD = "import torch\nimport torch.nn.functional as F\n\ndev = \"mps\"\n"  # the body starts at line 5


def _run(tmp_path, body, torch, macos="15.5"):
    _, doc, out, _ = emulate(write(tmp_path, HEAD + body), torch=torch, macos=macos)
    ff = doc["first_failure"] or {}
    return doc, (doc["outcome"], ff.get("kind"), ff.get("exception"), ff.get("message"),
                 (ff.get("location") or {}).get("line"))


def _wrong(doc):
    return [(w["id"], w["op"], w["dtype"], w["location"]["line"]) for w in doc["wrong_results"]]


# ---------------------------------------------------------------- placement: checkAllSameGPU of mm / addmm
@pytest.mark.parametrize(("body", "message"), [
    ("a = torch.randn(3, 4, device=dev)\nb = torch.randn(4, 2)\nc = torch.mm(a, b)\n",
     "Tensor for argument #2 'mat2' is on CPU, but expected it to be on GPU (while checking arguments for mm)"),
    ("a = torch.randn(3, 4)\nb = torch.randn(4, 2, device=dev)\nc = a @ b\n",
     "Tensor for argument #1 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for mm)"),
    ("bias = torch.zeros(2)\na = torch.randn(3, 4, device=dev)\nb = torch.randn(4, 2, device=dev)\n"
     "c = torch.addmm(bias, a, b)\n",
     "Tensor for argument #1 'self' is on CPU, but expected it to be on GPU (while checking arguments for "
     "addmm_out_mps_impl)"),
])
def test_mm_and_addmm_name_the_cpu_argument(tmp_path, body, message):
    _doc, got = _run(tmp_path, body, "2.6")
    assert got == ("failed", "placement", "RuntimeError", message, 4 + body.count("\n"))


@pytest.mark.parametrize(("torch", "message"), [
    ("2.3", "Placeholder storage has not been allocated on MPS device!"),
    ("2.6", "Tensor for argument input is on cpu but expected on mps"),  # _mps_linear's own check, 2.4+
])
def test_a_linear_fed_a_cpu_batch_meets_its_own_kernels_refusal(tmp_path, torch, message):
    """Look-alike of mm: linear's MPS kernel has no checkAllSameGPU; from 2.4 it checks its arguments itself."""
    body = "m = torch.nn.Linear(4, 2).to(dev)\ny = m(torch.randn(3, 4))\n"
    _doc, got = _run(tmp_path, body, torch)
    assert got == ("failed", "placement", "RuntimeError", message, 6)


def test_a_linear_with_a_cpu_bias_names_the_bias(tmp_path):
    body = "w = torch.randn(2, 4, device=dev)\ny = F.linear(torch.randn(3, 4, device=dev), w, torch.zeros(2))\n"
    _doc, got = _run(tmp_path, body, "2.13")
    assert got == ("failed", "placement", "RuntimeError", "Tensor for argument bias is on cpu but expected on mps", 6)


def test_mm_of_two_mps_tensors_completes(tmp_path):
    _doc, got = _run(tmp_path, "a = torch.randn(3, 4, device=dev)\nc = a @ torch.randn(4, 2, device=dev)\n", "2.6")
    assert got == ("completed", None, None, None, None)


# ---------------------------------------------------------------- Inductor before 2.7
def test_compile_before_2_7_asserts_device_mps_not_supported(tmp_path):
    body = "f = torch.compile(lambda x: x.sin() + 1)\nx = torch.randn(4, device=dev)\ny = f(x)\n"
    _doc, got = _run(tmp_path, body, "2.4", "14.5")
    assert got == ("failed", "compile", "BackendCompilerFailed",
                   "backend='inductor' raised:\nAssertionError: Device mps not supported", 7)


# ---------------------------------------------------------------- 2.5's tiled bmm
BMM = "q = torch.zeros(1, {m}, 1, dtype=torch.float16, device=dev)\nk = torch.zeros(1, 1, {m}, dtype=torch.float16, " \
      "device=dev)\ns = torch.bmm(q, k)\n"


def test_a_bmm_matrix_over_2_pow_32_elements_is_refused_on_2_5(tmp_path):
    _doc, got = _run(tmp_path, BMM.format(m=65537), "2.5", "15.1")
    assert got == ("failed", "shape", "RuntimeError",
                   "Output size of the matrix multiplication is larger than currently supported by the MPS backend: "
                   "65537,65537, needs to be less than 2**32 elements.File a feature request for this use case "
                   "against the MPS backend at https://github.com/pytorch/pytorch/issues", 7)


def test_a_bmm_matrix_of_2_pow_32_elements_on_macos_14_meets_the_tiling_refusal(tmp_path):
    """Look-alike: before macOS 15 the tiled path itself is refused first (unchanged)."""
    _doc, got = _run(tmp_path, BMM.format(m=65537), "2.5", "14.6")
    assert got == ("failed", "shape", "RuntimeError",
                   "Tiling of batch matmul for larger than 2**32 entries only available from MacOS15 onwards", 7)


# ---------------------------------------------------------------- linear: an empty feature axis, a 1-D weight
EMPTY_FEATURES = "layer = torch.nn.Linear(0, 5).to(dev)\nx = torch.randn(3, 0, device=dev)\ny = layer(x)\nprint(y.shape)\n"
PLACEHOLDER_EMPTY = ("[srcBuf length] > 0 INTERNAL ASSERT FAILED at \"aten/src/ATen/native/mps/OperationUtils.mm\", "
                     "please report a bug to PyTorch. Placeholder tensor is empty!")


@pytest.mark.parametrize(("torch", "macos", "want"), [
    ("2.13", "15.5", ("failed", "shape", "MacCrash",
                      "failed assertion `[MPSNDArray initWithDevice:descriptor:isTextureBacked:] Error: device may not be "
                      "nil'", 7)),
    ("2.13", "14.6", ("failed", "shape", "RuntimeError", PLACEHOLDER_EMPTY, 7)),
    ("2.6", "15.1", ("failed", "shape", "RuntimeError", PLACEHOLDER_EMPTY, 7)),
])
def test_a_linear_over_an_empty_feature_axis(tmp_path, torch, macos, want):
    _doc, got = _run(tmp_path, EMPTY_FEATURES, torch, macos)
    assert got == want


def test_a_linear_over_an_empty_batch_completes(tmp_path):
    """Look-alike: an empty batch (the result is empty too) returns before any kernel."""
    body = "layer = torch.nn.Linear(4, 5).to(dev)\ny = layer(torch.randn(0, 4, device=dev))\nprint(y.shape)\n"
    _doc, got = _run(tmp_path, body, "2.13")
    assert got == ("completed", None, None, None, None)


ONE_D_WEIGHT = """\
x = torch.randn(32, 6, device=dev, requires_grad=True)
w = torch.randn(6, device=dev, requires_grad={grad})
s = F.linear(x, w)
print(s.shape)
s.sum().backward()
"""


def test_the_backward_of_a_linear_with_a_1d_weight_aborts(tmp_path):
    doc, got = _run(tmp_path, ONE_D_WEIGHT.format(grad=True), "2.13")
    assert got == ("failed", "shape", "MacCrash",
                   "error: 'mps.matmul' op contracting dimensions differ 32 & 6 ... MPSGraphExecutable failed assertion "
                   "`original module failed verification'", 9)


def test_a_linear_with_a_1d_weight_without_backward_completes(tmp_path):
    body = "x = torch.randn(32, 6, device=dev)\nw = torch.randn(6, device=dev)\nprint(F.linear(x, w).shape)\n"
    _doc, got = _run(tmp_path, body, "2.13")
    assert got == ("completed", None, None, None, None)


def test_the_backward_of_a_linear_with_a_2d_weight_completes(tmp_path):
    body = ("x = torch.randn(32, 6, device=dev, requires_grad=True)\nm = torch.nn.Linear(6, 1).to(dev)\n"
            "m(x).sum().backward()\n")
    _doc, got = _run(tmp_path, body, "2.13")
    assert got == ("completed", None, None, None, None)


# ---------------------------------------------------------------- a sparse factory on MPS
def test_a_sparse_coo_tensor_made_on_mps_meets_the_sparse_mps_key(tmp_path):
    body = "i = torch.tensor([[0, 1], [1, 0]])\nv = torch.ones(2)\nm = torch.sparse_coo_tensor(i, v, (2, 2), device=dev)\n"
    _doc, got = _run(tmp_path, body, "2.5", "15.1")
    assert got == ("failed", "sparse", "NotImplementedError",
                   "Could not run 'aten::_sparse_coo_tensor_with_dims_and_tensors' with arguments from the 'SparseMPS' "
                   "backend.", 7)


def test_a_dense_tensor_made_from_the_same_values_completes(tmp_path):
    body = "v = torch.ones(2)\nm = torch.zeros(2, 2, device=dev)\nm[0, 1] = v[0]\n"
    _doc, got = _run(tmp_path, body, "2.5", "15.1")
    assert got == ("completed", None, None, None, None)


# ---------------------------------------------------------------- silent wrong results
ARGMAX = "s = torch.randn(8, 100).to(torch.{dtype}).to(dev)\ni = s.argmax(dim=-1)\nprint(i.shape)\n"


@pytest.mark.parametrize(("dtype", "torch", "macos", "named"), [
    ("float16", "2.12", "27.0", True),
    ("float16", "2.13", "27.0", False),  # Metal argmax (PR #187304, cherry-picked to 2.13 by PR #188160)
    ("float16", "2.12", "26.5", False),  # look-alike: macOS 26
    ("float32", "2.12", "27.0", False),  # look-alike: another dtype (not established)
])
def test_float16_argmax_on_macos_27(tmp_path, dtype, torch, macos, named):
    doc, got = _run(tmp_path, ARGMAX.format(dtype=dtype), torch, macos)
    assert got == ("completed", None, None, None, None)
    assert _wrong(doc) == ([("argmax-argmin-mpsgraph-macos27", "aten::argmax", "float16", 6)] if named else [])


WIDE_LINEAR = "w = torch.randn({n}, 1)\nx = torch.randn(2, 8, 1)\ny = F.linear(x.to(dev), w.to(dev))\nprint(y.shape)\n"


@pytest.mark.parametrize(("n", "macos", "named"), [
    (40000, "13.6", True),
    (40000, "14.4", False),  # look-alike: macOS 14.4
    (32768, "13.6", False),  # look-alike: not over 2**15
])
def test_a_linear_wider_than_2_pow_15_before_macos_14_4(tmp_path, n, macos, named):
    doc, got = _run(tmp_path, WIDE_LINEAR.format(n=n), "2.4", macos)
    assert got == ("completed", None, None, None, None)
    assert _wrong(doc) == ([("linear-mpsgraph-dim-over-32768-before-macos14-4", "aten::linear", "float32", 7)]
                           if named else [])


@pytest.mark.parametrize(("shape", "torch", "named"), [("(0, 3)", "2.5", True), ("(2, 3)", "2.5", False),
                                                        ("(0, 3)", "2.6", False)])
def test_count_nonzero_of_an_empty_tensor_on_2_5(tmp_path, shape, torch, named):
    body = f"m = torch.ones{shape}.to(dev) > 0\nn = torch.count_nonzero(m)\nprint(n.shape)\n"
    doc, got = _run(tmp_path, body, torch, "15.1")
    assert got == ("completed", None, None, None, None)
    assert _wrong(doc) == ([("count-nonzero-empty-stale-buffer", "aten::count_nonzero.dim_IntList", "bool", 6)]
                           if named else [])


POOL = "x = torch.randn(2, 4, 9, device=dev)\nf = torch.compile(lambda t: F.adaptive_{kind}_pool1d(t, 3))\ny = f(x)\n"


def test_a_compiled_adaptive_max_pool_completes_with_its_wrong_result_named(tmp_path):
    doc, got = _run(tmp_path, POOL.format(kind="max"), "2.10", "26.1")
    assert got == ("completed", None, None, None, None)
    # named at the pooling call (the lambda's line); the region is judged, so nothing is unverified
    assert (_wrong(doc), doc["unverified"]) == ([("compiled-adaptive-max-pool", "aten::adaptive_max_pool2d", "float32",
                                                  6)], [])


def test_a_compiled_adaptive_avg_pool_stays_unverified(tmp_path):
    """Look-alike: nothing establishes what Inductor's Metal code makes of an average pool: not a pass."""
    doc, got = _run(tmp_path, POOL.format(kind="avg"), "2.10", "26.1")
    assert got == ("unverified", None, None, None, None)
    assert (_wrong(doc), [(u["kind"], u["location"]["line"]) for u in doc["unverified"]]) == ([], [("compile", 7)])


# ---------------------------------------------------------------- a float64 CPU tensor cast onto MPS in a compiled region
ROPE = """\
def angles(pos):
    freq = torch.linspace(0, 1, 4, dtype=torch.float64)
    a = pos.cpu().double()[:, None] * freq[None, :]
    return torch.cos(a){cast}
out = torch.compile(angles)(torch.arange(6, dtype=torch.float32, device=dev))
print(out.dtype)
"""


@pytest.mark.parametrize("torch", ["2.7", "2.13"])
def test_a_compiled_float64_move_onto_mps_fails_in_metal_codegen(tmp_path, torch):
    """Inductor's _to_copy decomposition puts the float64 buffer on MPS before the cast; DTYPE_TO_METAL has no
    float64 in any release (mined)."""
    _doc, got = _run(tmp_path, ROPE.format(cast=".to(dtype=torch.float32, device=pos.device)"), torch)
    assert got == ("failed", "compile", "InductorError", "KeyError: torch.float64", 9)


def test_a_compiled_region_that_casts_on_the_cpu_first_is_not_refused(tmp_path):
    """Look-alike: the cast on the CPU, then a float32 move: no float64 buffer on MPS."""
    _doc, got = _run(tmp_path, ROPE.format(cast=".float().to(pos.device)"), "2.13")
    assert got == ("completed", None, None, None, None)


# ---------------------------------------------------------------- a convolution of an MPS input with CPU parameters
@pytest.mark.parametrize(("setup", "message"), [
    ("conv = torch.nn.Conv2d(3, 4, 3)\n",
     "Input type (MPSFloatType) and weight type (torch.FloatTensor) should be the same"),
    ("conv = torch.nn.Conv2d(3, 4, 3).to(dev).half()\nconv.bias.data = conv.bias.data.cpu()\n",
     "Input type (MPSHalfType) and bias type (torch.HalfTensor) should be the same"),
])
def test_a_convolution_of_an_mps_input_names_the_cpu_parameter(tmp_path, setup, message):
    dtype = "torch.float16" if "half" in setup else "torch.float32"
    body = setup + f"x = torch.randn(1, 3, 8, 8, dtype={dtype}, device=dev)\ny = conv(x)\n"
    _doc, got = _run(tmp_path, body, "2.6", "15.1")
    assert got == ("failed", "placement", "RuntimeError", message, 5 + setup.count("\n") + 1)


def test_a_convolution_of_a_cpu_input_keeps_the_placeholder_refusal(tmp_path):
    """Look-alike: a CPU input with MPS parameters takes a CPU backend, whose check is not modelled (unchanged)."""
    body = "conv = torch.nn.Conv2d(3, 4, 3).to(dev)\ny = conv(torch.randn(1, 3, 8, 8))\n"
    _doc, got = _run(tmp_path, body, "2.6", "15.1")
    assert got == ("failed", "placement", "RuntimeError", "Placeholder storage has not been allocated on MPS device!", 6)
