"""Per-tensor metrics of one pair: elementwise on raw tensors, or from statistics only.

Conventions (docs/compare.md):

* ``expected`` is the baseline side (record A, or the reference C); ``actual`` the other.
* ``max_abs`` = max |actual - expected| over elements finite on both sides.
* ``max_rel`` = max |actual - expected| / |expected|, as ``torch.testing.assert_close``
  reports it (torch/testing/_comparison.py, PyTorch 2.13.0): ``inf`` where a non-zero
  difference meets ``expected == 0``; elements equal to 0 on both sides are left out.
* an element is *mismatched* when ``|actual - expected| > atol + rtol * |expected|``
  (breaks both tolerances; ``torch.isclose``), or when it is NaN/Inf on one side only
  (NaN on both sides, or the same infinity, counts as equal: ``equal_nan=True``).
* ``worst_ratio`` = max |actual - expected| / (atol + rtol * |expected|): the worst
  element's error in units of what the tolerance allows. Computed only where an element
  breaks the tolerance (so it is exact, and > 1, for every failing tensor, and ``None``
  for a passing one: computing it everywhere would cost a division per element).
* ``cosine`` = <a, b> / (|a| |b|) over elements finite on both sides, accumulated in
  float64 over chunks (within a chunk, in the pair's compute dtype: float32 pairs resolve
  cosines to about 1e-7); 1.0 when both are all zero, 0.0 when exactly one is.
* the error distribution, as Polygraphy (``polygraphy run --check-error-stat``) and msprobe
  (``MaxAbsErr``, ``MeanRelativeErr``, ``RelativeL2``...) report it: ``mean_abs``, ``median_abs``,
  ``p99_abs`` of |actual - expected|; ``mean_rel``, ``median_rel``, ``p99_rel`` of
  |actual - expected| / |expected| over elements with ``expected != 0`` (``rel_undefined`` counts the
  others; ``max_rel`` still counts them as ``inf``); ``rel_l2`` = ||actual - expected|| / ||expected||
  (``inf`` when ``expected`` is all zero and ``actual`` is not); ``worst_index``: the flat index of the
  element with the largest absolute error, with its two values ``worst_a`` and ``worst_b``. All over
  elements finite on both sides. Quantiles are an element of the data at that rank (inverted CDF, no
  interpolation), exact up to :data:`QUANTILE_EXACT` elements; above, computed from every k-th element
  (``quantile_sample`` gives the sample size, ``None`` when exact). ``histogram`` (on request): counts of
  |actual - expected| per decade, from the same elements as the quantiles.

Stats-only comparisons (when a record holds no raw tensors) check *necessary* conditions:
if every element met ``|b - a| <= atol + rtol*|a|``, then with ``M = max|a|`` and
``n`` elements, ``|Δmean| <= atol + rtol*M``, ``|Δmin|, |Δmax| <= atol + rtol*M``,
``|Δl2| <= sqrt(n)*atol + rtol*l2(a)`` (triangle inequality) and
``|Δstd| <= c*(atol + rtol*l2(a)/sqrt(n))`` with ``c = sqrt(n/(n-1))`` covering the
unbiased std. Stats outside these bounds prove a mismatch; stats inside them are only
consistent with agreement, which is weaker evidence and is labelled so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from mpsready.compare.tolerances import Tolerance

# Elements kept for the median, p99 and histogram: exact up to this many elements, above it every k-th element
# (about this many). The selection is the fixed cost per tensor: about 0.5 ms over 2**14 elements on the build
# machine, 2 ms over 2**16 and 10 ms over 2**20 (more than streaming a 1 Mi-element tensor itself).
QUANTILE_EXACT = 1 << 14
SUB_CHUNK = 65_536  # elements per compute block: two float32 blocks and three temporaries stay in L2 cache
STATS = ("mean", "std", "min", "max", "l2")


@dataclass
class PairMetrics:
    """The outcome of comparing one pair of tensors.

    ``method``: ``"raw"`` (elementwise on raw tensors), ``"checksum"`` (equal sha256 of the
    bytes, so identical without reading them) or ``"stats"`` (statistics only, weaker).
    """

    method: str
    numel: int
    passed: bool
    max_abs: float | None = None
    max_rel: float | None = None
    cosine: float | None = None
    mismatched: int | None = None  # raw method only
    worst_ratio: float | None = None
    nan_a: int = 0
    inf_a: int = 0
    nan_b: int = 0
    inf_b: int = 0
    one_sided_nonfinite: int = 0
    stats_diff: dict[str, dict[str, float | None]] = field(default_factory=dict)  # stats method only
    # the error distribution (raw and checksum methods; module docstring)
    mean_abs: float | None = None
    median_abs: float | None = None
    p99_abs: float | None = None
    mean_rel: float | None = None
    median_rel: float | None = None
    p99_rel: float | None = None
    rel_undefined: int | None = None
    rel_l2: float | None = None
    worst_index: int | None = None
    worst_a: float | None = None
    worst_b: float | None = None
    quantile_sample: int | None = None
    histogram: list[dict[str, Any]] | None = None

    @property
    def mismatch_share(self) -> float | None:
        if self.mismatched is None:
            return None
        return self.mismatched / self.numel if self.numel else 0.0

    @property
    def error(self) -> float | None:
        """The error measure of the three-way judgement: ``max_abs`` (raw, checksum), or
        for stats-only comparisons the worst statistic's difference in units of its bound."""
        return self.max_abs if self.method in ("raw", "checksum") else self.worst_ratio

    @property
    def identical(self) -> bool:
        return self.method == "checksum" or (self.method == "raw" and self.max_abs == 0
                                            and self.one_sided_nonfinite == 0)

    def to_dict(self) -> dict[str, Any]:
        d = {k: jsonable(v) for k, v in self.__dict__.items() if k not in ("stats_diff", "histogram")}
        if self.histogram is not None:
            d["histogram"] = [{k: jsonable(v) for k, v in b.items()} for b in self.histogram]
        d["mismatch_share"] = jsonable(self.mismatch_share)
        d["identical"] = self.identical
        if self.stats_diff:
            d["stats_diff"] = {k: {kk: jsonable(vv) for kk, vv in v.items()} for k, v in self.stats_diff.items()}
        return d


