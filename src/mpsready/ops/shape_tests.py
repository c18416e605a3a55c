"""The shape tests of the judge's ``when`` clauses (mps_shape_limits.yaml, mps_dtype_checks.yaml): each takes the
clause's value and the call's :class:`~mpsready.ops.judge.CallFacts` and says whether the rule applies. Split
from :mod:`mpsready.ops.judge` (the module size limit); the judge imports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


_FLOAT_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
_INT_BITS = {"bool": 1, "uint8": 8, "int8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64,
             "uint64": 64}


def _promoted_differs(first: str, second: str) -> bool:
    """Whether PyTorch's type promotion of ``first`` and ``second`` (two tensors: torch.promote_types) gives a dtype
    other than ``second``: a floating ``first`` with an integral or bool ``second``, two floats where ``second`` is
    narrower or the other 16-bit float (float16 with bfloat16 promotes to float32), two integers where ``second``
    is narrower."""
    if first == second:
        return False
    if first in _FLOAT_BITS:
        if second not in _FLOAT_BITS:
            return True
        return _FLOAT_BITS[second] <= _FLOAT_BITS[first]
    if second in _FLOAT_BITS:
        return False
    return _INT_BITS.get(second, 0) < _INT_BITS.get(first, 0)


def _alpha_mixed(flag: bool, f: CallFacts) -> bool:
    """An ``alpha`` other than 1 with a second tensor operand whose dtype is not the promoted result's: MPS's
    add/sub graph multiplies that operand by alpha before casting it (pytorch#143932: multiply(f32, si64))."""
    alpha = (f.args or {}).get("alpha", 1)
    mixed = (alpha is not None and alpha != 1 and len(f.dtypes) >= 2
             and _promoted_differs(f.dtypes[0], f.dtypes[1]))
    return mixed == bool(flag)


def _alpha_self_promoted(flag: bool, f: CallFacts) -> bool:
    """An ``alpha`` other than 1 with a second tensor operand whose promotion with ``self`` gives a dtype other than
    ``self``'s: an in-place add whose result is cast back into a narrower ``self`` (float16 += float32 * alpha)."""
    alpha = (f.args or {}).get("alpha", 1)
    promoted = (alpha is not None and alpha != 1 and len(f.dtypes) >= 2
                and _promoted_differs(f.dtypes[1], f.dtypes[0]))
    return promoted == bool(flag)


def _dtypes_differ(flag: bool, f: CallFacts) -> bool:
    """The first two tensor arguments have different dtypes (no promotion: a kernel that compares the two dtypes,
    MPS's ``isin`` before 2.8)."""
    return (len(f.dtypes) >= 2 and f.dtypes[0] != f.dtypes[1]) == bool(flag)


def _bias_dtype_differs(flag: bool, f: CallFacts) -> bool:
    """A call with input, weight and bias (``linear``) whose input and weight share a dtype and whose bias has
    another: the matmul result keeps the input's dtype and meets the bias in one MPSGraph addition."""
    d = f.dtypes
    return (len(d) >= 3 and d[0] == d[1] and bool(d[2]) and d[2] != d[0]) == bool(flag)


SHAPE_TESTS = ("arg", "ndim", "input_ndim", "input_ndim_gt", "dtype_in", "size0_gt", "out_numel_gt", "empty_input", "numel_gt",
               "dim_gt", "dim_beyond_minor4", "alpha_mixed",
               "alpha_self_promoted", "dtypes_differ", "out_matrix_numel_gt", "inner_zero", "bias_dtype_differs",
               "bytes_gt", "input_strided")
_SHAPE_TESTS: dict[str, Callable[[Any, "CallFacts"], bool]] = {
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
    "alpha_mixed": _alpha_mixed,
    "alpha_self_promoted": _alpha_self_promoted,
    "dtypes_differ": _dtypes_differ,
    "out_matrix_numel_gt": lambda n, f: f.out_matrix[0] * f.out_matrix[1] > n,
    # a linear over an empty feature axis (in_features 0) whose result is not empty
    "inner_zero": lambda flag, f: (f.inner == 0 and f.out_matrix[0] * f.out_matrix[1] > 0) == bool(flag),
    "bias_dtype_differs": _bias_dtype_differs,
    # the largest tensor argument takes more than N bytes (fed where one has more than 2**28 elements: bytes_max)
    "bytes_gt": lambda n, f: f.bytes_max > n,
    # the first tensor argument is a strided view (not a broadcast): a kernel that flattens it with a view
    "input_strided": lambda flag, f: f.input_strided == bool(flag),
}
