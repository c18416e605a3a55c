"""Wrong-result advisories grown by class from PyTorch's tracker (issue 33, 33a): each class with a call that is
named and a look-alike that is not, read through AdvisoryIndex (no torch), and the coverage per release."""

from __future__ import annotations

import pytest

from mpsready.ops.advisories import AdvisoryFacts, AdvisoryIndex, coverage


def _hit(torch, op, dtypes=("float32",), shapes=((4,),), args=None, probe=None, compiled=False):
    facts = AdvisoryFacts(dtypes=tuple(dtypes), shapes=tuple(shapes), contiguous=(True,) * len(shapes),
                          args=args or {}, compiled=compiled, probe=probe)
    got = AdvisoryIndex(torch, "15.5").match(op, facts)
    return got.id if got else None


BIG = 1 << 32


@pytest.mark.parametrize(("torch", "op", "shapes", "want"), [
    ("2.13.0", "aten::argmax", ((BIG + 8,),), "large-reductions-213"),
    ("2.13.0", "aten::sum", ((BIG + 8,),), None),  # 2.13's sum fails loudly (PR #194082's own run)
    ("2.14.0", "aten::sum", ((BIG + 8,),), "large-reductions-214"),
    ("2.14.0", "aten::sum", ((BIG - 8,),), None),
    ("2.13.0", "aten::cat", ((1 << 30, 2), (1, 2)), "cat-output-past-2-pow-31"),
    ("2.13.0", "aten::cat", ((1 << 29, 2), (1, 2)), None),
    ("2.12.0", "aten::index_select", ((1 << 31, 2), (4,)), "index-select-past-2-pow-31"),
    ("2.14.0", "aten::index_select", ((1 << 31, 2), (4,)), None),
    ("2.6.0", "aten::linalg_lu_factor_ex", ((2, 256, 256),), "lu-factor-batched-large"),
    ("2.6.0", "aten::linalg_lu_factor_ex", ((256, 256),), None),
    ("2.7.0", "aten::linalg_lu_factor_ex", ((2, 256, 256),), None),
])
def test_size_classes(torch, op, shapes, want):
    assert _hit(torch, op, dtypes=("float32",) * len(shapes), shapes=shapes) == want


@pytest.mark.parametrize(("torch", "op", "args", "want"), [
    ("2.8.0", "aten::avg_pool2d", {"ceil_mode": True}, "avg-pool2d-ceil-mode"),
    ("2.8.0", "aten::avg_pool2d", {"ceil_mode": False}, None),
    ("2.9.0", "aten::avg_pool2d", {"ceil_mode": True}, None),
    ("2.13.0", "aten::_embedding_bag", {"include_last_offset": True}, "embedding-bag-include-last-offset"),
    ("2.13.0", "aten::_embedding_bag", {"include_last_offset": False}, None),
])
def test_argument_classes(torch, op, args, want):
    assert _hit(torch, op, args=args) == want


def test_unique_counts_of_a_large_unsorted_tensor():
    big = ((600_000,),)
    assert _hit("2.12.0", "aten::_unique2", ("int64",), big, {"return_counts": True}) == "unique-counts-large-unsorted"
    assert _hit("2.12.0", "aten::_unique2", ("int64",), ((1000,),), {"return_counts": True}) is None
    assert _hit("2.13.0", "aten::_unique2", ("int64",), big, {"return_counts": True}) is None


def test_nearest_exact_to_a_size_that_does_not_divide_the_input():
    assert _hit("2.13.0", "aten::_upsample_nearest_exact1d", shapes=((1, 1, 20),),
                args={"output_size": [11]}) == "upsample-nearest-exact-nondividing"
    assert _hit("2.13.0", "aten::_upsample_nearest_exact1d", shapes=((1, 1, 20),), args={"output_size": [10]}) is None
    assert _hit("2.14.0", "aten::_upsample_nearest_exact1d", shapes=((1, 1, 20),), args={"output_size": [11]}) is None


@pytest.mark.parametrize(("nonfinite", "want"), [(True, "floor-divide-nonfinite"), (False, None)])
def test_floor_division_of_non_finite_operands(nonfinite, want):
    def probe(key, value):
        return nonfinite if key == "nonfinite" else False
    assert _hit("2.13.0", "aten::floor_divide", shapes=((4,), (4,)), probe=probe) == want
    assert _hit("2.13.0", "aten::div.Tensor_mode", shapes=((4,), (4,)), args={"rounding_mode": "floor"},
                probe=probe) == (want and "div-floor-nonfinite")
    assert _hit("2.14.0", "aten::floor_divide", shapes=((4,), (4,)), probe=probe) is None


def test_the_coverage_per_release():
    cov = coverage(["2.3.0", "2.12.0", "2.13.0", "2.14.0"])
    # round 6 (h33c): + linear over 2**15 before macOS 14.4 (every release), float16 argmax on macOS 27 (< 2.13),
    # a compiled adaptive max pool (2.10+), an empty count_nonzero (2.5 only); h33e: random fills of rank > 4 (< 2.7)
    # and of a strided tensor before macOS 15 (< 2.10)
    # round 11 (h3): + MPSGraph's 2**16 padding limits (ops/pad_limits.py: rank > 4 before 2.14, constant padding
    # before macOS 15.2, replication and reflection backward past 65536 rows or samples)
    assert cov == {"2.3.0": {"advisories": 34, "ops": 91, "conditioned": 32},
                   "2.12.0": {"advisories": 29, "ops": 83, "conditioned": 26},
                   "2.13.0": {"advisories": 30, "ops": 81, "conditioned": 28},
                   "2.14.0": {"advisories": 25, "ops": 64, "conditioned": 24}}


@pytest.mark.parametrize(("torch", "op", "dtype", "args", "nonfinite", "want"), [
    ("2.13.0", "aten::baddbmm", "float32", {"beta": 0}, True, "addmm-beta-zero-nonfinite-input"),
    ("2.13.0", "aten::baddbmm", "float32", {"beta": 0}, False, None),
    ("2.13.0", "aten::baddbmm", "float32", {"beta": 1}, True, None),
    ("2.14.0", "aten::baddbmm", "float32", {"beta": 0}, True, None),
    ("2.14.0", "aten::addmm", "complex64", {"beta": 0}, True, "addmm-beta-zero-nonfinite-input-complex"),
    ("2.14.0", "aten::hypot", "float32", {}, True, "hypot-overflow-nonfinite"),
    ("2.13.0", "aten::hypot", "float32", {}, True, None),
])
def test_non_finite_operands(torch, op, dtype, args, nonfinite, want):
    def probe(key, value):
        return nonfinite if key == "nonfinite" else False
    assert _hit(torch, op, dtypes=(dtype,) * 3, shapes=((1, 2, 2),) * 3, args=args, probe=probe) == want


def test_sort_of_a_transposed_view():
    facts = AdvisoryFacts(dtypes=("float32",), shapes=((2, 2),), contiguous=(False,), args={"dim": 0})
    assert AdvisoryIndex("2.10.0", "15.5").match("aten::sort", facts).id == "sort-noncontiguous"
    assert AdvisoryIndex("2.9.0", "15.5").match("aten::sort", facts) is None
    plain = AdvisoryFacts(dtypes=("float32",), shapes=((2, 2),), contiguous=(True,), args={"dim": 0})
    assert AdvisoryIndex("2.10.0", "15.5").match("aten::sort", plain) is None