def jsonable(v: Any) -> Any:
    """JSON has no inf/nan: write them as strings "inf", "-inf", "nan"."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


class PairAccumulator:
    """Accumulates :class:`PairMetrics` over aligned chunks of ``expected`` and ``actual``.

    Feed 1-D arrays of one compute dtype (float32, float64 or complex128) with
    :meth:`update`; chunks may be any size (they are cut into :data:`SUB_CHUNK` blocks).
    Memory: three temporaries of ``SUB_CHUNK`` elements.
    """

    def __init__(self, tol: Tolerance, numel: int, histogram: bool = False):
        self.tol = tol
        self.numel = numel
        self.histogram = histogram
        self.sum_abs = self.sum_sq = self.sum_rel = 0.0
        self.n_finite = self.n_rel = 0
        self.pos = 0  # flat index of the next element fed
        self.worst_index: int | None = None
        self.worst_a: float | None = None
        self.worst_b: float | None = None
        self.stride = max(1, -(-numel // QUANTILE_EXACT))  # keep every stride-th element for the quantiles
        self._samples_abs: list[np.ndarray] = []
        self._samples_rel: list[np.ndarray] = []
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.worst = 0.0
        self.mismatched = 0
        self.ab = self.aa = self.bb = 0.0
        self.nan_a = self.inf_a = self.nan_b = self.inf_b = 0
        self.one_sided = 0
        self._bufs: dict[np.dtype, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._bool: np.ndarray | None = None

    def _tmp(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if dtype not in self._bufs:
            size = max(1, min(SUB_CHUNK, self.numel))  # small tensors: small buffers
            self._bufs[dtype] = tuple(np.empty(size, dtype=dtype) for _ in range(3))  # type: ignore[assignment]
        return self._bufs[dtype]

    def update(self, expected: np.ndarray, actual: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            if np.iscomplexobj(expected) or np.iscomplexobj(actual):
                self._complex(expected.astype(np.complex128), actual.astype(np.complex128))
                return
            for s in range(0, expected.size, SUB_CHUNK):
                self._block(expected[s:s + SUB_CHUNK], actual[s:s + SUB_CHUNK], allow_slow=True)
                self.pos += min(SUB_CHUNK, expected.size - s)

    def _distribution(self, a: np.ndarray, b: np.ndarray, d: np.ndarray, t: np.ndarray, r: np.ndarray, m: float,
                      where: np.ndarray | None) -> None:
        """Sums, the worst element and the quantile sample of one block (``d`` = |b - a|, ``t`` = |a| filled
        here, ``r`` scratch); ``where`` maps block positions to flat indices (None: contiguous from pos)."""
        n = a.size
        self.n_finite += n
        np.abs(a, out=t)
        if m > 0.0:
            self.sum_abs += float(d.sum())
            self.sum_sq += float(np.dot(d, d))
            if m > self.max_abs or self.worst_index is None:
                i = int(np.argmax(d))
                self.worst_index = self.pos + i if where is None else int(where[i])
                self.worst_a, self.worst_b = _num(a[i]), _num(b[i])
            np.divide(d, t, out=r)  # 0/0 -> nan, x/0 -> inf (as torch reports max_rel)
            total = float(r.sum())
            if math.isfinite(total):  # the usual block: no expected zero, every element has a relative error
                self.sum_rel += total
                self.n_rel += n
                self.max_rel = max(self.max_rel, float(r.max()))
            else:
                defined = t > 0
                self.n_rel += int(np.count_nonzero(defined))
                self.sum_rel += float(r[defined].sum())
                self.max_rel = max(self.max_rel, float(np.fmax.reduce(r)))
        else:
            self.n_rel += int(np.count_nonzero(t))
            if self.worst_index is None:
                self.worst_index = self.pos if where is None else int(where[0])
                self.worst_a, self.worst_b = _num(a[0]), _num(b[0])
        start = (-self.pos) % self.stride if where is None else 0  # every stride-th element of the tensor
        sel = slice(start, None, self.stride)
        self._samples_abs.append(d[sel].copy())  # the buffers are reused: keep copies
        self._samples_rel.append(t[sel].copy())  # |a| of the same elements: relative errors at the end

    def _block(self, a: np.ndarray, b: np.ndarray, allow_slow: bool, where: np.ndarray | None = None) -> None:
        n = a.size
        if n == 0:
            return
        d_buf, t_buf, r_buf = self._tmp(a.dtype)
        d, t, r = d_buf[:n], t_buf[:n], r_buf[:n]
        np.subtract(b, a, out=d)
        np.abs(d, out=d)
        m = float(d.max())
        if not math.isfinite(m) and allow_slow:
            self._nonfinite(a, b)
            return
        self._distribution(a, b, d, t, r, m, where)
        self.max_abs = max(self.max_abs, m)
        self.ab += float(np.dot(a, b))
        self.aa += float(np.dot(a, a))
        self.bb += float(np.dot(b, b))
        if m == 0.0:
            return
        rtol, atol = self.tol.rtol, self.tol.atol
        if rtol == 0.0 and atol == 0.0:  # exact comparison (integer dtypes, or asked for)
            self.worst = math.inf
            self.mismatched += int(np.count_nonzero(d))
            return
        if m <= atol:  # no element can break atol + rtol*|a| >= atol: skip the tolerance pass
            return
        # Only elements with d > atol can fail (the allowance is >= atol). When they are few,
        # test just those; otherwise the whole block.
        cand = self._mask(n)
        np.greater(d, atol, out=cand)
        ncand = int(np.count_nonzero(cand))
        if ncand * 8 < n:
            dd, allow = d[cand], t[cand]
            np.multiply(allow, rtol, out=allow)
            np.add(allow, atol, out=allow)
            nfail = int(np.count_nonzero(dd > allow))
            if nfail:
                self.mismatched += nfail
                self.worst = max(self.worst, float(np.fmax.reduce(dd / allow)))
            return
        np.multiply(t, rtol, out=t)
        np.add(t, atol, out=t)
        fails = self._mask(n)
        np.greater(d, t, out=fails)
        nfail = int(np.count_nonzero(fails))
        if nfail:  # the ratio is computed only where it exceeds 1, so it is exact whenever it matters
            self.mismatched += nfail
            np.divide(d, t, out=r)
            self.worst = max(self.worst, float(np.fmax.reduce(r)))

    def _mask(self, n: int) -> np.ndarray:
        if self._bool is None or self._bool.size < n:
            self._bool = np.empty(max(n, min(SUB_CHUNK, self.numel)), dtype=bool)
        return self._bool[:n]

    def _nonfinite(self, a: np.ndarray, b: np.ndarray) -> None:
        fa, fb = np.isfinite(a), np.isfinite(b)
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        self.nan_a += int(nan_a.sum())
        self.nan_b += int(nan_b.sum())
        self.inf_a += int(np.isinf(a).sum())
        self.inf_b += int(np.isinf(b).sum())
        both = fa & fb
        same_nonfinite = ~fa & ~fb & ((nan_a & nan_b) | (a == b))
        one_sided = int(np.count_nonzero(~both & ~same_nonfinite))
        self.one_sided += one_sided
        self.mismatched += one_sided
        if one_sided:
            self.worst = math.inf
        # finite part in float64, where a difference of two finite float32 values cannot overflow
        self._block(a[both].astype(np.float64), b[both].astype(np.float64), allow_slow=False,
                    where=self.pos + np.flatnonzero(both))

    def _complex(self, a: np.ndarray, b: np.ndarray) -> None:
        fa, fb = np.isfinite(a), np.isfinite(b)
        both = fa & fb
        self.nan_a += int(np.isnan(a).sum())
        self.nan_b += int(np.isnan(b).sum())
        self.inf_a += int(np.isinf(a).sum())
        self.inf_b += int(np.isinf(b).sum())
        one_sided = int(np.count_nonzero(fa != fb))
        self.one_sided += one_sided
        self.mismatched += one_sided
        where = self.pos + np.flatnonzero(both)
        a, b = a[both], b[both]
        d = np.abs(b - a)
        absa = np.abs(a)
        if d.size:
            self._distribution(a, b, d, np.empty(d.size), np.empty(d.size), float(d.max()), where)
            self.max_abs = max(self.max_abs, float(d.max()))
            allow = self.tol.atol + self.tol.rtol * absa
            ratio = np.where(d == 0, 0.0, d / allow)
            self.worst = max(self.worst, float(ratio.max()))
            self.mismatched += int(np.count_nonzero(ratio > 1.0))
        self.ab += float(abs(np.vdot(a, b)))
        self.aa += float(np.vdot(a, a).real)
        self.bb += float(np.vdot(b, b).real)
        self.pos += both.size

    def result(self) -> PairMetrics:
        if self.aa == 0.0 and self.bb == 0.0:
            cosine = 1.0
        elif self.aa == 0.0 or self.bb == 0.0:
            cosine = 0.0
        elif self.max_abs == 0.0:
            cosine = 1.0  # identical finite parts: avoid 1 - 1e-16 from rounding
        else:
            cosine = max(-1.0, min(1.0, self.ab / math.sqrt(self.aa * self.bb)))
        sa = np.concatenate(self._samples_abs).astype(np.float64) if self._samples_abs else np.zeros(0)
        st = np.concatenate(self._samples_rel).astype(np.float64) if self._samples_rel else np.zeros(0)
        defined = st > 0
        sr = sa[defined] / st[defined]
        qa: tuple[float | None, float | None]
        qr: tuple[float | None, float | None]
        if self.max_abs == 0.0:  # no difference anywhere (finite elements): nothing to select
            qa = (0.0, 0.0) if sa.size else (None, None)
            qr = (0.0, 0.0) if sr.size else (None, None)
        else:
            qa, qr = _quantiles(sa), _quantiles(sr)
        a_norm = math.sqrt(self.aa)
        rel_l2 = (math.sqrt(self.sum_sq) / a_norm if a_norm else (0.0 if self.sum_sq == 0 else math.inf))
        return PairMetrics(
            method="raw", numel=self.numel, passed=self.mismatched == 0, max_abs=self.max_abs,
            max_rel=self.max_rel, cosine=cosine, mismatched=self.mismatched, worst_ratio=self.worst if self.mismatched else None,
            nan_a=self.nan_a, inf_a=self.inf_a, nan_b=self.nan_b, inf_b=self.inf_b,
            one_sided_nonfinite=self.one_sided,
            mean_abs=self.sum_abs / self.n_finite if self.n_finite else None,
            median_abs=qa[0], p99_abs=qa[1],
            mean_rel=self.sum_rel / self.n_rel if self.n_rel else None,
            median_rel=qr[0], p99_rel=qr[1],
            rel_undefined=self.n_finite - self.n_rel, rel_l2=rel_l2 if self.n_finite else None,
            worst_index=self.worst_index, worst_a=self.worst_a, worst_b=self.worst_b,
            quantile_sample=None if self.stride == 1 else int(sa.size),
            histogram=decade_histogram(sa) if self.histogram else None,
        )


def _num(v: Any) -> float | None:
    """An element's value for the report; ``None`` for a complex one (its real part alone would mislead)."""
    return None if np.iscomplexobj(v) else float(v)


