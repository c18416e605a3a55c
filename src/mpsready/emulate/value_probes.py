"""The value conditions of the wrong-result classes (``data/curated/mps_wrong_classes.yaml``), read from a call's
tensors with every mode off, as the NaN watch reads them. Asked by :func:`mpsready.emulate.wrong_results._probe`
only once every other condition of a class holds, so a clean call of another op never pays for them. Each returns
whether the condition holds; a tensor it cannot read (a meta or sparse tensor, a dtype without the operation)
makes it False: an unread value never names a wrong result."""

from __future__ import annotations

import math

import torch

_Tensor = torch.Tensor
_FLOATING = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _readable(t) -> bool:
    return isinstance(t, _Tensor) and t.layout is torch.strided and t.device.type != "meta" and t.numel() > 0


def _first(ins) -> _Tensor | None:
    """The first tensor argument that can be read (a floating one), else None."""
    t = ins[0] if ins else None
    if not isinstance(t, _Tensor) or not _readable(t) or t.dtype not in _FLOATING:
        return None
    return t


def holds_nan(want, ins) -> bool:
    """``holds_nan``: a floating or complex tensor argument holds a NaN (MPS kernels that drop NaN: clamp,
    minimum/maximum, the max/min reductions, argmax/argmin; the releases per class)."""
    got = any(_readable(t) and (t.dtype in _FLOATING or t.is_complex()) and bool(torch.isnan(t).any()) for t in ins)
    return got == bool(want)


def row_variance_clamped(want, ins, argv) -> bool:
    """``row_variance_clamped: V`` for a layer norm (``input``, ``normalized_shape``, ..., ``eps``): some row over the
    normalized trailing dimensions has a variance below V, which the Metal kernel sets to 0, and above
    ``0.0201 * eps``, where rsqrt(eps) and rsqrt(var + eps) differ by more than 1 %. The variance is the two-pass
    one (what the CPU's result rests on). A row of variance 0 is right on MPS too (x - mean = 0)."""
    shape = argv.get("normalized_shape")
    eps = argv.get("eps")
    x = _first(ins)
    if x is None or not isinstance(shape, (list, tuple)) or not shape:
        return False
    eps = 1e-5 if eps is None else float(eps)
    n = math.prod(int(d) for d in shape)
    if n <= 0 or x.numel() % n:
        return False
    # in float32 (a half input upcast), two-pass: one reduction per layer norm call, what the op itself costs; the
    # thresholds are orders of magnitude above float32's rounding of a variance
    var = torch.var(x.detach().reshape(-1, n).float(), dim=1, unbiased=False)
    return bool(((var < float(want)) & (var > 0.0201 * eps)).any())


def signed_zero_or_tiny(want, ins) -> bool:
    """``signed_zero_or_tiny: E``: the first floating tensor argument holds a negative zero, or a nonzero value of
    magnitude at most E (exp(x) - 1 and log(1 + x), Inductor's generic decompositions of expm1 and log1p, lose the
    sign of -0.0 and, below 2**-20, most of the digits of the result)."""
    first = _first([t for t in ins if isinstance(t, _Tensor) and t.dtype in _FLOATING])
    if first is None:
        return False
    x = first.detach()
    zero = x == 0
    return bool((zero & torch.signbit(x)).any() or (~zero & (x.abs() <= float(want))).any())


def int_sum_overflows(want, ins, argv) -> bool:
    """``int_sum_overflows``: a sum into an integer ``dtype`` (the call's argument, else the input's) over ``dim``
    (all dimensions where absent) has an exact value outside that dtype's range (a kernel that saturates instead of
    wrapping is wrong there and only there; a sum that fits is right on every backend)."""
    x = ins[0] if ins else None
    if not isinstance(x, _Tensor) or not _readable(x) or x.is_floating_point() or x.is_complex():
        return False
    target = argv.get("dtype") or x.dtype
    if isinstance(target, str):
        target = getattr(torch, target, None)
    if not isinstance(target, torch.dtype) or target.is_floating_point or target.is_complex or target is torch.bool:
        return False
    dim = argv.get("dim")
    wide = x.detach().to(torch.int64)
    total = wide.sum() if dim is None or (isinstance(dim, (list, tuple)) and not dim) else wide.sum(dim=dim)
    info = torch.iinfo(target)
    return bool(((total > info.max) | (total < info.min)).any()) == bool(want)


def int_reduce_identity_wins(want, ins, argv, op: str) -> bool:
    """``int_reduce_identity_wins``: an integer amax (amin) over ``dim`` (every dimension where absent) has a slice
    whose length is not a multiple of 32 (a partial SIMD group, padded with 0) and whose values are all below
    (above) 0, so the padding wins; a slice holding 0 or a value of the other sign, or a whole number of groups,
    is right."""
    x = ins[0] if ins else None
    if not isinstance(x, _Tensor) or not _readable(x) or x.is_floating_point() or x.is_complex():
        return False
    dim = argv.get("dim")
    dims = list(range(x.dim())) if dim is None or (isinstance(dim, (list, tuple)) and not dim) else \
        [d % max(x.dim(), 1) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
    keep = [d for d in range(x.dim()) if d not in dims]
    length = math.prod(int(x.shape[d]) for d in dims) if x.dim() else 1
    if length % 32 == 0:
        return not want
    rows = x.detach().permute(*keep, *dims).reshape(-1, length) if x.dim() else x.reshape(1, 1)
    wins = (rows < 0).all(dim=1) if "amax" in op else (rows > 0).all(dim=1)
    return bool(wins.any()) == bool(want)


def probe(key: str, want, ins, argv, op: str = "") -> bool | None:
    """The class condition ``key`` (None: not one of these)."""
    if key == "holds_nan":
        return holds_nan(want, ins)
    if key == "row_variance_clamped":
        return row_variance_clamped(want, ins, argv)
    if key == "signed_zero_or_tiny":
        return signed_zero_or_tiny(want, ins)
    if key == "int_sum_overflows":
        return int_sum_overflows(want, ins, argv)
    if key == "int_reduce_identity_wins":
        return int_reduce_identity_wins(want, ins, argv, op)
    return None
