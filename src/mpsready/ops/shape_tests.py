"""The shape tests of the judge's ``when`` clauses (mps_shape_limits.yaml, mps_dtype_checks.yaml): each takes the
clause's value and the call's :class:`~mpsready.ops.judge.CallFacts` and says whether the rule applies. Split
from :mod:`mpsready.ops.judge` (the module size limit); the judge imports them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpsready.ops.judge import CallFacts


def _arg(want: Mapping[str, Any], f: CallFacts) -> bool:
    return all((f.args or {}).get(k) == v for k, v in want.items())


def _ndim(want: Mapping[str, int], f: CallFacts) -> bool:
    return all((f.ndims or {}).get(k) == v for k, v in want.items())


def _size0_gt(want: Mapping[str, int], f: CallFacts) -> bool:
    return all((f.size0 or {}).get(k, 0) > v for k, v in want.items())


def _dim_beyond_minor4(flag: bool, f: CallFacts) -> bool:
    """The ``dim`` argument names an axis left of the last four of the first tensor argument (``dim < ndim - 4``
    after wrapping a negative dim): MPSNDArray's scan and sort kernels only handle the four minor axes."""
    dim = (f.args or {}).get("dim")
    if not isinstance(dim, int) or f.input_ndim < 5:
        return not flag
    if dim < 0:
        dim += f.input_ndim
    return (dim < f.input_ndim - 4) == bool(flag)


SHAPE_TESTS = ("arg", "ndim", "input_ndim", "input_ndim_gt", "dtype_in", "size0_gt", "out_numel_gt", "empty_input", "numel_gt",
               "dim_gt", "dim_beyond_minor4")
_SHAPE_TESTS = {
    "arg": _arg,
    "ndim": _ndim,
    "input_ndim": lambda n, f: f.input_ndim == n,
    "input_ndim_gt": lambda n, f: f.input_ndim > n,
    "dtype_in": lambda want, f: bool(f.dtypes) and f.dtypes[0] in want,
    "size0_gt": _size0_gt,
    "out_numel_gt": lambda n, f: f.out_numel > n,
    "empty_input": lambda flag, f: f.empty_input == bool(flag),
    "numel_gt": lambda n, f: f.numel0 > n,
    "dim_gt": lambda n, f: f.dim_max > n,
    "dim_beyond_minor4": _dim_beyond_minor4,
}