def _quantiles(x: np.ndarray) -> tuple[float | None, float | None]:
    """The median and the 99th percentile of ``x``, each an element at its rank (inverted CDF: the smallest value
    with at least that share of the data at or below it), so a quantile is always a value of the data, also
    among infinities. One selection for both."""
    if x.size == 0:
        return None, None
    q = np.quantile(x, [0.5, 0.99], method="inverted_cdf")
    return float(q[0]), float(q[1])


def decade_histogram(x: np.ndarray) -> list[dict[str, Any]]:
    """Counts of ``x`` (absolute errors) per decade ``[10^k, 10^(k+1))``, exact zeros first (``lo = hi = 0``)."""
    out: list[dict[str, Any]] = []
    zeros = int(np.count_nonzero(x == 0))
    if zeros:
        out.append({"lo": 0.0, "hi": 0.0, "count": zeros})
    pos = x[x > 0]
    if pos.size:
        with np.errstate(divide="ignore"):
            exps = np.floor(np.log10(pos)).astype(np.int64)
        lo, hi = int(exps.min()), int(exps.max())
        counts = np.bincount(exps - lo, minlength=hi - lo + 1)
        out += [{"lo": 10.0 ** (lo + i), "hi": 10.0 ** (lo + i + 1), "count": int(c)} for i, c in enumerate(counts)]
    return out


