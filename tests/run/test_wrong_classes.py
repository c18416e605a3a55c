"""Issue 33, h3: silent wrong results by class (data/curated/mps_wrong_classes.yaml), each with the releases its
evidence was read to hold in (data/mined/mps_wrong_classes.json), named only where the call's values meet the
class's condition: every class has a look-alike clean call that names nothing."""

from __future__ import annotations

import torch

from mpsready.emulate import value_probes
from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex
from mpsready.ops.wrong_classes import advisories, mined

from .helpers import emulate, write

_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int64: "int64",
          torch.complex64: "complex64", torch.uint8: "uint8"}


def _match(release, macos, op, *tensors, args=None, compiled=False):
    """The id of the advisory ``op`` on these tensors matches on ``release``/``macos`` (None: none)."""
    ins = list(tensors)
    argv = dict(args or {})

    def probe(key, want):
        return bool(value_probes.probe(key, want, ins, argv, op))
    facts = AdvisoryFacts(dtypes=tuple(_NAMES[t.dtype] for t in ins), shapes=tuple(tuple(t.shape) for t in ins),
                          contiguous=tuple(t.is_contiguous() for t in ins), args=argv, compiled=compiled, probe=probe)
    hit = AdvisoryIndex(release, macos).match(op, facts)
    return None if hit is None else hit.id


NAN = torch.tensor([float("nan"), 1.0, 2.0])
CLEAN = torch.tensor([0.5, 1.0, 2.0])


def test_the_mined_releases_of_every_class():
    got = {k: (v["releases"][0], v["releases"][-1], len(v["releases"])) for k, v in mined()["classes"].items()}
    assert got == {
        "amp-unscale-half-grads-zeroed": ("2.8.0", "2.12.1", 7),
        "compiled-expm1-decomposed": ("2.7.0", "2.14.1", 12),
        "compiled-log1p-decomposed": ("2.7.0", "2.14.1", 12),
        "complex-cholesky-unguarded": ("2.7.0", "2.13.0", 10),
        "complex-lstsq-batched": ("2.14.0", "2.14.1", 2),
        "layer-norm-variance-clamped": ("2.8.0", "2.14.1", 10),
        "int64-amax-partial-simdgroup": ("2.13.0", "2.13.0", 1),
        "nan-argmax-argmin-ignored": ("2.2.2", "2.12.1", 17),
        "nan-clamp-bound-replaces": ("2.2.2", "2.2.2", 1),
        "nan-max-min-reduction-ignored": ("2.2.2", "2.4.1", 5),
        "nan-max-min-reduction-ignored-before-macos15": ("2.5.0", "2.12.1", 12),
        "nan-minimum-maximum-dropped": ("2.2.2", "2.6.0", 8)}
    # the layer norm kernel's lookup name is read in each release's binary: absent from 2.7.1's, present in 2.8.0's
    ev = mined()["classes"]["layer-norm-variance-clamped"]["evidence"]
    assert [e["holds"] for e in ev["2.7.1"]] == [True, True, False]
    assert [e["holds"] for e in ev["2.8.0"]] == [True, True, True]
    # every class is an advisory with its family, its span and the first fixed release its bound gives
    by_id = {a.id: a for a in advisories()}
    assert len(by_id) == 12
    assert (by_id["nan-clamp-bound-replaces"].torch, by_id["nan-clamp-bound-replaces"].fixed_in,
            by_id["nan-clamp-bound-replaces"].family) == (">=2.2.2,<=2.2.2", "2.3", "nan_propagation")


def test_nan_propagation_classes_name_a_nan_and_never_a_clean_call():
    assert _match("2.2.2", "14.3", "aten::clamp", NAN, args={"min": -100, "max": 100}) == "nan-clamp-bound-replaces"
    assert _match("2.2.2", "14.3", "aten::clamp", CLEAN, args={"min": -100, "max": 100}) is None
    assert _match("2.3.0", "14.3", "aten::clamp", NAN, args={"min": -100, "max": 100}) is None  # fixed in 2.3
    assert _match("2.5.1", "15.2", "aten::minimum", NAN, CLEAN) == "nan-minimum-maximum-dropped"
    assert _match("2.5.1", "15.2", "aten::minimum", CLEAN, CLEAN) is None
    assert _match("2.7.0", "15.2", "aten::minimum", NAN, CLEAN) is None  # fixed in 2.7
    assert _match("2.4.1", "15.0", "aten::max", NAN) == "nan-max-min-reduction-ignored"
    assert _match("2.5.1", "14.5", "aten::max", NAN) == "nan-max-min-reduction-ignored-before-macos15"
    assert _match("2.5.1", "15.0", "aten::max", NAN) is None  # the fix is taken on macOS 15+
    assert _match("2.5.1", "14.5", "aten::max", CLEAN) is None
    assert _match("2.12.1", "26.5", "aten::argmax", NAN) == "nan-argmax-argmin-ignored"
    # 2.13's binary carries the Metal arg reductions (argmax_reduction_outer_*): not the MPSGraph path reported
    assert _match("2.13.0", "26.5", "aten::argmax", NAN) is None
    assert _match("2.13.0", "14.5", "aten::max", NAN) is None  # likewise its max_reduction_* kernels
    # an integer tensor holds no NaN: the class names floating dtypes only
    assert _match("2.2.2", "14.3", "aten::clamp", torch.tensor([1, 2]), args={"min": 0}) is None


