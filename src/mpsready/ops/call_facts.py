"""The plain facts of one operator call that the judge may look at (:class:`CallFacts`). Split from
:mod:`mpsready.ops.judge` (the module size limit), which re-exports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class CallFacts:
    """What the judge may look at in one call, all plain values: ``dtypes`` of the tensor arguments in order
    (``"float32"``), ``out_dtypes`` of the results, ``sparse`` (a sparse tensor among them), ``ndims``/``size0``
    per tensor argument name of the schema, ``args`` (non-tensor arguments by name), ``out_numel``
    (elements of the first result, 0 if none), ``empty_input`` (a tensor argument with no elements; read for every op
    with an ``empty_input`` check, else only for the shape-rule ops)."""

    dtypes: tuple[str, ...] = ()
    out_dtypes: tuple[str, ...] = ()
    sparse: bool = False
    ndims: Mapping[str, int] | None = None
    size0: Mapping[str, int] | None = None
    args: Mapping[str, Any] | None = None
    out_numel: int = 0
    empty_input: bool = False
    input_ndim: int = -1  # dimensions of the first tensor argument (-1: none)
    numel0: int = 0  # elements of the first tensor argument (fed only for ops with a ``numel_gt`` check)
    dim_max: int = 0  # largest dimension size among the tensor arguments (fed only where one may pass INT_MAX)
    out_matrix: tuple[int, int] = (0, 0)  # (rows, cols) of one matrix of a bmm's or a linear's result
    inner: int = -1  # the size a linear contracts (its input's last dimension); -1: not read
    bytes_max: int = 0  # bytes of the largest tensor argument, fed only for tensors past 2**28 elements (size regime)
    # the first tensor argument is a non-contiguous view that is not a broadcast (ops.envelope.strided_view); fed
    # only for ops with an ``input_strided`` check (MPS kernels that flatten their input with a view)
    input_strided: bool = False