def compare_arrays(expected: np.ndarray, actual: np.ndarray, tol: Tolerance, histogram: bool = False) -> PairMetrics:
    """Compare two whole arrays of the same number of elements (flattened)."""
    acc = PairAccumulator(tol, expected.size, histogram)
    acc.update(np.ascontiguousarray(expected).reshape(-1), np.ascontiguousarray(actual).reshape(-1))
    return acc.result()


def compare_chunks(chunks: Iterable[tuple[np.ndarray, np.ndarray]], numel: int, tol: Tolerance,
                   histogram: bool = False) -> PairMetrics:
    acc = PairAccumulator(tol, numel, histogram)
    for a, b in chunks:
        acc.update(a, b)
    return acc.result()


def checksum_identical(numel: int, nan: int, inf: int) -> PairMetrics:
    """Equal sha256 of equal shape and dtype: identical bytes, so max abs error 0."""
    return PairMetrics(method="checksum", numel=numel, passed=True, max_abs=0.0, max_rel=0.0, cosine=1.0,
                       mismatched=0, worst_ratio=None, nan_a=nan, inf_a=inf, nan_b=nan, inf_b=inf,
                       mean_abs=0.0, median_abs=0.0, p99_abs=0.0, mean_rel=0.0, median_rel=0.0, p99_rel=0.0,
                       rel_l2=0.0)