def test_layer_norm_of_a_row_whose_variance_the_kernel_clamps():
    tiny = torch.tensor([[-9e-4, -9e-4, 9e-4, 9e-4]])  # variance 8.1e-7: below 1e-6, set to 0 by the kernel
    wide = torch.tensor([[-0.9, -0.9, 0.9, 0.9]])
    args = {"normalized_shape": [4], "eps": 1e-12}
    assert _match("2.13.0", "26.5", "aten::native_layer_norm", tiny, args=args) == "layer-norm-variance-clamped"
    assert _match("2.13.0", "26.5", "aten::native_layer_norm", wide, args=args) is None
    # against eps = 1e-5 a variance of 8.1e-7 moves the result by 4 %: still named; 1e-7 moves it by 0.5 %: not
    assert _match("2.13.0", "26.5", "aten::native_layer_norm", tiny, args={"normalized_shape": [4]}) == \
        "layer-norm-variance-clamped"
    flat = torch.tensor([[-3.1e-4, -3.1e-4, 3.1e-4, 3.1e-4]])  # variance 9.6e-8
    assert _match("2.13.0", "26.5", "aten::native_layer_norm", flat, args={"normalized_shape": [4], "eps": 1e-5}) \
        is None
    # a constant row (variance 0) is right on MPS too; 2.7.1 ships no Metal layer norm kernel
    assert _match("2.13.0", "26.5", "aten::native_layer_norm", torch.ones(1, 4), args=args) is None
    assert _match("2.7.1", "15.4", "aten::native_layer_norm", tiny, args=args) is None


def test_compiled_expm1_and_log1p_lose_the_sign_of_zero_only_when_compiled():
    negzero = torch.tensor([-0.0, 1.0])
    assert _match("2.13.0", "26.5", "aten::expm1", negzero, compiled=True) == "compiled-expm1-decomposed"
    assert _match("2.13.0", "26.5", "aten::log1p", torch.tensor([1e-8, 0.5]), compiled=True) == \
        "compiled-log1p-decomposed"
    assert _match("2.13.0", "26.5", "aten::expm1", negzero) is None  # eager: MPS's own expm1 kernel
    assert _match("2.13.0", "26.5", "aten::expm1", torch.tensor([0.0, 1.0, -0.5]), compiled=True) is None
    assert _match("2.6.0", "15.2", "aten::expm1", negzero, compiled=True) is None  # no Metal back-end before 2.7


def test_complex_linear_algebra_and_half_gradient_unscale():
    a = torch.randn(2, 4, 4, dtype=torch.complex64)
    assert _match("2.13.0", "26.5", "aten::linalg_cholesky_ex", a) == "complex-cholesky-unguarded"
    assert _match("2.13.0", "26.5", "aten::linalg_cholesky_ex", a.real.contiguous()) is None
    assert _match("2.14.0", "26.5", "aten::linalg_cholesky_ex", a) is None
    assert _match("2.14.0", "26.6", "aten::linalg_lstsq", a, a) == "complex-lstsq-batched"
    assert _match("2.14.0", "26.6", "aten::linalg_lstsq", a.real.contiguous(), a.real.contiguous()) is None
    grads = torch.ones(3, dtype=torch.bfloat16)
    op = "aten::_amp_foreach_non_finite_check_and_unscale_"
    assert _match("2.11.0", "26.4", op, grads, torch.zeros(1), torch.ones(1)) == "amp-unscale-half-grads-zeroed"
    assert _match("2.11.0", "26.4", op, grads.float(), torch.zeros(1), torch.ones(1)) is None
    assert _match("2.13.0", "26.4", op, grads, torch.zeros(1), torch.ones(1)) is None


def test_a_probe_never_reads_what_it_cannot():
    assert value_probes.holds_nan(True, [torch.empty(0), torch.empty(2, device="meta")]) is False
    assert value_probes.row_variance_clamped(1e-6, [torch.ones(3, 4)], {"normalized_shape": [5]}) is False
    assert value_probes.signed_zero_or_tiny(1e-6, [torch.tensor([1, 0])]) is False
    assert value_probes.probe("masked_row", True, [], {}) is None


