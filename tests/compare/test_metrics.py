"""Elementwise metrics and stats bounds, on arrays with hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpsready.compare.metrics import SUB_CHUNK, PairAccumulator, compare_arrays, compare_stats
from mpsready.compare.tolerances import Tolerance
from mpsready.record.layout import TensorStats

F32 = Tolerance(1.3e-6, 1e-5, "test")


def test_values_and_both_tolerances():
    a = np.array([1.0, 2.0, 0.0, -4.0], dtype=np.float64)
    b = np.array([1.0, 2.5, 1e-6, -4.0], dtype=np.float64)
    m = compare_arrays(a, b, Tolerance(0.1, 0.3, "t"))
    assert m.max_abs == 0.5
    assert m.max_rel == math.inf  # 1e-6 against an expected 0, as torch reports it
    # 2.5 vs 2.0: 0.5 > 0.3 + 0.1*2 = 0.5? no, equal: passes (fails only when it breaks both)
    assert m.mismatched == 0 and m.passed
    assert m.worst_ratio is None  # computed only for failing elements
    m2 = compare_arrays(a, b, Tolerance(0.1, 0.29, "t"))
    assert m2.mismatched == 1 and not m2.passed
    assert m2.mismatch_share == 0.25
    assert m2.worst_ratio == pytest.approx(0.5 / 0.49)


def test_cosine_exact():
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([1.0, 1.0], dtype=np.float32)
    assert compare_arrays(a, b, F32).cosine == pytest.approx(1 / math.sqrt(2), abs=1e-12)
    assert compare_arrays(np.zeros(3), np.zeros(3), F32).cosine == 1.0
    assert compare_arrays(np.zeros(3), np.ones(3), F32).cosine == 0.0


def test_nan_on_one_side_only_fails_nan_on_both_agrees():
    a = np.array([1.0, np.nan, np.inf, 3.0, -np.inf], dtype=np.float32)
    b = np.array([1.0, np.nan, np.inf, np.nan, np.inf], dtype=np.float32)
    m = compare_arrays(a, b, F32)
    assert (m.nan_a, m.nan_b, m.inf_a, m.inf_b) == (1, 2, 2, 2)
    assert m.one_sided_nonfinite == 2  # 3.0 -> nan, -inf -> +inf
    assert m.mismatched == 2 and not m.passed
    assert m.max_abs == 0.0  # over the elements finite on both sides
    assert m.worst_ratio == math.inf
    same = compare_arrays(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), F32)
    assert same.passed and same.one_sided_nonfinite == 0 and same.nan_a == 1


def test_float32_overflow_in_difference_is_exact_in_float64():
    big = np.finfo(np.float32).max
    m = compare_arrays(np.array([big], np.float32), np.array([-big], np.float32), F32)
    assert m.max_abs == 2 * float(big) and m.one_sided_nonfinite == 0 and m.mismatched == 1


def test_exact_tolerance_for_integers():
    m = compare_arrays(np.array([1, 2, 3], np.float64), np.array([1, 2, 4], np.float64), Tolerance(0, 0, "int"))
    assert m.mismatched == 1 and m.max_abs == 1.0 and m.worst_ratio == math.inf


def test_chunking_gives_the_same_answer():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3 * SUB_CHUNK + 17).astype(np.float32)
    b = a + rng.standard_normal(a.size).astype(np.float32) * 1e-5
    whole = compare_arrays(a, b, F32)
    acc = PairAccumulator(F32, a.size)
    for s in range(0, a.size, 1000):
        acc.update(a[s:s + 1000], b[s:s + 1000])
    parts = acc.result()
    assert parts.max_abs == whole.max_abs and parts.mismatched == whole.mismatched
    assert parts.max_rel == whole.max_rel and parts.worst_ratio == whole.worst_ratio
    d = np.abs(b.astype(np.float64) - a)
    assert whole.mismatched == int((np.abs(b - a) > 1e-5 + 1.3e-6 * np.abs(a)).sum())
    assert whole.max_abs == pytest.approx(d.max(), rel=1e-6)


def test_complex():
    a = np.array([1 + 1j, 2 - 1j], dtype=np.complex128)
    b = np.array([1 + 1j, 2 + 0j], dtype=np.complex128)
    m = compare_arrays(a, b, F32)
    assert m.max_abs == 1.0 and m.mismatched == 1


def _stats(x):
    x = np.asarray(x, dtype=np.float64)
    return TensorStats(x.size, float(x.mean()), float(x.std(ddof=1)), float(x.min()), float(x.max()),
                       float(np.sqrt((x * x).sum())), 0, 0)


def test_stats_bounds_prove_a_difference_and_accept_agreement():
    a = [1.0, -2.0, 3.0, 0.5]
    m = compare_stats(_stats(a), _stats([1.0, -2.0, 3.0, 0.5 + 1e-7]), F32)
    assert m.method == "stats" and m.passed
    assert m.stats_diff["max"]["abs"] == 0.0
    assert m.stats_diff["mean"]["bound"] == 1e-5 + 1.3e-6 * 3.0
    bad = compare_stats(_stats(a), _stats([1.0, -2.0, 3.1, 0.5]), F32)
    assert not bad.passed
    assert bad.stats_diff["max"]["abs"] == pytest.approx(0.1)
    assert bad.worst_ratio == pytest.approx(0.1 / (1e-5 + 1.3e-6 * 3.0), rel=1e-6)


def test_stats_nan_count_difference_fails():
    sa = TensorStats(4, 1.0, 0.5, 0.0, 2.0, 3.0, 0, 0)
    sb = TensorStats(4, 1.0, 0.5, 0.0, 2.0, 3.0, 1, 0)
    m = compare_stats(sa, sb, F32)
    assert not m.passed and m.one_sided_nonfinite == 1


@pytest.mark.parametrize("noise, outliers, zeros", [(1e-7, 5, True), (1e-7, 5, False), (1e-5, 0, False),
                                                     (1e-5, 300, True), (0.0, 3, False)])
def test_fast_paths_agree_with_plain_numpy(noise, outliers, zeros):
    """The shortcuts (skip when max abs <= atol, test only elements above atol, raise the
    max relative error only from candidates) give what a plain elementwise computation gives."""
    rng = np.random.default_rng(7)
    n = 4 * SUB_CHUNK + 123
    a = rng.standard_normal(n).astype(np.float32)
    if zeros:
        a[::997] = 0.0
    b = a + (rng.standard_normal(n) * noise).astype(np.float32)
    idx = rng.choice(n, outliers, replace=False)
    b[idx] += np.float32(0.01)
    m = compare_arrays(a, b, F32)
    d = np.abs(b - a)
    allow = np.float32(1e-5) + np.float32(1.3e-6) * np.abs(a)
    fails = d > allow
    assert m.mismatched == int(fails.sum())
    assert m.max_abs == float(d.max())
    with np.errstate(all="ignore"):
        rel = d / np.abs(a)
    assert m.max_rel == float(np.fmax.reduce(rel))
    assert math.isinf(m.max_rel) == (zeros and noise > 0)
    assert m.worst_ratio == (float((d[fails] / allow[fails]).max()) if fails.any() else None)


def test_error_distribution_as_the_peers_report_it():
    """mean/median/p99 of the absolute and relative error, relative L2, the worst element, the histogram."""
    a = np.array([1.0, 2.0, 4.0, -8.0, 0.0])
    b = np.array([1.0, 2.5, 5.0, -8.0, 0.5])
    m = compare_arrays(a, b, Tolerance(0.0, 0.1, "t"), histogram=True)
    assert m.mean_abs == 0.4
    assert (m.median_abs, m.p99_abs) == (0.5, 1.0)  # sorted 0, 0, .5, .5, 1: the 3rd and the 5th
    assert m.mean_rel == 0.125 and m.rel_undefined == 1  # 0.5 against an expected 0 has no relative error
    assert (m.median_rel, m.p99_rel) == (0.0, 0.25)
    assert m.max_rel == math.inf
    assert m.rel_l2 == pytest.approx(math.sqrt(1.5) / math.sqrt(85.0), rel=1e-15)
    assert (m.worst_index, m.worst_a, m.worst_b) == (2, 4.0, 5.0)
    assert m.quantile_sample is None
    assert m.histogram == [{"lo": 0.0, "hi": 0.0, "count": 2}, {"lo": 0.1, "hi": 1.0, "count": 2},
                           {"lo": 1.0, "hi": 10.0, "count": 1}]
    d = m.to_dict()
    assert d["rel_l2"] == m.rel_l2 and d["max_rel"] == "inf" and d["histogram"][0]["count"] == 2
    assert compare_arrays(a, b, F32).histogram is None  # only on request


def test_worst_index_skips_one_sided_nan_and_counts_across_chunks():
    m = compare_arrays(np.array([1.0, np.nan, 3.0]), np.array([1.0, 5.0, 3.5]), F32)
    assert (m.worst_index, m.worst_a, m.worst_b) == (2, 3.0, 3.5)
    acc = PairAccumulator(F32, 10)
    acc.update(np.zeros(6), np.zeros(6))
    acc.update(np.zeros(4), np.array([0.0, 0.0, 0.25, 0.0]))
    r = acc.result()
    assert (r.worst_index, r.mean_abs, r.rel_l2) == (8, 0.025, math.inf)  # A all zero, B not
    same = compare_arrays(np.ones(3), np.ones(3), F32)
    assert (same.rel_l2, same.median_abs, same.p99_rel, same.worst_index) == (0.0, 0.0, 0.0, 0)


def test_quantiles_of_a_large_tensor_from_every_kth_element(monkeypatch):
    from mpsready.compare import metrics

    monkeypatch.setattr(metrics, "QUANTILE_EXACT", 10)
    a = np.ones(25)
    b = a + np.arange(25) / 1024  # exact in binary
    acc = PairAccumulator(F32, 25)
    for s in range(0, 25, 7):  # chunks that do not line up with the stride of 3
        acc.update(a[s:s + 7], b[s:s + 7])
    m = acc.result()
    assert m.quantile_sample == 9  # elements 0, 3, ..., 24
    assert m.median_abs == 12 / 1024 and m.p99_abs == 24 / 1024
    assert m.mean_abs == 12 / 1024  # sums are over every element, not the sample
    assert m.worst_index == 24