def compare_stats(sa: Any, sb: Any, tol: Tolerance) -> PairMetrics:
    """Compare two :class:`~mpsready.record.layout.TensorStats` (``sa`` expected).

    Passes when NaN/Inf counts agree and every statistic is within the bound that
    elementwise agreement would imply (module docstring). ``worst_ratio`` is the largest
    ``|Δstat| / bound``; ``stats_diff[stat]`` holds ``a``, ``b``, ``abs``, ``rel``
    (``|Δ| / |a|``) and ``bound``.
    """
    n = sa.numel
    one_sided = abs(sa.nan - sb.nan) + abs(sa.inf - sb.inf)
    diffs: dict[str, dict[str, float | None]] = {}
    worst = 0.0
    amax = max(abs(sa.min), abs(sa.max)) if sa.min is not None and sa.max is not None else None
    rms = sa.l2 / math.sqrt(n) if sa.l2 is not None and n else None
    c = math.sqrt(n / (n - 1)) if n > 1 else 1.0
    bounds = {
        "mean": None if amax is None else tol.atol + tol.rtol * amax,
        "min": None if amax is None else tol.atol + tol.rtol * amax,
        "max": None if amax is None else tol.atol + tol.rtol * amax,
        "l2": None if sa.l2 is None else math.sqrt(n) * tol.atol + tol.rtol * sa.l2,
        "std": None if rms is None else c * (tol.atol + tol.rtol * rms),
    }
    passed = one_sided == 0
    for stat in STATS:
        va, vb = getattr(sa, stat), getattr(sb, stat)
        if va is None or vb is None:
            if (va is None) != (vb is None):
                passed = False
                worst = math.inf
            diffs[stat] = {"a": va, "b": vb, "abs": None, "rel": None, "bound": bounds[stat]}
            continue
        ad = abs(vb - va)
        rel = ad / abs(va) if va != 0 else (0.0 if ad == 0 else math.inf)
        bound = bounds[stat]
        ratio = 0.0 if ad == 0 else (ad / bound if bound else math.inf)
        worst = max(worst, ratio)
        if ratio > 1.0:
            passed = False
        diffs[stat] = {"a": va, "b": vb, "abs": ad, "rel": rel, "bound": bound}
    if one_sided:
        worst = math.inf
    return PairMetrics(method="stats", numel=n, passed=passed, worst_ratio=worst, nan_a=sa.nan, inf_a=sa.inf,
                       nan_b=sb.nan, inf_b=sb.inf, one_sided_nonfinite=one_sided, stats_diff=diffs)