def _wrong(doc):
    return [(w["id"], w["op"], w["location"]["line"], w["calls"]) for w in doc["wrong_results"]]


def test_the_emulated_mac_names_a_nan_clamp_and_not_its_clean_twin(tmp_path):
    script = write(tmp_path, """\
import torch

t = torch.tensor([float("nan"), 1.0, 2.0], device="mps")
clean = torch.tensor([0.5, 1.0, 2.0], device="mps")
a = torch.clamp(clean, min=-1, max=1)
b = torch.clamp(t, min=-100, max=100)
m = torch.minimum(clean, clean)
print(a.cpu(), b.cpu(), m.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.2", macos="14.3")
    assert doc["outcome"] == "completed"
    assert _wrong(doc) == [("nan-clamp-bound-replaces", "aten::clamp", 6, 1)]
    _, doc, _, _ = emulate(script, torch="2.3", macos="14.3")
    assert doc["wrong_results"] == []


def test_the_emulated_mac_names_a_tiny_variance_layer_norm_and_a_compiled_expm1(tmp_path):
    script = write(tmp_path, """\
import torch
import torch.nn.functional as F

x = torch.tensor([[-9e-4, -9e-4, 9e-4, 9e-4], [5e-4, -5e-4, 5e-4, -5e-4]], device="mps")
ok = F.layer_norm(x * 1000, (4,), eps=1e-12)
bad = F.layer_norm(x, (4,), eps=1e-12)
f = torch.compile(lambda v: torch.reciprocal(torch.expm1(v)))
y = f(torch.tensor([0.5, 1.0], device="mps"))
z = f(torch.tensor([-0.0, 1.0], device="mps"))
print(ok.cpu(), bad.cpu(), y.cpu(), z.cpu())
""")
    _, doc, _, _ = emulate(script, torch="2.13", macos="26.5")
    assert doc["outcome"] == "completed"
    # the compiled expm1 is located at the line of the compiled function's own call of it (the lambda, line 7),
    # and only once: the first compiled call (0.5, 1.0) holds no negative zero
    assert _wrong(doc) == [("layer-norm-variance-clamped", "aten::native_layer_norm", 6, 1),
                           ("compiled-expm1-decomposed", "aten::expm1", 7, 1)]


def test_a_saturating_integer_sum_is_named_only_past_its_dtype():
    x = torch.tensor([[100, 200, 1], [5, 3, 6]], dtype=torch.uint8)
    op = "aten::sum.default"
    assert _match("2.11.0", "26.4", op, x, args={"dtype": torch.uint8}) == "sum-small-int-saturates"
    assert _match("2.11.0", "26.4", op, x[:, 2:], args={"dtype": torch.uint8}) is None  # 7 fits in uint8
    assert value_probes.int_sum_overflows(True, [x], {"dtype": torch.uint8, "dim": [0]}) is False  # 105, 203, 7
    assert value_probes.int_sum_overflows(True, [x], {"dtype": torch.uint8, "dim": [1]}) is True  # 301, 14
    assert value_probes.int_sum_overflows(True, [x], {"dtype": torch.int8, "dim": [0]}) is True  # 203 > 127
    assert value_probes.int_sum_overflows(True, [x[1:]], {"dtype": torch.int8, "dim": [1]}) is False
    assert value_probes.int_sum_overflows(True, [x.float()], {"dtype": torch.uint8}) is False


def test_int64_amax_of_a_negative_slice_with_a_partial_simd_group_on_2_13():
    neg = -torch.arange(1, 34)  # 33 values, all negative: the partial group's padding (0) wins
    assert _match("2.13.0", "26.4", "aten::amax", neg, args={"dim": []}) == "int64-amax-partial-simdgroup"
    assert _match("2.13.0", "26.4", "aten::amax", -torch.arange(1, 33), args={"dim": []}) is None  # 32: whole
    assert _match("2.13.0", "26.4", "aten::amax", torch.arange(-16, 17), args={"dim": []}) is None  # holds 0
    assert _match("2.13.0", "26.4", "aten::amin", torch.arange(1, 34), args={"dim": [0]}) == \
        "int64-amax-partial-simdgroup"
    assert _match("2.12.1", "26.4", "aten::amax", neg, args={"dim": []}) is None  # MPSGraph's amax
    assert _match("2.14.0", "26.4", "aten::amax", neg, args={"dim": []}) is None
    rows = torch.stack([torch.arange(1, 34), -torch.arange(1, 34)])  # the second row is all negative
    assert _match("2.13.0", "26.4", "aten::amax", rows, args={"dim": [1]}) == "int64-amax-partial-simdgroup"
    assert _match("2.13.0", "26.4", "aten::amax", rows, args={"dim": [0]}) is None  # 33 slices of 2, each mixed
